import {Flags} from '@oclif/core'

import {EngramCommand, sessionFlag} from '../../cli/base.js'
import {limitFlag, listEnvelope, moreLine, table} from '../../cli/list.js'
import {listQueue} from '../../core/review/review.js'
import {currentSession} from '../../core/session/sessions.js'
import {Store} from '../../core/store/store.js'

export default class QuarantineList extends EngramCommand {
  static override summary = 'List writes the vote refused, newest first.'
  static override examples = ['<%= config.bin %> quarantine list', '<%= config.bin %> quarantine list --scope tenant:acme --json']
  static override flags = {scope: Flags.string({description: 'only this scope'}), limit: limitFlag, session: sessionFlag}

  async run() {
    const {flags} = await this.parse(QuarantineList)
    const store = await Store.open(flags.base)
    const session = await currentSession(store, flags.session)
    const q = listQueue(store, 'quarantined', {scope: flags.scope, session})
    const out = listEnvelope(q.items, {broken: q.broken}, flags.limit)
    if (!this.jsonEnabled()) {
      for (const line of table(['ID', 'MEMORY', 'AUTHOR', 'ORIGIN', 'VOTE'], out.items.map((i) => [i.id, `${i.scope}/${i.path}`, i.author, i.origin, i.vote?.summary ?? '']))) this.log(line)
      if (out.total === 0) this.note('quarantine is empty')
      const more = moreLine(out.items.length, out.total)
      if (more) this.note(more)
      for (const b of q.broken) this.warnLine(`${b.file}: ${b.error}`)
    }
    return out
  }
}
