import {Args, Flags} from '@oclif/core'

import {EngramCommand, passphraseFileFlag} from '../../cli/base.js'
import {rejectEntry} from '../../core/review/review.js'
import {Store} from '../../core/store/store.js'

export default class QuarantinePurge extends EngramCommand {
  static override ownerOnly = true
  static override summary = 'Remove a quarantined write (owner); the commit records who and why, history keeps the audit trail.'
  static override examples = ['<%= config.bin %> quarantine purge q-4k2 --reason "phishing"']
  static override args = {id: Args.string({description: 'quarantine id or unambiguous prefix', required: true})}
  static override flags = {'passphrase-file': passphraseFileFlag, reason: Flags.string({description: 'why', required: true}), key: Flags.string({description: 'owner key name'})}

  async run() {
    const {args, flags} = await this.parse(QuarantinePurge)
    const store = await Store.open(flags.base)
    const r = await rejectEntry(store, 'quarantined', args.id, flags.reason, {keyName: flags.key})
    if (!this.jsonEnabled()) this.log(`purged ${r.id}`)
    return r
  }
}
