import {EngramCommand} from '../base.js'
import {currentSession} from '../core/sessions.js'
import {storeStatus} from '../core/status.js'
import {Store} from '../core/store.js'
import {visible} from '../render.js'

export default class Status extends EngramCommand {
  static override summary = 'Show the store: scopes, review queue, quarantine, sessions, and escalations that need the owner (inside a session: only what it may read).'
  static override examples = ['<%= config.bin %> status', '<%= config.bin %> status --json']

  async run() {
    const {flags} = await this.parse(Status)
    const store = await Store.open(flags.base)
    const s = await storeStatus(store, await currentSession(store))
    if (!this.jsonEnabled()) {
      this.log(`store ${s.root}`)
      this.log(`scopes: ${s.scopes.map((x) => `${x.scope} (${x.files})`).join(', ') || 'none'}`)
      this.log(`review queue: ${s.pending} pending; quarantine: ${s.quarantined}`)
      this.log(`sessions: ${s.sessions} (${s.tainted_sessions} tainted)`)
      for (const e of s.escalations) this.log(visible(`ESCALATED ${e.session} (${e.agent}): ${e.reason}`))
    }
    return s
  }
}
