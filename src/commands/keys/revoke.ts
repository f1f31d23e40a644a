import {Args, Flags} from '@oclif/core'

import {EngramCommand, passphraseFileFlag} from '../../cli/base.js'
import {revokeKey} from '../../core/trust/keyops.js'
import {Store} from '../../core/store/store.js'

export default class KeysRevoke extends EngramCommand {
  static override ownerOnly = true
  static override summary = 'Revoke a key: its signatures and endorsements stop counting. Recorded and committed.'
  static override description = 'Memory signed by a revoked key is no longer served; re-accept or restore it with a trusted owner key.'
  static override examples = ['<%= config.bin %> keys revoke bob --reason "laptop lost"', '<%= config.bin %> keys revoke old --reason rotated --keep new']
  static override args = {name: Args.string({description: 'key name or key id', required: true})}
  static override flags = {'passphrase-file': passphraseFileFlag, 
    reason: Flags.string({description: 'why (kept in the record and the commit)', required: true}),
    keep: Flags.string({description: 'a key this one endorsed that stays trusted (repeatable)', multiple: true}),
    key: Flags.string({description: 'your owner key name'}),
    force: Flags.boolean({description: 'revoke even when no trusted owner key would remain', default: false}),
  }

  async run() {
    const {args, flags} = await this.parse(KeysRevoke)
    const store = await Store.open(flags.base)
    const r = await revokeKey(store, args.name, {reason: flags.reason, keep: flags.keep, keyName: flags.key, force: flags.force})
    if (!this.jsonEnabled()) this.log(`revoked ${r.name} (${r.keyid}), commit ${r.commit?.slice(0, 10)}`)
    return r
  }
}
