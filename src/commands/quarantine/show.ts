import {Args} from '@oclif/core'

import {EngramCommand, fullFlag, sessionFlag} from '../../cli/base.js'
import {showEntryChecked} from '../../core/review/review.js'
import {currentSession} from '../../core/session/sessions.js'
import {Store} from '../../core/store/store.js'
import {renderEntry} from '../../cli/render.js'

export default class QuarantineShow extends EngramCommand {
  static override summary = 'Show a quarantined write: its (redacted) content, flags, votes and digest.'
  static override examples = ['<%= config.bin %> quarantine show q-4k2']
  static override args = {id: Args.string({description: 'quarantine id or unambiguous prefix', required: true})}
  static override flags = {full: fullFlag, session: sessionFlag}

  async run() {
    const {args, flags} = await this.parse(QuarantineShow)
    const store = await Store.open(flags.base)
    const session = await currentSession(store, flags.session)
    const e = await showEntryChecked(store, 'quarantined', args.id, session)
    if (!this.jsonEnabled()) this.logRendered(await renderEntry(e, {full: flags.full}))
    return {...e.proposal, digest: e.digest, stale: e.stale, unrecordedFlags: e.unrecordedFlags, flagsUnchecked: e.flagsUnchecked, recheck: e.recheck}
  }
}
