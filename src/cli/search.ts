import type {SearchHit} from '../core/index/index.js'
import {searchMemories, verifyServedHits} from '../core/serve/search.js'
import {RootNotPinned, rootNotPinned} from '../core/trust/keys.js'
import {mayHaveExtraRules, resolvePolicy} from '../core/store/policy.js'
import {redactText, setRulesInForce} from '../core/write/redact/index.js'
import {askServer, serverFailure, startServerInBackground} from '../core/serve/serve-client.js'
import {currentSession, sessionTokenInUse} from '../core/session/sessions.js'
import {Store} from '../core/store/store.js'
import {visible} from '../core/text/visible.js'

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
export async function runSearch(input: SearchInput, warn: (message: string) => void): Promise<{query: string; hits: SearchHit[]; root_not_pinned?: RootNotPinned}> {
  // search reads no setting from config.yml: a broken config does not stop a read
  const store = await Store.open(input.base, {config: false})
  const session = await currentSession(store, input.session)
  // a fresh clone serves nothing curated until its root is pinned here: say so (R19)
  const notice = await rootNotPinned(store)
  if (notice) warn(notice.message)
  let hits: SearchHit[]
  // the server answers a session that proves itself with its token; the owner, and a
  // session without a token, search the index themselves
  const token = sessionTokenInUse()
  const warm = session && token ? await askServer(store, {op: 'search', query: input.query, scope: input.scope, limit: input.limit, session: session.id, token}) : undefined
  if (warm?.ok) hits = await verifyServedHits(store, session, warm.hits, input.scope)
  else if (warm && !warm.ok) throw serverFailure(warm)
  else {
    const r = await searchMemories(store, session, input.query, {scope: input.scope, limit: input.limit, onWarning: warn})
    hits = r.hits
    // no server answered a session: start one when the store is large, for the next search
    if (session && token) {
      const {indexedDocs} = await import('../core/index/index.js')
      await startServerInBackground(store, indexedDocs(store, r.scopes), process.argv[1])
    }
  }
  // the query is echoed (--json): a secret typed into a search is redacted like any output,
  // with the store's own signed rules too (worked out here only, and quietly: a broken
  // config never stops a read, and its warning belongs to the commands that use it)
  try {
    if (mayHaveExtraRules(store)) setRulesInForce((await resolvePolicy(store)).config.redaction.extra)
  } catch {
    // no policy to be had: the built-in rules still apply
  }
  const query = redactText(input.query)
  return notice ? {query, hits, root_not_pinned: notice} : {query, hits}
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
