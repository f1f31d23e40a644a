import {visibleScopes} from '../session/access.js'
import {badInput} from '../store/errors.js'
import type {MemoryFile} from '../memory/memory.js'
import type {SearchHit, SearchOptions} from '../index/index.js'
import {RunLabels, isRunScope} from '../session/runlabels.js'
import {scopeDir} from '../store/scope.js'
import {ServingGate} from '../trust/serving.js'
import type {SessionRecord} from '../session/sessions.js'
import type {Store} from '../store/store.js'

export const MAX_QUERY_CHARS = 10_000

/** Something that searches the index: a one-shot engine per process, or the warm server's. */
export interface Searcher {
  search(query: string, opts: SearchOptions): Promise<SearchHit[]>
}

export interface ServedHit extends SearchHit {
  /** the memory's full text, for callers that serve it (context); not printed by `search` */
  body?: string
}

/** The scopes a search may open: one named scope (checked), or all the session may read. */
export function searchScopes(store: Store, session: SessionRecord | undefined, scope?: string): string[] {
  return visibleScopes(store, session, scope || undefined)
}

/**
 * Search verified memory: the index only opens the indexes of scopes the caller may read, and
 * each hit is served only when the file on disk is the indexed blob and passes the
 * serving gate (trusted signature and signed manifest for curated scopes); its title,
 * provenance and snippet are then the file's, never the index's (which the agent can write). A warm caller
 * passes its engine and a gate from WarmServing (current for this request's HEAD).
 */
export async function searchMemories(
  store: Store,
  session: SessionRecord | undefined,
  query: string,
  opts: {
    scope?: string
    limit?: number
    withBody?: boolean
    onWarning?: (m: string) => void
    engine?: Searcher
    gate?: ServingGate
    /** the commit `gate` is of, when known: a warm engine searches its indexes at that commit without reading HEAD again */
    head?: string
  } = {},
): Promise<{hits: ServedHit[]; scopes: string[]}> {
  if (query.length > MAX_QUERY_CHARS) throw badInput(`The query is longer than ${MAX_QUERY_CHARS} characters.`, 'search for a few distinctive words')
  const limit = opts.limit ?? 10
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw badInput('--limit must be a whole number from 1 to 1000.')
  const scopes = searchScopes(store, session, opts.scope)
  const search: Searcher['search'] = opts.engine
    ? (q, o) => opts.engine!.search(q, o)
    : async (q, o) => (await import('../index/index.js')).search(store, q, o)
  const gate = opts.gate ?? (await ServingGate.open(store))
  const bodies = new Map<string, string>()
  const hits = await search(query, {
    scopes,
    limit,
    onWarning: opts.onWarning,
    head: opts.head,
    // the file must still be the indexed blob and pass the serving gate (ServingGate.serveFile);
    // what the hit shows is then read from that file, not from the index's stored copy
    serve: (h) => {
      const f = gate.serveFile(h.scope, h.path, {blob: h.blob})
      if (!f.ok) return undefined
      let m: MemoryFile
      try {
        m = f.memory
      } catch {
        return undefined // a remembered verdict for a file that no longer parses
      }
      if (opts.withBody) bodies.set(f.rel, f.text)
      const fm = m.frontmatter
      return {title: fm.title, author: fm.author, origin: fm.origin, tainted: fm.tainted, reviewed_by: fm.reviewed_by, tags: fm.tags, body: m.body}
    },
  })
  const served: ServedHit[] = hits.map((h) => {
    if (!opts.withBody) return h
    const text = bodies.get(`${scopeDir(h.scope)}/${h.path}`) ?? ''
    return {...h, body: text}
  })
  return {hits: await withRunLabels(store, served), scopes}
}

/**
 * run: hits carry the labels their commit proves (runlabels.ts), never the index's copy
 * of the file's frontmatter claims. Curated hits passed the serving gate: their labels
 * are signed.
 */
async function withRunLabels<T extends SearchHit>(store: Store, hits: T[]): Promise<T[]> {
  if (!hits.some((h) => isRunScope(h.scope))) return hits
  const labels = new RunLabels(store)
  return Promise.all(hits.map(async (h) => {
    if (!isRunScope(h.scope)) return h
    const l = await labels.label(h.scope, `${scopeDir(h.scope)}/${h.path}`, h.blob)
    return {...h, author: l.author, origin: l.origin, tainted: l.tainted, reviewed_by: null}
  }))
}

/**
 * Hits that came over the warm server's socket, checked as if they were found here: the
 * socket is a file in the store, and a process that is not engram could be listening on
 * it. Each hit must be in a scope the session may read, be the file on disk, and pass the
 * serving gate; its provenance is taken from the file, and a snippet that is not in the
 * memory's text is dropped.
 */
export async function verifyServedHits(store: Store, session: SessionRecord | undefined, hits: unknown, scope?: string): Promise<SearchHit[]> {
  if (!Array.isArray(hits)) return []
  const allowed = new Set(searchScopes(store, session, scope))
  const gate = await ServingGate.open(store)
  const {validateMemoryPath} = await import('../store/paths.js')
  const out: SearchHit[] = []
  for (const h of hits as Partial<SearchHit>[]) {
    if (!h || typeof h.scope !== 'string' || typeof h.path !== 'string' || !allowed.has(h.scope)) continue
    let path: string
    try {
      path = validateMemoryPath(h.path)
    } catch {
      continue
    }
    const f = gate.serveFile(h.scope, path)
    if (!f.ok) continue
    const {blob} = f
    let m: MemoryFile
    try {
      m = f.memory
    } catch {
      continue // a file the gate passed without parsing (a remembered verdict) that no longer parses
    }
    const snippet = typeof h.snippet === 'string' && m.body.includes(h.snippet.replace(/^…|…$/g, '').trim()) ? h.snippet : m.body.slice(0, 160).trim()
    const fm = m.frontmatter
    out.push({
      scope: h.scope, path: h.path, title: fm.title, author: fm.author, origin: fm.origin, tainted: fm.tainted, reviewed_by: fm.reviewed_by,
      blob, score: typeof h.score === 'number' ? h.score : 0, snippet, tags: fm.tags,
    })
  }
  return withRunLabels(store, out)
}
