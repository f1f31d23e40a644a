import {Args} from '@oclif/core'

import {EngramCommand, fullFlag, sessionFlag} from '../../cli/base.js'
import {showEntryChecked} from '../../core/review/review.js'
import {currentSession} from '../../core/session/sessions.js'
import {Store} from '../../core/store/store.js'
import {renderEntry} from '../../cli/render.js'

export default class ReviewShow extends EngramCommand {
  static override summary = 'Show a proposal: flags, votes, the fields that change and the diff of the body (--full: of the whole file), and the digest to accept.'
  static override examples = ['<%= config.bin %> review show 7f3k', '<%= config.bin %> review show 7f3k --full', '<%= config.bin %> review show 7f3k --json | jq -r .digest']
  static override args = {id: Args.string({description: 'proposal id or unambiguous prefix', required: true})}
  static override flags = {full: fullFlag, session: sessionFlag}

  async run() {
    const {args, flags} = await this.parse(ReviewShow)
    const store = await Store.open(flags.base)
    const session = await currentSession(store, flags.session)
    const e = await showEntryChecked(store, 'pending', args.id, session)
    if (!this.jsonEnabled()) this.logRendered(await renderEntry(e, {full: flags.full}))
    return {...e.proposal, digest: e.digest, stale: e.stale, currentBase: e.currentBase, baseText: e.baseText, proposedText: e.proposedText, unrecordedFlags: e.unrecordedFlags, recheck: e.recheck}
  }
}
