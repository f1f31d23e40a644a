import {Args, Flags} from '@oclif/core'

import {EngramCommand, fullFlag, sessionFlag} from '../../cli/base.js'
import {listDecisions} from '../../core/review/decided.js'
import {showEntryChecked} from '../../core/review/review.js'
import {EngramError} from '../../core/store/errors.js'
import {currentSession, SessionRecord} from '../../core/session/sessions.js'
import {Store} from '../../core/store/store.js'
import {page} from '../../cli/pager.js'
import {renderEntry} from '../../cli/render.js'

export default class ReviewShow extends EngramCommand {
  static override summary = 'Show a proposal: flags, votes, the fields that change and the diff of the body (--full: of the whole file), and the digest to accept.'
  static override description = 'An id no longer in the queue is looked up in the history: the error says when it was accepted or rejected, and by whom, as the commit says.'
  static override examples = ['<%= config.bin %> review show 7f3k', '<%= config.bin %> review show 7f3k --full', '<%= config.bin %> review show 7f3k --json | jq -r .digest']
  static override args = {id: Args.string({description: 'proposal id or unambiguous prefix', required: true})}
  static override flags = {full: fullFlag, session: sessionFlag, 'no-pager': Flags.boolean({description: 'print straight to the terminal (default: $ENGRAM_PAGER, $PAGER or less -FRX when stdout is a terminal)'})}

  async run() {
    const {args, flags} = await this.parse(ReviewShow)
    const store = await Store.open(flags.base)
    const session = await currentSession(store, flags.session)
    let e
    try {
      e = await showEntryChecked(store, 'pending', args.id, session)
    } catch (error) {
      if (error instanceof EngramError && error.code === 'not-found') throw await decidedError(store, args.id, session, error)
      throw error
    }
    if (!this.jsonEnabled()) {
      const text = await renderEntry(e, {full: flags.full})
      if (flags['no-pager'] || !page(text)) this.logRendered(text)
    }
    return {...e.proposal, digest: e.digest, stale: e.stale, currentBase: e.currentBase, baseText: e.baseText, proposedText: e.proposedText, unrecordedFlags: e.unrecordedFlags, flagsUnchecked: e.flagsUnchecked, recheck: e.recheck, removed: e.removed, signer: e.signer}
  }
}

/** "No proposal X" says what became of X when the history knows (still exit 4: it is not in the queue). */
async function decidedError(store: Store, id: string, session: SessionRecord | undefined, original: EngramError): Promise<EngramError> {
  const [d] = await listDecisions(store, {id, session})
  if (!d) return original
  const what = d.scope && d.path ? ` (${d.scope}/${d.path})` : ''
  const by = d.reviewer ? ` by ${d.reviewer}` : ''
  const why = d.reason ? `; reason: ${d.reason}` : ''
  return new EngramError('not-found', `Proposal ${d.id}${what} is no longer in the queue: ${d.decision} ${d.date}${by}, commit ${d.commit.slice(0, 10)}${why} (as that commit says).`, {
    nextStep: d.decision === 'accepted' && d.scope && d.path ? `see \`engram history ${d.path} --scope ${d.scope}\`` : 'see `engram review list --decided`',
    data: {decision: d},
  })
}
