import {Args, Flags} from '@oclif/core'

import {EngramCommand, passphraseFileFlag} from '../../cli/base.js'
import {rejectEntry} from '../../core/review/review.js'
import {Store} from '../../core/store/store.js'

export default class ReviewReject extends EngramCommand {
  static override ownerOnly = true
  static override summary = 'Reject a proposal, recording who and why.'
  static override examples = ['<%= config.bin %> review reject 7f3k --reason "not a fact"']
  static override args = {id: Args.string({description: 'proposal id or unambiguous prefix', required: true})}
  static override flags = {'passphrase-file': passphraseFileFlag, 
    reason: Flags.string({description: 'why (kept in the commit)', required: true}),
    key: Flags.string({description: 'owner key name'}),
  }

  async run() {
    const {args, flags} = await this.parse(ReviewReject)
    const store = await Store.open(flags.base)
    const r = await rejectEntry(store, 'pending', args.id, flags.reason, {keyName: flags.key})
    if (!this.jsonEnabled()) {
      const what = r.scope === null ? 'an unreadable entry' : `${r.scope}/${r.path}`
      this.log(`rejected ${r.id}: ${what}${r.never_committed ? ' (the entry was never committed: its file is removed, no commit made)' : ''}`)
    }
    return r
  }
}
