import {Args, Flags} from '@oclif/core'

import {EngramCommand} from '../../base.js'
import {readKeyInput, trustKey} from '../../core/keyops.js'
import {KEY_ROLES} from '../../core/keys.js'
import {Store} from '../../core/store.js'

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = []
  for await (const c of process.stdin) chunks.push(c as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

export default class KeysTrust extends EngramCommand {
  static override ownerOnly = true
  static override summary = 'Trust a public key with a role (owner or dreamer), endorsed by your owner key and committed.'
  static override examples = ['<%= config.bin %> keys trust bob.pub --role owner', '<%= config.bin %> keys trust dreamer.pub --role dreamer --name nightly']
  static override args = {file: Args.string({description: 'the .pub record from `engram keys generate`, or - for stdin', required: true})}
  static override flags = {
    role: Flags.string({description: 'what the key may do', options: [...KEY_ROLES], required: true}),
    name: Flags.string({description: 'name to record it under (default: the name in the record)'}),
    key: Flags.string({description: 'your owner key name (default: ENGRAM_KEY or the only key in your key folder)'}),
  }

  async run() {
    const {args, flags} = await this.parse(KeysTrust)
    const store = await Store.open(flags.base)
    const input = readKeyInput(args.file, args.file === '-' ? await readStdin() : undefined)
    const r = await trustKey(store, input, {role: flags.role, name: flags.name, keyName: flags.key})
    if (!this.jsonEnabled()) {
      this.log(r.changed ? `trusted ${r.name} (${r.keyid}) as ${r.role}, commit ${r.commit?.slice(0, 10)}` : `${r.name} (${r.keyid}) is already trusted as ${r.role}`)
    }
    return r
  }
}
