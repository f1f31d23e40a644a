import {Flags} from '@oclif/core'

import {EngramCommand, sessionFlag} from '../cli/base.js'
import {buildContext, renderContext} from '../core/serve/context.js'
import {currentSession} from '../core/session/sessions.js'
import {Store} from '../core/store/store.js'
import {safeJson, visible} from '../core/text/visible.js'

export default class Context extends EngramCommand {
  static override summary = 'Print the session-start memory block for an agent: data, not instructions, in unforgeable wrappers.'
  static override examples = ['<%= config.bin %> context --query "billing" --budget 2000', '<%= config.bin %> context --format json']
  static override flags = {
    query: Flags.string({description: 'include the best matches for this query in full'}),
    budget: Flags.integer({description: 'token budget (≈ 4 characters a token)', default: 2000, min: 100, max: 200000}),
    scope: Flags.string({description: 'only this scope'}),
    format: Flags.string({description: 'output format', options: ['markdown', 'text', 'json'], default: 'markdown'}),
    session: sessionFlag,
  }

  async run() {
    const {flags} = await this.parse(Context)
    const store = await Store.open(flags.base)
    const session = await currentSession(store, flags.session)
    const notice = await this.rootNotice(store)
    const built = await buildContext(store, session, {query: flags.query, budget: flags.budget, scope: flags.scope})
    const block = notice ? {...built, root_not_pinned: notice} : built
    if (this.jsonEnabled()) return block
    if (flags.format === 'json') this.logRendered(safeJson(block))
    else process.stdout.write(visible(renderContext(block, flags.format as 'markdown' | 'text')))
    return block
  }
}
