import {readableScopes} from './access.js'
import {search} from './index/index.js'
import {parseMemory} from './memory.js'
import {scopeDir} from './scope.js'
import {ServingGate} from './serving.js'
import type {SessionRecord} from './sessions.js'
import type {Store} from './store.js'
import type {Neighbour} from './vote/index.js'

/**
 * Curated memories topically close to a write, for the semantic validator: searched
 * through the index, only in curated scopes the session may read (never run: scopes,
 * never another tenant). The file at the write's own path is included: an update that
 * contradicts it is exactly what the validator is for.
 */
export async function neighboursFor(store: Store, session: SessionRecord, _scope: string, _path: string, text: string, limit: number): Promise<Neighbour[]> {
  const scopes = readableScopes(session).filter((s) => !s.startsWith('run:'))
  // Plain words only: query syntax in the write's text (quotes, +/-) must not blind the validator.
  const query = text.slice(0, 2000).replace(/["+-]/g, ' ')
  let hits
  try {
    hits = await search(store, query, {scopes, limit})
  } catch {
    return [] // a query the index cannot parse contradicts nothing; the other validators still vote
  }
  const out: Neighbour[] = []
  // Only memory that verifies counts as evidence: a planted file must not steer the vote.
  const gate = hits.length > 0 ? await ServingGate.open(store) : undefined
  for (const h of hits) {
    const rel = `${scopeDir(h.scope)}/${h.path}`
    const file = store.readText(rel)
    if (file === undefined) continue
    try {
      const m = parseMemory(file, rel)
      if (!gate!.check(h.scope, rel, file, m).ok) continue
      out.push({scope: h.scope, path: h.path, title: m.frontmatter.title, body: m.body, score: h.score})
    } catch {
      // a broken file is reported by `engram verify`, not used as evidence
    }
  }
  return out
}
