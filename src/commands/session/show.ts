import {Args} from '@oclif/core'

import {EngramCommand} from '../../cli/base.js'
import {currentSession, loadSessionFor} from '../../core/session/sessions.js'
import {Store} from '../../core/store/store.js'

export default class SessionShow extends EngramCommand {
  static override summary = 'Show one session record (inside a session: only that session; any other id reads as unknown).'
  static override examples = ['<%= config.bin %> session show $ENGRAM_SESSION', '<%= config.bin %> session show s-7f3kq2ab --json']
  static override args = {id: Args.string({description: 'session id', required: true})}

  async run() {
    const {args, flags} = await this.parse(SessionShow)
    const store = await Store.open(flags.base)
    const {proof: _proof, ...s} = await loadSessionFor(store, args.id, await currentSession(store))
    if (!this.jsonEnabled()) {
      this.log(`${s.id}  agent ${s.agent}  assigned ${s.assigned}${s.reads.length ? `  reads ${s.reads.join(',')}` : ''}`)
      this.log(`tainted: ${s.tainted ? `yes (${s.taint_reasons.join('; ')})` : 'no'}`)
      this.log(`created: ${s.created}`)
      if (s.prompts === 'recorded') this.log('prompts: recorded (direct_chat writes are checked against what the user typed)')
      if (s.ended) this.log(`ended: ${s.ended} (writes refused)`)
    }
    return s
  }
}
