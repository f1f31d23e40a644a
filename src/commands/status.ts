import {EngramCommand} from '../cli/base.js'
import {currentSession} from '../core/session/sessions.js'
import {storeStatus} from '../core/store/status.js'
import {Store} from '../core/store/store.js'
import {visible} from '../cli/render.js'

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
      if (s.broken > 0) this.log(`broken entries: ${s.broken} (named by \`engram review list\` and \`engram quarantine list\`)`)
      // an author's escalation has no session ('-'): its reason names the author
      for (const e of s.escalations) this.log(visible(`ESCALATED${e.session === '-' ? ':' : ` session ${e.session} (${e.agent}):`} ${e.reason.replace(/^escalated: /, '')}`))
      if (s.config.state === 'unsigned') this.log(visible(`CONFIG NOT SIGNED: .engram/config.yml is not in force (${s.config.problem}); in force: ${s.config.source}${s.config.serial ? ` (serial ${s.config.serial})` : ''}`))
      else this.log(`config: ${s.config.state === 'signed' ? `signed (serial ${s.config.serial})` : 'built-in defaults (never signed)'}`)
      const id = s.identity
      if (id?.problem) this.log(visible(`IDENTITY ${id.state === 'unbound' ? 'NOT BOUND' : 'FILE CHANGED'}: ${id.problem}`))
      else if (id?.id) this.log(`identity: ${id.id} (pinned on this machine)`)
    }
    return s
  }
}
