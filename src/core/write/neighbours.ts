import {readableScopes} from '../session/access.js'
import type {Searcher} from '../serve/search.js'
import {ServingGate} from '../trust/serving.js'
import type {SessionRecord} from '../session/sessions.js'
import type {Store} from '../store/store.js'
import type {Neighbour, VoteContext} from './vote/index.js'
import type {MemoryFile} from '../memory/memory.js'
import type {IndexHold, WarmEngine} from '../index/index.js'
import {EngramError} from '../store/errors.js'
import {scopeDir} from '../store/scope.js'
import {clip} from '../text/clip.js'
import {keepNeighbourAnalysis} from './vote/semantic.js'

/**
 * How many of the write's words the lookup matches: its rarest ones (lowest document
 * frequency), exactly. Rare shared words are what makes two texts about the same thing;
 * the common ones and prefix/fuzzy variants only cost time on a long text.
 */
const NEIGHBOUR_TERMS = 12
/** Only the start of a long write is looked at (as before: the index caps a query's work). */
const NEIGHBOUR_TEXT_CHARS = 4000

/**
 * Curated memories topically close to a write, for the semantic validator: searched
 * through the index, only in curated scopes the session may read (never run: scopes,
 * never another tenant). The file at the write's own path is included: an update that
 * contradicts it is exactly what the validator is for.
 *
 * Always in-process, never through `engram serve`'s socket: any process of the user
 * could be listening there, and an answer of "no neighbours" cannot be checked, so a
 * fake server could hide the memory a write contradicts. In-process it reads only the
 * postings of the write's words from each scope's postings file (index.ts `nominate`), not
 * the whole index; where that file is missing or is not the one its index names, the whole
 * index is loaded, as before (README "Performance").
 */
export async function neighboursFor(store: Store, session: SessionRecord, _scope: string, _path: string, text: string, limit: number, warm?: WarmLookup): Promise<Neighbour[]> {
  return findNeighbours(store, session, text, limit, warm)
}

/**
 * What a long-lived process in the same trust as the write (`engram mcp`, never a socket)
 * keeps for the lookup: its loaded indexes, read only from sealed index files or built
 * from git (index.ts), and a serving gate current for this call's HEAD.
 */
export interface WarmLookup {
  engine?: Searcher & Partial<Pick<WarmEngine, 'hold'>>
  gate?: ServingGate
  /** the commit `gate` is of, when known: the engine searches its indexes at that commit without reading HEAD again */
  head?: string
  /** the process's reader thread, which reads a write's text while its neighbours are looked up (vote/reading.ts) */
  reader?: VoteContext['reader']
}

/** Signed memories a loaded index does not hold as signed, per index state and manifest state (bounded). A scope HEAD holds no folder for has an index of no paths. */
const UNCOVERED = new Map<string, string[]>()

/**
 * The signed memories of a scope that the held index (the one the lookup searched) does not
 * hold in their signed version: a commit that drops one from HEAD's tree (the file left in
 * the work tree, still served) or commits other words under its path hides it from the
 * lookup, which nominates from HEAD's index.
 */
async function uncovered(held: IndexHold, gate: ServingGate, scope: string): Promise<string[]> {
  const index = held.indexedBlobs(scope)
  const signed = await gate.signedManifest(scope)
  if (!signed) return []
  const key = signed.key === undefined ? undefined : `${scope}\0${index.key}\0${signed.key}`
  const known = key === undefined ? undefined : UNCOVERED.get(key)
  if (known) return known
  const blobs = index.blobs()
  const dir = `${scopeDir(scope)}/`
  const out: string[] = []
  for (const [rel, blob] of signed.lookup.entries()) {
    if (rel.startsWith(dir) && blobs.get(rel.slice(dir.length)) !== blob) out.push(rel)
  }
  if (key !== undefined) {
    if (UNCOVERED.size >= 1000) UNCOVERED.clear()
    UNCOVERED.set(key, out)
  }
  return out
}

/**
 * The lookup itself. A warm caller passes its engine and gate; a one-shot caller opens the
 * index's postings and the keyring for this call. Either way the index only nominates: a
 * candidate counts only as the file it is on disk, through the serving gate.
 */
export async function findNeighbours(
  store: Store,
  session: SessionRecord,
  text: string,
  limit: number,
  warm: WarmLookup = {},
): Promise<Neighbour[]> {
  const scopes = readableScopes(session).filter((s) => !s.startsWith('run:'))
  if (scopes.length === 0) return []
  // plain text: query syntax in the write's text (quotes, +/-) is never parsed
  const query = text.slice(0, NEIGHBOUR_TEXT_CHARS)
  const opts = {limit, informative: NEIGHBOUR_TERMS, bodies: true}
  let hits: {scope: string; path: string; score: number; title?: string; blob?: string; body?: string}[]
  // A warm engine's indexes are held from the search to the end of the coverage check: the
  // check is of the very index searched, which no call at another commit moves meanwhile.
  const held = warm.engine?.hold ? await warm.engine.hold(scopes, {head: warm.head}) : undefined
  try {
    hits = held
      ? held.search(query, opts)
      : warm.engine
        ? await warm.engine.search(query, {...opts, scopes, head: warm.head})
        : await (await import('../index/index.js')).nominate(store, query, {scopes, limit, informative: NEIGHBOUR_TERMS})
    // A loaded index that lacks a signed memory cannot nominate it: the lookup fails, and the
    // vote with it (semantic.ts: nothing compared is no evidence that nothing is contradicted).
    if (held && warm.gate) {
      for (const scope of scopes) {
        const missing = await uncovered(held, warm.gate, scope)
        if (missing.length > 0) {
          throw new EngramError('verification', `HEAD's tree does not hold ${missing.length} signed memory file(s) of ${scope} as signed (${clip(missing[0], 80)}${missing.length > 1 ? ', …' : ''}): a write's neighbours cannot be looked up among them.`, {
            nextStep: 'run `engram verify` as the owner (not-in-head), and commit the signed files back',
          })
        }
      }
    }
  } finally {
    held?.release()
  }
  const out: Neighbour[] = []
  // Only memory that verifies counts as evidence: a planted file must not steer the vote.
  const gate = warm.gate ?? (hits.length > 0 ? await ServingGate.open(store) : undefined)
  for (const h of hits) {
    let found: {memory: MemoryFile; blob: string} | undefined
    try {
      const served = gate!.serveFile(h.scope, h.path)
      // its title and body as the file says, never the index's stored copy: whoever can write
      // .engram/index/ could keep a real path and blob id and change the text the vote compares
      if (served.ok) found = {memory: served.memory, blob: served.blob}
    } catch {
      // a folder where the file belongs, or a file that no longer parses: as a file not served
    }
    // A file moved, edited or replaced in the work tree is not evidence, and must not hide the
    // memory either: the version the scope's signed manifest names is read from git instead.
    // A hit with neither (a planted file, a broken store) is reported by `engram verify`.
    found ??= await gate!.signedVersion(h.scope, h.path)
    if (!found) continue
    out.push({scope: h.scope, path: h.path, title: found.memory.frontmatter.title, body: found.memory.body, score: h.score, blob: found.blob})
  }
  return out
}

/**
 * A long-lived process's warm-up (`engram mcp`), so that a write's vote meets its
 * neighbours as met before (README "Performance"): each curated memory the session may
 * read is served once through the warm gate (read, hashed, its signature checked, parsed:
 * what a lookup does with a neighbour), and the semantic validator keeps its analysis by
 * the blob id of the bytes served. In slices of about `sliceMs`, with the event loop free
 * between them, so a request waits one slice at most; it stops at `max` memories, when the
 * memo is full, or when `stop()` says so. Nothing it keeps decides trust later: every
 * write's lookup serves each neighbour again through the gate of that write's HEAD.
 * Returns how many memories it served.
 */
export async function warmNeighbours(
  session: SessionRecord,
  warm: {engine: WarmEngine; gate: () => Promise<ServingGate>},
  opts: {
    max?: number
    sliceMs?: number
    stop?: () => boolean
    onWarning?: (message: string) => void
    /** runs each step in the caller's turn (engram mcp's one-request-at-a-time queue), so no step overlaps a request */
    turn?: <T>(step: () => Promise<T>) => Promise<T>
  } = {},
): Promise<number> {
  const scopes = readableScopes(session).filter((s) => !s.startsWith('run:'))
  const max = opts.max ?? WARM_MAX
  if (scopes.length === 0 || max <= 0) return 0
  const sliceMs = opts.sliceMs ?? 5
  const turn = opts.turn ?? (<T>(step: () => Promise<T>) => step())
  const docs = (await turn(() => warm.engine.documents(scopes, opts.onWarning))).slice(0, max)
  let served = 0
  let i = 0
  let full = false
  while (i < docs.length && !full && !opts.stop?.()) {
    await turn(async () => {
      const gate = await warm.gate()
      const until = performance.now() + sliceMs
      // one memory a slice at least, however short the slice
      for (let once = true; i < docs.length && (once || performance.now() < until); i++, once = false) {
        const {scope, path, blob} = docs[i]
        try {
          const f = gate.serveFile(scope, path, {blob})
          if (!f.ok) continue
          served++
          const m = f.memory
          if (!keepNeighbourAnalysis({scope, path, title: m.frontmatter.title, body: m.body, score: 0, blob: f.blob})) {
            full = true
            return
          }
        } catch {
          // a folder where the file belongs: a write's lookup reads the signed version instead
        }
      }
    })
    await new Promise<void>((resolve) => setImmediate(resolve))
  }
  return served
}

/** How many memories the warm-up meets at most by default: about 20 KB of the process's memory each (README "MCP server"). */
export const WARM_MAX = 10_000
