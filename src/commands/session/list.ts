import {EngramCommand} from '../../cli/base.js'
import {limitFlag, listEnvelope, moreLine, table} from '../../cli/list.js'
import {currentSession, listSessions} from '../../core/session/sessions.js'
import {Store} from '../../core/store/store.js'

export default class SessionList extends EngramCommand {
  static override summary = 'List sessions, newest first (inside a session: only that session).'
  static override examples = ['<%= config.bin %> session list', '<%= config.bin %> session list --limit 5 --json']
  static override flags = {limit: limitFlag}

  async run() {
    const {flags} = await this.parse(SessionList)
    const store = await Store.open(flags.base)
    const sessions = await listSessions(store, await currentSession(store))
    const out = listEnvelope(sessions.map(({proof: _proof, ...s}) => s), {}, flags.limit)
    if (!this.jsonEnabled()) {
      for (const line of table(['ID', 'AGENT', 'ASSIGNED', 'TAINT', 'CREATED'], out.items.map((s) => [s.id, s.agent, s.assigned, s.tainted ? 'tainted' : 'clean', s.created]))) this.log(line)
      if (out.total === 0) this.note('no sessions')
      const more = moreLine(out.items.length, out.total)
      if (more) this.note(more)
    }
    return out
  }
}
