import {Args, Flags} from '@oclif/core'

import {EngramCommand, fullFlag, sessionFlag} from '../../cli/base.js'
import {notFound} from '../../core/store/errors.js'
import {listQueue, showEntryChecked} from '../../core/review/review.js'
import {currentSession} from '../../core/session/sessions.js'
import {Store} from '../../core/store/store.js'
import {renderEntry} from '../../cli/render.js'
import {listEnvelope} from '../../cli/list.js'

export default class PendingShow extends EngramCommand {
  static override summary = 'Show the pending write to a path (optionally by one session), with its diff and digest.'
  static override examples = ['<%= config.bin %> pending show --scope tenant:acme billing.md s-01abcd']
  static override args = {
    path: Args.string({description: 'memory path inside the scope', required: true}),
    session: Args.string({description: 'the writing session (when several are pending for the path)'}),
  }
  static override flags = {scope: Flags.string({description: 'scope', required: true}), full: fullFlag, session: sessionFlag}

  async run() {
    const {args, flags} = await this.parse(PendingShow)
    const store = await Store.open(flags.base)
    const session = await currentSession(store, flags.session)
    const matches = listQueue(store, 'pending', {scope: flags.scope, session}).items.filter(
      (i) => i.path === args.path && (!args.session || i.session === args.session),
    )
    if (matches.length === 0) throw notFound(`Nothing pending for ${args.path} in ${flags.scope}${args.session ? ` from ${args.session}` : ''}.`, 'see `engram pending list`')
    const shown = await Promise.all(matches.map((m) => showEntryChecked(store, 'pending', m.id, session)))
    if (!this.jsonEnabled()) for (const e of shown) this.logRendered(`${await renderEntry(e, {full: flags.full})}\n`)
    // several sessions may have a write pending for one path: a list, in the list envelope
    return listEnvelope(shown.map((e) => ({...e.proposal, digest: e.digest, stale: e.stale, unrecordedFlags: e.unrecordedFlags, flagsUnchecked: e.flagsUnchecked, recheck: e.recheck})))
  }
}
