import {Args, Flags} from '@oclif/core'

import {EngramCommand, passphraseFileFlag} from '../../cli/base.js'
import {usageError} from '../../core/store/errors.js'
import {MAX_KEY_RECORD_BYTES, pinStoreRoot, readKeyInput, trustKey} from '../../core/trust/keyops.js'
import {readUpTo} from '../../core/store/content.js'
import {KEY_ROLES} from '../../core/trust/keys.js'
import {Store} from '../../core/store/store.js'
import {visible} from '../../cli/render.js'

/** stdin, up to one byte past a key record's bound (readKeyInput refuses a longer one). */
async function readStdin(): Promise<string> {
  return (await readUpTo(process.stdin, MAX_KEY_RECORD_BYTES + 1)).bytes.toString('utf8')
}

export default class KeysTrust extends EngramCommand {
  static override ownerOnly = true
  static override summary = 'Trust a public key with a role (owner or dreamer), endorsed by your owner key and committed; or pin the store\'s root key on this machine (--root).'
  static override description =
    'With --root <fingerprint>: pin this store\'s root owner key on this machine (a fresh clone serves no curated memory until its root is pinned). ' +
    'Check the fingerprint with the store\'s owner first; it is the full SHA-256 of the key, as `engram keys list --json` shows it.'
  static override examples = [
    '<%= config.bin %> keys trust bob.pub --role owner',
    '<%= config.bin %> keys trust dreamer.pub --role dreamer --name nightly',
    '<%= config.bin %> keys trust --root 3f1c…(64 hex digits)',
  ]
  static override args = {file: Args.string({description: 'the .pub record from `engram keys generate`, or - for stdin'})}
  static override flags = {
    'passphrase-file': passphraseFileFlag,
    role: Flags.string({description: 'what the key may do', options: [...KEY_ROLES]}),
    name: Flags.string({description: 'name to record it under (default: the name in the record)'}),
    key: Flags.string({description: 'your owner key name (default: ENGRAM_KEY or the only key in your key folder)'}),
    root: Flags.string({description: 'pin the store\'s root key with this fingerprint on this machine', exclusive: ['role', 'name', 'key']}),
  }

  async run() {
    const {args, flags} = await this.parse(KeysTrust)
    const store = await Store.open(flags.base)
    if (flags.root !== undefined) {
      if (args.file !== undefined) throw usageError('--root takes no key file.', 'run `engram keys trust --root <fingerprint>`')
      const r = await pinStoreRoot(store, flags.root)
      if (!this.jsonEnabled()) {
        this.log(r.changed ? `pinned ${r.name} (${r.keyid}) as the root of ${r.store} on this machine` : `${r.name} (${r.keyid}) is already pinned as a root of ${r.store}`)
        if (r.store_id) this.log(`store identity: ${r.store_id} (\`engram status\` where the store was made shows the same)`)
        if (r.also_pinned_for.length > 0) this.warnLine(visible(`store identity ${r.store_id} is also pinned on this machine for ${r.also_pinned_for.join(', ')}: right if that is another clone of this store, wrong for any other store (README "Store identity")`))
      }
      return r
    }
    if (args.file === undefined) throw usageError('Give the public key to trust, or --root <fingerprint>.', 'e.g. `engram keys trust bob.pub --role owner`')
    if (flags.role === undefined) throw usageError('--role is required: owner or dreamer.', 'e.g. `engram keys trust bob.pub --role owner`')
    const input = readKeyInput(args.file, args.file === '-' ? await readStdin() : undefined)
    const r = await trustKey(store, input, {role: flags.role, name: flags.name, keyName: flags.key})
    if (!this.jsonEnabled()) {
      this.log(r.changed ? `trusted ${r.name} (${r.keyid}) as ${r.role}, commit ${r.commit?.slice(0, 10)}` : `${r.name} (${r.keyid}) is already trusted as ${r.role}`)
    }
    return r
  }
}
