import {Args, Flags} from '@oclif/core'

import {EngramCommand, passphraseFileFlag} from '../../cli/base.js'
import {syncAfter, syncFlag, syncLine} from '../../cli/sync.js'
import {acceptProposal} from '../../core/review/review.js'
import {Store} from '../../core/store/store.js'

export default class ReviewAccept extends EngramCommand {
  static override ownerOnly = true
  static override summary = 'Accept exactly the change you reviewed: give the digest that `review show` printed.'
  static override description = 'Needs an owner key. Refuses (exit 6) when the proposal or the file it changes moved since the review.'
  static override examples = ['<%= config.bin %> review accept 7f3k --digest 9c1e4b7a0d2f8e31']
  static override args = {id: Args.string({description: 'proposal id or unambiguous prefix', required: true})}
  static override flags = {'passphrase-file': passphraseFileFlag, 
    digest: Flags.string({description: 'the reviewed digest (at least 16 hex characters)', required: true}),
    key: Flags.string({description: 'owner key name (default: ENGRAM_KEY or the only key in your key folder)'}),
    sync: syncFlag,
  }

  async run() {
    const {args, flags} = await this.parse(ReviewAccept)
    const store = await Store.open(flags.base)
    const r = await acceptProposal(store, args.id, flags.digest, {keyName: flags.key})
    if (!this.jsonEnabled()) this.log(`accepted ${r.id}: ${r.operation} ${r.scope}/${r.path}${r.version ? ` v${r.version}` : ''}, signed by ${r.reviewed_by}, commit ${r.commit?.slice(0, 10)}`)
    if (flags.sync) {
      const synced = await syncAfter(store, `accepted ${r.id}`, flags.key)
      this.note(syncLine(synced))
      return {...r, sync: synced}
    }
    return r
  }
}
