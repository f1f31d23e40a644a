import {EngramCommand} from '../../cli/base.js'
import {currentSession, listSessions} from '../../core/session/sessions.js'
import {Store} from '../../core/store/store.js'

export default class SessionList extends EngramCommand {
  static override summary = 'List sessions, newest first (inside a session: only that session).'
  static override examples = ['<%= config.bin %> session list', '<%= config.bin %> session list --json']

  async run() {
    const {flags} = await this.parse(SessionList)
    const store = await Store.open(flags.base)
    const sessions = await listSessions(store, await currentSession(store))
    if (!this.jsonEnabled()) {
      for (const s of sessions) this.log(`${s.id}\t${s.agent}\t${s.assigned}\t${s.tainted ? 'tainted' : 'clean'}\t${s.created}`)
      if (sessions.length === 0) this.note('no sessions')
    }
    return {sessions: sessions.map(({proof: _proof, ...s}) => s)}
  }
}
