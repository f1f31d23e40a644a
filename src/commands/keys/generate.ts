import {Args, Flags} from '@oclif/core'

import {EngramCommand} from '../../base.js'
import {usageError} from '../../core/errors.js'
import {generateKey} from '../../core/keyops.js'

export default class KeysGenerate extends EngramCommand {
  static override summary = 'Make a key pair: the private half 0600 in your key folder, the public record to give an owner.'
  static override description =
    'The private key goes to $ENGRAM_CONFIG_DIR/keys/<name>.key (default ~/.config/engram/keys) and is never overwritten without --force. ' +
    'The public record is printed (or written to --out); an owner makes it count with `engram keys trust`.'
  static override examples = ['<%= config.bin %> keys generate --name bob --out bob.pub', '<%= config.bin %> keys generate bob']
  static override args = {name: Args.string({description: 'key name (or --name)'})}
  static override flags = {
    name: Flags.string({description: 'key name: lowercase letters, digits, . _ -'}),
    out: Flags.string({description: 'also write the public record to this file'}),
    force: Flags.boolean({description: 'replace an existing private key (the old one is lost) or --out file', default: false}),
  }

  async run() {
    const {args, flags} = await this.parse(KeysGenerate)
    if (args.name && flags.name && args.name !== flags.name) throw usageError('Give the key name once (argument or --name).')
    const name = flags.name ?? args.name
    if (!name) throw usageError('A key name is required.', 'e.g. `engram keys generate --name bob`')
    const r = generateKey(name, {force: flags.force, out: flags.out})
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
