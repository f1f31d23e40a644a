import {type StatedValue, claimText, statedValues} from '../session/prompts.js'
import type {Store} from '../store/store.js'
import {ServingGate} from '../trust/serving.js'
import type {MemoryFile} from '../memory/memory.js'

/** How many curated memories the lookup reads at most (the write's own path, then the index's best). */
const KNOWN_CANDIDATES = 8

/** A value of a write that curated memory already states, and where. */
export interface KnownValue {
  value: StatedValue
  path: string
}

/**
 * Which of a direct_chat write's untyped values (prompts.ts `unattestedValues`) the curated
 * memory of the write's own scope already states, as its signed version says: a value the agent
 * recalled from reviewed memory is not third-party text, so it does not make the write so
 * (README "What the user typed"). Read are the memory at the write's own path and the few the
 * index nominates for the values' words, each only as the serving gate serves it (its
 * signature checked; a file edited in the work tree counts as its signed version, from git),
 * never a pending proposal, a run: note or another scope's memory: the scope is the one the
 * session may write to, so what it learns here it may read anyway. The index only nominates;
 * a value the lookup misses stays untyped (as before: fail closed).
 */
export async function knownToMemory(store: Store, scope: string, path: string, values: readonly StatedValue[]): Promise<KnownValue[]> {
  if (values.length === 0 || scope.startsWith('run:') || scope === 'org') return []
  // the values' own words (as written, and as compared) nominate the memories that state them
  const query = values.flatMap((v) => [v.text, ...v.keys]).join(' ')
  let nominated: {scope: string; path: string}[] = []
  try {
    const {nominate} = await import('../index/index.js')
    nominated = await nominate(store, query, {scopes: [scope], limit: KNOWN_CANDIDATES, informative: 24})
  } catch {
    // no index to ask: only the write's own path is read
  }
  const paths = [...new Set([path, ...nominated.filter((n) => n.scope === scope).map((n) => n.path)])].slice(0, KNOWN_CANDIDATES)
  let gate: ServingGate
  try {
    gate = await ServingGate.open(store)
  } catch {
    return []
  }
  const wanted = new Set(values)
  const out: KnownValue[] = []
  for (const p of paths) {
    const memory = await signedMemory(gate, scope, p)
    if (!memory) continue
    // what the memory states, read as a prompt is (each of its values' keys stands alone)
    const keys = new Set(statedValues(claimText(memory.frontmatter.title, memory.frontmatter.tags, memory.body, p), true).flatMap((s) => s.keys))
    for (const value of wanted) {
      if (value.keys.some((k) => keys.has(k))) {
        out.push({value, path: p})
        wanted.delete(value)
      }
    }
    if (wanted.size === 0) break
  }
  return out
}

/** A curated memory as served (its signature checked), or its signed version from git. */
async function signedMemory(gate: ServingGate, scope: string, path: string): Promise<MemoryFile | undefined> {
  try {
    const served = gate.serveFile(scope, path)
    if (served.ok) return served.memory
  } catch {
    // a folder where the file belongs, or a file that no longer parses: as a file not served
  }
  try {
    return (await gate.signedVersion(scope, path))?.memory
  } catch {
    return undefined
  }
}
