import {Flags} from '@oclif/core'

import {EngramCommand, sessionFlag} from '../../cli/base.js'
import {limitFlag, listEnvelope, moreLine, table} from '../../cli/list.js'
import {listQueue} from '../../core/review/review.js'
import {currentSession} from '../../core/session/sessions.js'
import {Store} from '../../core/store/store.js'

export default class PendingList extends EngramCommand {
  static override summary = 'Agent writes awaiting promotion (the review queue, by path and session).'
  static override examples = ['<%= config.bin %> pending list --scope tenant:acme', '<%= config.bin %> pending list --json']
  static override flags = {scope: Flags.string({description: 'only this scope'}), limit: limitFlag, session: sessionFlag}

  async run() {
    const {flags} = await this.parse(PendingList)
    const store = await Store.open(flags.base)
    const session = await currentSession(store, flags.session)
    const q = listQueue(store, 'pending', {scope: flags.scope, session})
    const out = listEnvelope(q.items, {broken: q.broken}, flags.limit)
    if (!this.jsonEnabled()) {
      for (const line of table(['SCOPE', 'PATH', 'SESSION', 'ID', 'CREATED'], out.items.map((i) => [i.scope, i.path, i.session ?? '-', i.id, i.created]))) this.log(line)
      if (out.total === 0) this.note('nothing pending')
      const more = moreLine(out.items.length, out.total)
      if (more) this.note(more)
      for (const b of q.broken) this.warnLine(`${b.file}: ${b.error}`)
    }
    return out
  }
}
