import type {SearchHit} from '../core/index/index.js'
import {searchMemories, verifyServedHits} from '../core/search.js'
import {askServer, serverFailure} from '../core/serve-client.js'
import {currentSession, sessionTokenInUse} from '../core/sessions.js'
import {Store} from '../core/store.js'
import {visible} from '../visible.js'

export interface SearchInput {
  query: string
  scope?: string
  limit: number
  session?: string
  base?: string
}

/**
 * `engram search`, whichever entry runs it (the oclif command, or the fast path in
 * bin/run.js that skips loading oclif): a running `engram serve` for this store answers
 * when there is one, and its answer is checked like anything read from the store.
 */
export async function runSearch(input: SearchInput, warn: (message: string) => void): Promise<{query: string; hits: SearchHit[]}> {
  // search reads no setting from config.yml: a broken config does not stop a read
  const store = await Store.open(input.base, {config: false})
  const session = await currentSession(store, input.session)
  let hits: SearchHit[]
  // the server answers a session that proves itself with its token; the owner, and a
  // session without a token, search the shards themselves
  const token = sessionTokenInUse()
  const warm = session && token ? await askServer(store, {op: 'search', query: input.query, scope: input.scope, limit: input.limit, session: session.id, token}) : undefined
  if (warm?.ok) hits = await verifyServedHits(store, session, warm.hits, input.scope)
  else if (warm && !warm.ok) throw serverFailure(warm)
  else hits = (await searchMemories(store, session, input.query, {scope: input.scope, limit: input.limit, onWarning: warn})).hits
  return {query: input.query, hits}
}

/** The human-readable lines for stdout: two per hit, untrusted text made visible. */
export function searchLines(hits: SearchHit[]): string[] {
  const lines: string[] = []
  for (const h of hits) {
    lines.push(visible(`${h.scope}/${h.path}  ${h.title}  (${h.score.toFixed(2)})`))
    lines.push(visible(`    ${h.author} via ${h.origin}${h.tainted ? ', tainted' : ''}${h.reviewed_by ? `, reviewed by ${h.reviewed_by}` : ''} — ${h.snippet}`))
  }
  return lines
}
