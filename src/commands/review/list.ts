import {Flags} from '@oclif/core'

import {EngramCommand, sessionFlag} from '../../cli/base.js'
import {limitFlag, listEnvelope, moreLine, QUEUE_HEADER, queueRows, table} from '../../cli/list.js'
import {listDecisions} from '../../core/review/decided.js'
import {listQueue} from '../../core/review/review.js'
import {currentSession} from '../../core/session/sessions.js'
import {Store} from '../../core/store/store.js'


export default class ReviewList extends EngramCommand {
  static override summary = 'List the review queue, newest first.'
  static override examples = ['<%= config.bin %> review list', '<%= config.bin %> review list --scope tenant:acme --json', '<%= config.bin %> review list --limit 10', '<%= config.bin %> review list --decided --limit 20']
  static override flags = {
    scope: Flags.string({description: 'only this scope'}),
    decided: Flags.boolean({description: 'list the decided proposals instead (accepted, rejected), newest first, as the history\'s commits say'}),
    limit: limitFlag,
    session: sessionFlag,
  }

  async run() {
    const {flags} = await this.parse(ReviewList)
    const store = await Store.open(flags.base)
    const session = await currentSession(store, flags.session)
    if (flags.decided) {
      const all = (await listDecisions(store, {session})).filter((d) => !flags.scope || d.scope === flags.scope)
      const out = listEnvelope(all, {}, flags.limit)
      if (!this.jsonEnabled()) {
        const rows = out.items.map((d) => [d.id, d.decision, d.scope && d.path ? `${d.scope}/${d.path}` : '-', d.date, d.reviewer ?? '-', d.reason ?? ''])
        for (const line of table(['ID', 'DECISION', 'MEMORY', 'DATE', 'REVIEWER', 'REASON'], rows)) this.log(line)
        if (out.total === 0) this.note('nothing decided yet')
        const more = moreLine(out.items.length, out.total)
        if (more) this.note(more)
      }
      return out
    }
    const q = listQueue(store, 'pending', {scope: flags.scope, session})
    const out = listEnvelope(q.items, {broken: q.broken}, flags.limit)
    if (!this.jsonEnabled()) {
      for (const line of table(QUEUE_HEADER, queueRows(out.items))) this.log(line)
      if (out.total === 0) this.note('the review queue is empty')
      const more = moreLine(out.items.length, out.total)
      if (more) this.note(more)
      for (const b of q.broken) this.warnLine(`${b.file}: ${b.error}`)
    }
    return out
  }
}
