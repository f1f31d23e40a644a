import {Args, Flags} from '@oclif/core'

import {EngramCommand, sessionFlag} from '../base.js'
import {EngramError} from '../core/errors.js'
import {searchMemories, verifyServedHits} from '../core/search.js'
import {askServer} from '../core/server.js'
import {currentSession} from '../core/sessions.js'
import {Store} from '../core/store.js'
import {visible} from '../render.js'

export default class Search extends EngramCommand {
  static override summary = 'Search verified memory in the scopes you may read (BM25 with prefix and light fuzzy matching).'
  static override description = 'Words are OR-ed and ranked; +word requires a word, -word excludes it, "quoted words" must all appear. Uses a running `engram serve` for this store when there is one.'
  static override examples = ['<%= config.bin %> search "deploy host" --scope tenant:acme --limit 5', '<%= config.bin %> search +billing -draft --json']
  static override args = {query: Args.string({description: 'search words', required: true})}
  static override flags = {
    scope: Flags.string({description: 'only this scope'}),
    limit: Flags.integer({description: 'at most this many results', default: 10, min: 1, max: 1000}),
    session: sessionFlag,
  }

  async run() {
    const {args, flags} = await this.parse(Search)
    const store = await Store.open(flags.base)
    const session = await currentSession(store, flags.session)
    let result = undefined as undefined | {hits: any[]; scopes: string[]}
    const warm = await askServer(store, {op: 'search', query: args.query, scope: flags.scope, limit: flags.limit, session: session?.id})
    // what the socket says is checked like anything read from the store
    if (warm?.ok) result = {hits: await verifyServedHits(store, session, warm.hits, flags.scope), scopes: warm.scopes}
    else if (warm && !warm.ok) throw new EngramError(warm.error.code as any, warm.error.message, {nextStep: warm.error.nextStep})
    else result = await searchMemories(store, session, args.query, {scope: flags.scope, limit: flags.limit, onWarning: (m) => this.warnLine(m)})
    if (!this.jsonEnabled()) {
      for (const h of result.hits) {
        this.log(visible(`${h.scope}/${h.path}  ${h.title}  (${h.score.toFixed(2)})`))
        this.log(visible(`    ${h.author} via ${h.origin}${h.tainted ? ', tainted' : ''}${h.reviewed_by ? `, reviewed by ${h.reviewed_by}` : ''} — ${h.snippet}`))
      }
      if (result.hits.length === 0) this.note('no results')
    }
    return {query: args.query, hits: result.hits}
  }
}
