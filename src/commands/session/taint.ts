import {Args, Flags} from '@oclif/core'

import {EngramCommand} from '../../cli/base.js'
import {currentSession, loadSessionFor, taintSession} from '../../core/session/sessions.js'
import {Store} from '../../core/store/store.js'

export default class SessionTaint extends EngramCommand {
  static override summary = 'Mark a session tainted (it read untrusted content). Taint never goes down.'
  static override examples = ['<%= config.bin %> session taint s-7f3kq2ab --reason "WebFetch https://example.com"']
  static override args = {id: Args.string({description: 'session id', required: true})}
  static override flags = {reason: Flags.string({description: 'why', required: true})}

  async run() {
    const {args, flags} = await this.parse(SessionTaint)
    const store = await Store.open(flags.base)
    // a hook inside a session may taint that session (taint only goes up), never another
    await loadSessionFor(store, args.id, await currentSession(store))
    const {proof: _proof, ...s} = await taintSession(store, args.id, flags.reason)
    this.note(`session ${s.id} tainted: ${s.taint_reasons.join('; ')}`)
    return s
  }
}
