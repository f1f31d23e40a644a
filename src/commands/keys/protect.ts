import {Args} from '@oclif/core'

import {EngramCommand, passphraseFileFlag} from '../../cli/base.js'
import {protectPrivateKey} from '../../core/trust/privatekey.js'

export default class KeysProtect extends EngramCommand {
  static override ownerOnly = true
  static override summary = 'Encrypt an unencrypted private key with a passphrase (same key, same trust; only its file changes).'
  static override description =
    'Keys made before engram 0.2.0 lie unencrypted in your key folder: any process running as you can copy them. ' +
    'This encrypts one in place (scrypt + ChaCha20-Poly1305), with a passphrase typed twice at the terminal or read from --passphrase-file. ' +
    'A key already encrypted is left as it is. Refused inside an agent session.'
  static override examples = ['<%= config.bin %> keys protect owner']
  static override args = {name: Args.string({description: 'key name', required: true})}
  static override flags = {'passphrase-file': passphraseFileFlag}

  async run() {
    const {args} = await this.parse(KeysProtect)
    const r = await protectPrivateKey(args.name)
    this.note(r.changed ? `private key ${r.name} (${r.keyid}) in ${r.file} is now encrypted` : `private key ${r.name} (${r.keyid}) in ${r.file} was already encrypted; nothing changed`)
    return r
  }
}
