import {Args, Flags} from '@oclif/core'

import {EngramCommand, passphraseFileFlag} from '../../cli/base.js'
import {usageError} from '../../core/store/errors.js'
import {generateKey} from '../../core/trust/keyops.js'

export default class KeysGenerate extends EngramCommand {
  static override ownerOnly = true
  static override summary = 'Make a key pair: the private half encrypted with a passphrase in your key folder, the public record to give an owner.'
  static override description =
    'The private key goes to $ENGRAM_CONFIG_DIR/keys/<name>.key (default ~/.config/engram/keys), encrypted with a passphrase asked at the terminal ' +
    '(or read from --passphrase-file). An existing key is replaced only with --force and its name typed at the terminal to confirm. ' +
    'The public record is printed, or written to --out: a new *.pub file outside every store and outside the key and trust folders. ' +
    'An owner makes it count with `engram keys trust`. Refused inside an agent session.'
  static override examples = ['<%= config.bin %> keys generate --name bob --out bob.pub', '<%= config.bin %> keys generate bob']
  static override args = {name: Args.string({description: 'key name (or --name)'})}
  static override flags = {'passphrase-file': passphraseFileFlag, 
    name: Flags.string({description: 'key name: lowercase letters, digits, . _ -'}),
    out: Flags.string({description: 'write the public record to this new *.pub file (never over an existing file, never inside a store)'}),
    force: Flags.boolean({description: 'replace an existing private key (the old one is lost): confirmed by typing its name at the terminal', default: false}),
  }

  async run() {
    const {args, flags} = await this.parse(KeysGenerate)
    if (args.name && flags.name && args.name !== flags.name) throw usageError('Give the key name once (argument or --name).')
    const name = flags.name ?? args.name
    if (!name) throw usageError('A key name is required.', 'e.g. `engram keys generate --name bob`')
    const r = await generateKey(name, {force: flags.force, out: flags.out})
    if (!this.jsonEnabled()) {
      if (!r.publicKeyFile) process.stdout.write(r.record)
      this.note(`private key ${r.name} (${r.keyid}) written to ${r.privateKeyFile}${r.publicKeyFile ? `; public record in ${r.publicKeyFile}` : ''}`)
      // the record is on stdout unless --out wrote it: name only a file that exists; one role, not a shell pipe
      if (r.publicKeyFile) this.note(`an owner trusts it with: engram keys trust ${r.publicKeyFile} --role owner   (or --role dreamer)`)
      else this.note(`an owner trusts it with: save the record above as ${r.name}.pub, then engram keys trust ${r.name}.pub --role owner   (or --role dreamer)`)
    }
    return r
  }
}
