import {closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, renameSync, rmSync, statSync, writeFileSync, writeSync} from 'node:fs'
import {createHash, randomBytes} from 'node:crypto'

import MiniSearch from 'minisearch'
import type {Options, Query, SearchOptions as MiniSearchOptions, SearchResult} from 'minisearch'

import {catBlobs} from '../git/git.js'
import type {Provenance} from '../memory/memory.js'
import {formatScope, parseScope} from '../store/scope.js'
import type {Store} from '../store/store.js'
import {indexSealKey, mac, sameMac} from '../store/private.js'
import {EngramError} from '../store/errors.js'
import {gitBlobHash} from '../memory/hash.js'
import {readHead, readHeadFromFiles} from './head.js'
import {encodePostings, openPostings, Postings, postingsHash} from './postings.js'
import {makeSnippet} from './snippet.js'
import {currentTrees, diffTrees, IndexDoc, listScopes, listTree, parseMemoryText, prepareDoc, TreeEntry} from './source.js'
import {parseQuery, termOf, tokenize, words} from './tokenize.js'
import {internals, type MiniInternals} from './internals.js'
import {indexJsonPieces} from './persist.js'
import {rankable, Ranking, type RankQuery} from './rank.js'
import type {QueryTerm} from './tokenize.js'

export {tokenize, stem, parseQuery, STOP_WORDS} from './tokenize.js'
export {readHead} from './head.js'

/**
 * The derived search index (README "Serving"): one MiniSearch index per scope under
 * `.engram/index/`, built from the scope's committed tree and persisted with MiniSearch's
 * own JSON form. A commit does not rewrite it: the paths that changed since its tree
 * (`git diff-tree`) go to a small delta file, replayed with remove/add when the index is
 * loaded and folded into a new full index once it grows past deltaBound. A rebuild from
 * the files gives the same results at any time. Beside each full index, its postings file
 * (postings.ts): what a write's neighbour lookup reads instead of the whole index.
 */

export const INDEX_DIR = '.engram/index'
/** Written in every index and delta file; a file of another format is rebuilt. */
export const FORMAT = 'engram-minisearch-2'

export interface SearchHit extends Provenance {
  /** git blob id of the indexed file (compare with the verified set before serving) */
  blob: string
  score: number
  snippet: string
  tags: string[]
  /** the indexed body, with `bodies` only (its snippet is then empty) */
  body?: string
}

/** What a hit shows, as read from its verified file. */
export interface ServedDoc extends Omit<Provenance, 'scope' | 'path'> {
  tags: string[]
  body: string
}

export interface IndexStatus {
  scope: string
  /** live documents (the full index's, changed by its delta) */
  docs: number
  /** tree id the index reflects, or null when there is none */
  tree: string | null
  /** the index reflects the scope's tree at HEAD */
  fresh: boolean
  /** bytes on disk (index, delta and postings) */
  bytes: number
  /** paths held in the delta file */
  delta: number
}

export interface SearchOptions {
  /** scopes the caller may read; nothing else is opened */
  scopes: string[]
  limit?: number
  /** applied in rank order before limiting, e.g. to keep only verified memory */
  filter?: (hit: SearchHit) => boolean
  /**
   * Applied in rank order before `filter` and the limit: the verified document behind a hit,
   * or undefined to pass over it. The hit's title, provenance, tags, snippet and body are
   * then the document's, never the index's stored copy, which whoever can write
   * `.engram/index/` can change while keeping a real path and blob id.
   */
  serve?: (hit: SearchHit) => ServedDoc | undefined
  onWarning?: (message: string) => void
  /**
   * Treat the query as plain text, not query syntax, and match only its `informative`
   * rarest words (lowest document frequency in the scopes searched), exactly: no prefix
   * or fuzzy expansion. For finding memories close to a whole write (the semantic
   * validator's neighbours), where the rare words are what says two texts are about the
   * same thing and every extra common word only costs time.
   */
  informative?: number
  /** return each hit's indexed body instead of a snippet (for callers that read the text anyway) */
  bodies?: boolean
  /**
   * The commit HEAD pointed at when the caller read it (a warm engine only): the indexes
   * are brought to that commit without reading HEAD again, so that a caller whose serving
   * gate is of that commit searches the same store state it serves (and a vote's lookup
   * reads HEAD once, not once per step).
   */
  head?: string
}

export const DEFAULT_LIMIT = 10

/** Past this many changed paths the delta is folded into a new full index. */
export function deltaBound(baseDocs: number): number {
  return Math.min(1000, Math.max(200, Math.ceil(baseDocs * 0.05)))
}

// ---- MiniSearch -----------------------------------------------------------------------

/** Title and tags count more than the body. */
export const BOOST = {title: 3, tags: 2, body: 1}

/**
 * The one set of MiniSearch options, for building and for loading (loadJSON needs the
 * same). Terms come from the tokenizer module: `words` splits, `termOf` drops stop-words
 * and stems. Queries arrive as terms already through that pipeline (parseQuery), so the
 * search side splits on the spaces it joined them with and keeps each term as it is.
 */
// tags are indexed as MiniSearch's default text of an array ("ops,deploy"), which `words` splits
const OPTIONS: Options<IndexDoc> = {
  idField: 'path',
  fields: ['title', 'tags', 'body'],
  storeFields: ['blob', 'title', 'tags', 'author', 'origin', 'tainted', 'reviewed_by', 'body'],
  tokenize: (text) => words(text),
  processTerm: (term) => termOf(term) ?? null,
  autoVacuum: false,
  searchOptions: {boost: BOOST, tokenize: (query) => query.split(' '), processTerm: (term) => term},
}

type Index = MiniSearch<IndexDoc>

/** An empty scope index with engram's options (exported for the ranking's tests). */
export function newIndex(): Index {
  return new MiniSearch<IndexDoc>(OPTIONS)
}

/** The document as it was indexed (every field is stored), which remove() needs. */
function indexedDoc(ms: Index, path: string): IndexDoc | undefined {
  const stored = ms.getStoredFields(path) as Omit<IndexDoc, 'path'> | undefined
  return stored ? {path, ...stored} : undefined
}

/** Replace or remove one path's document (remove, not discard: statistics stay exactly a rebuild's). */
function applyDoc(ms: Index, path: string, doc: IndexDoc | null): void {
  const old = indexedDoc(ms, path)
  if (old) ms.remove(old)
  if (doc) ms.add(doc)
}

/**
 * Documents holding a term in any field, at least (the largest field's count; cheap) or
 * exactly (their union). MiniSearch keeps no per-term document count, so this reads its
 * term map; with remove() instead of discard() it holds live documents only.
 */
function termDocs(ms: Index): (term: string) => Map<number, Map<number, number>> | undefined {
  const inner = internals(ms)
  return (term) => inner._index.get(term)
}

/** What choosing a text's rarest words needs of one scope's index. */
interface TermCounts {
  /** a lower bound on the documents holding the term, or -1 when none does */
  atLeast(term: string): number
  /** the documents holding the term, exactly */
  exactly(term: string): number
}

function fullCounts(ms: Index): TermCounts {
  const get = termDocs(ms)
  return {atLeast: (term) => docFreqAtLeast(get(term)), exactly: (term) => docFreq(get(term))}
}

/** Terms whose counts a held index keeps (a vote's lookup asks for the same words again and again). */
const MAX_COUNTED = 200_000

/**
 * The counts of a held (warm, full) index, each term's worked out once. A held index's
 * postings change only as bringUp moves it to another tree, which makes a new Loaded: so
 * the counts are kept per Loaded, never per index object.
 */
const HELD_COUNTS = new WeakMap<Loaded, TermCounts>()

function heldCounts(held: Loaded): TermCounts {
  let counts = HELD_COUNTS.get(held)
  if (!counts) {
    const full = fullCounts(held.ms)
    const atLeast = new Map<string, number>()
    const exactly = new Map<string, number>()
    const keep = (memo: Map<string, number>, term: string, n: number) => {
      if (memo.size >= MAX_COUNTED) memo.clear()
      memo.set(term, n)
      return n
    }
    counts = {
      atLeast: (term) => atLeast.get(term) ?? keep(atLeast, term, full.atLeast(term)),
      exactly: (term) => exactly.get(term) ?? keep(exactly, term, full.exactly(term)),
    }
    HELD_COUNTS.set(held, counts)
  }
  return counts
}

function docFreqAtLeast(data: Map<number, Map<number, number>> | undefined): number {
  if (!data) return -1
  let n = 0
  for (const docs of data.values()) n = Math.max(n, docs.size)
  return n
}

function docFreq(data: Map<number, Map<number, number>> | undefined): number {
  if (!data) return 0
  if (data.size === 1) return data.values().next().value!.size
  const all = new Set<number>()
  for (const docs of data.values()) for (const id of docs.keys()) all.add(id)
  return all.size
}

function fuzzyDistanceFor(term: string): number {
  if (term.length >= 8) return 2
  if (term.length >= 4) return 1
  return 0
}

/**
 * A parsed query as a MiniSearch query: ranked OR of the positive terms, AND_NOT the
 * excluded ones; required terms in the filter. Each side names its OR: a subquery takes
 * the combineWith of the query around it, so without it the positive words would
 * exclude each other ("a b -c" found only a without b).
 */
export function miniQuery(terms: QueryTerm[]): {query: Query; options: MiniSearchOptions} {
  const positive = terms.filter((t) => t.mode !== 'not').map((t) => t.term)
  const excluded = terms.filter((t) => t.mode === 'not').map((t) => t.term)
  const must = terms.filter((t) => t.mode === 'must').map((t) => t.term)
  const query: Query = excluded.length
    ? {combineWith: 'AND_NOT', queries: [{combineWith: 'OR', queries: [positive.join(' ')]}, {combineWith: 'OR', queries: [excluded.join(' ')], prefix: false, fuzzy: false}]}
    : positive.join(' ')
  // prefix and fuzzy expansion as rankQuery decides it (one rule for both rankings)
  const spec = new Map(rankQuery(terms).terms.map((t) => [t.term, t]))
  return {
    query,
    options: {
      prefix: (term: string) => spec.get(term)?.prefix ?? false,
      fuzzy: (term: string) => spec.get(term)?.fuzzy || false,
      ...(must.length ? {filter: (r: SearchResult) => must.every((m) => r.queryTerms.includes(m))} : {}),
    },
  }
}

/** The same query for rank.ts. */
export function rankQuery(terms: QueryTerm[]): RankQuery {
  return {
    terms: terms
      .filter((t) => t.mode !== 'not')
      .map((t) => ({term: t.term, prefix: t.expand && t.term.length >= 3, fuzzy: t.expand ? fuzzyDistanceFor(t.term) : 0})),
    excluded: terms.filter((t) => t.mode === 'not').map((t) => t.term),
    required: terms.filter((t) => t.mode === 'must').map((t) => t.term),
  }
}

/**
 * Scores summed in another order (a delta replayed, prefix matches visited in another
 * order) differ in their last bits; twelve digits keep the ranking of a rebuild exactly.
 */
function roundScore(score: number): number {
  return Number(score.toPrecision(12))
}

// ---- the API --------------------------------------------------------------------------

export async function search(store: Store, query: string, opts: SearchOptions): Promise<SearchHit[]> {
  return new IndexEngine(store).search(query, opts)
}

/** A memory close to a text, by path only: to be read (and verified) from its file. */
export interface Nominee {
  scope: string
  path: string
  score: number
}

/**
 * The memories closest to a plain text, exactly as `search` with `informative` ranks them,
 * by path and score only, for a one-shot caller that reads each file itself (a write's
 * neighbour lookup). Each scope is brought to HEAD as for a search; then only the postings
 * of the text's words are read, from the scope's postings file, instead of its whole
 * index. A postings file that is missing, stale or not the one the index names is not
 * used: that scope's full index is loaded (and the file written again from it).
 */
export async function nominate(store: Store, text: string, opts: {scopes: string[]; limit: number; informative: number; onWarning?: (message: string) => void}): Promise<Nominee[]> {
  try {
    return await new IndexEngine(store).nominate(text, opts, 'postings')
  } catch {
    // postings that are not the ones their file's head names (an edit, a torn write): full indexes, files written again
    return new IndexEngine(store).nominate(text, opts, 'rewrite')
  }
}

/** Bring the files of these scopes up to date: a delta of the changed paths, or a fold past the bound. No full index is loaded below the bound. */
export async function refresh(store: Store, scopes: string[], opts: {onWarning?: (message: string) => void} = {}): Promise<void> {
  const engine = new IndexEngine(store)
  const warn = opts.onWarning ?? (() => {})
  const {trees} = await engine.trees(normaliseScopes(scopes), true)
  for (const scope of normaliseScopes(scopes)) {
    const tree = trees.get(scope) ?? null
    if (tree === null) removeScopeFiles(store, scope)
    else await upkeep(store, scope, tree, warn)
  }
}

/** Rebuild from scratch (all scopes at HEAD by default; files of vanished scopes are removed). */
export async function rebuild(
  store: Store,
  opts: {scopes?: string[]; onProgress?: (done: number, total: number) => void; onWarning?: (message: string) => void} = {},
): Promise<IndexStatus[]> {
  // the trees recorded for a commit are listed at that commit, never at whatever git calls HEAD
  const head = readHeadFromFiles(store.top)
  let present: Map<string, string> | undefined
  if (head !== undefined) {
    try {
      present = await listScopes(store, head)
      writeTreeRecord(store, head, new Map(present))
    } catch {
      // a commit git does not know (the files said otherwise): HEAD as git reads it, recorded nowhere
    }
  }
  present ??= await listScopes(store)
  const scopes = opts.scopes ? normaliseScopes(opts.scopes) : [...present.keys()].sort()
  const trees = opts.scopes ? await currentTrees(store, scopes) : new Map<string, string | null>(present)
  const listed = new Map<string, TreeEntry[]>()
  let total = 0
  for (const scope of scopes) {
    const tree = trees.get(scope)
    if (!tree) continue
    const entries = await listTree(store, tree)
    listed.set(scope, entries)
    total += entries.length
  }
  let done = 0
  opts.onProgress?.(0, total)
  const warn = opts.onWarning ?? (() => {})
  for (const scope of scopes) {
    const tree = trees.get(scope)
    if (!tree) {
      removeScopeFiles(store, scope)
      continue
    }
    await buildScope(store, scope, tree, warn, listed.get(scope), () => opts.onProgress?.(++done, total))
  }
  if (!opts.scopes) {
    for (const scope of scopesOnDisk(store)) if (!present.has(scope)) removeScopeFiles(store, scope)
  }
  const all = await status(store)
  return all.filter((s) => scopes.includes(s.scope))
}

export async function status(store: Store): Promise<IndexStatus[]> {
  const present = await listScopes(store)
  const scopes = [...new Set([...present.keys(), ...scopesOnDisk(store)])].sort()
  return scopes.map((scope) => {
    const current = present.get(scope) ?? null
    const meta = readMeta(store, scope)
    if (!meta) return {scope, docs: 0, tree: null, fresh: current === null, bytes: 0, delta: 0}
    let deltaBytes = 0
    for (const file of [deltaPath(store, scope), postingsPath(store, scope)]) {
      try {
        deltaBytes += statSync(file).size
      } catch {
        // absent
      }
    }
    const delta = readDelta(store, scope, meta, () => {})
    let docs = meta.docs
    for (const c of delta?.changes ?? []) docs += (c.doc ? 1 : 0) - (c.before ? 1 : 0)
    const tree = delta?.tree ?? meta.tree
    return {scope, docs, tree, fresh: tree === current, bytes: meta.bytes + deltaBytes, delta: delta?.changes.length ?? 0}
  })
}

/**
 * Keeps each scope's index loaded between searches (for a long-lived server). Each search
 * reads HEAD from the repository's files; while it is the commit the scope trees were
 * listed at, no git runs at all. A new commit costs one `git ls-tree`, a `git diff-tree`
 * per changed scope, and applies only what changed, in memory and to the delta file.
 */
export class WarmEngine {
  private readonly engine: IndexEngine
  constructor(store: Store) {
    this.engine = new IndexEngine(store, true)
  }
  search(query: string, opts: SearchOptions): Promise<SearchHit[]> {
    return this.engine.search(query, opts)
  }
  /** Load (building where needed) the index of every scope at HEAD, so that the first search is warm too. */
  async preload(onWarning: (message: string) => void = () => {}): Promise<void> {
    const present = await listScopes(this.engine.store)
    const held = await this.engine.hold([...present.keys()].sort(), onWarning)
    held.release()
  }
  /** Up to n words of the loaded curated scopes' indexes, spread over their term maps, with their scope: for a server to run its code before its first request. */
  sampleTerms(n: number): {scope: string; term: string}[] {
    return this.engine.sampleTerms(n)
  }
  /**
   * The indexes of these scopes at HEAD (or at `head`, as for a search), loaded where needed
   * and kept as they are until `release()`: for a caller that uses them across awaits (a
   * write's neighbour lookup searches, then checks that the index it searched holds every
   * signed memory). Calls meanwhile at another commit do not move them (see IndexEngine).
   * Release in a `finally`: while held, an index that another commit's call needs is loaded
   * again from its files instead of moved in memory.
   */
  async hold(scopes: string[], opts: {head?: string; onWarning?: (message: string) => void} = {}): Promise<IndexHold> {
    const list = normaliseScopes(scopes)
    const {indexes, release} = await this.engine.hold(list, opts.onWarning ?? (() => {}), opts.head)
    const by = new Map(indexes.map((o) => [o.scope, o]))
    return {
      search: (query, o) => searchIn(indexes, query, o.informative === undefined ? parseQuery(query) : undefined, {...o, scopes: list}),
      indexedBlobs: (scope) => {
        const o = by.get(formatScope(parseScope(scope)))
        if (!o) return {key: 'no tree', blobs: () => new Map()}
        return {key: `${o.held.tree}\0${o.held.build}`, blobs: () => new Map(docBlobs(o.ms))}
      },
      release,
    }
  }
  /** The path and blob id of every memory the indexes of these scopes hold at HEAD (loading them where needed), in path order per scope. */
  async documents(scopes: string[], onWarning: (message: string) => void = () => {}): Promise<{scope: string; path: string; blob: string}[]> {
    const out: {scope: string; path: string; blob: string}[] = []
    const {indexes, release} = await this.engine.hold(normaliseScopes(scopes), onWarning)
    try {
      for (const {scope, ms} of indexes) {
        const docs = [...docBlobs(ms)].map(([path, blob]) => ({scope, path, blob}))
        out.push(...docs.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)))
      }
    } finally {
      release()
    }
    return out
  }
  close(): void {
    this.engine.close()
  }
}

/** Indexes held for one caller (WarmEngine.hold): each stays the index of the tree it was held at until released. */
export interface IndexHold {
  /** a search of the held indexes, exactly as WarmEngine.search ranks it (without reading HEAD or moving any index) */
  search(query: string, opts: Omit<SearchOptions, 'scopes' | 'head'>): SearchHit[]
  /**
   * The blob id per path of a held scope's index, with a key naming that state (its tree and
   * build); no paths at all when the commit holds no folder for the scope.
   */
  indexedBlobs(scope: string): {key: string; blobs: () => Map<string, string>}
  /** lets bringUp move these indexes in memory again; once is enough, more are ignored */
  release(): void
}

/** Memories in the indexes of these scopes, from the files' first lines (a delta's changes not counted): how large a store is, cheaply. */
export function indexedDocs(store: Store, scopes: string[]): number {
  let n = 0
  for (const scope of normaliseScopes(scopes)) n += readMeta(store, scope)?.docs ?? 0
  return n
}

// ---- the engine -----------------------------------------------------------------------

/** Each document of a loaded index: its path and the blob id it was indexed from. */
function* docBlobs(ms: Index): Generator<[string, string]> {
  const m = internals(ms)
  for (const [id, path] of m._documentIds) {
    const blob = (m._storedFields.get(id) as {blob?: unknown} | undefined)?.blob
    if (typeof blob === 'string') yield [path, blob]
  }
}

interface Loaded {
  ms: Index
  tree: string
  /** the full index file this was loaded from (its build id) */
  build: string
  /** set when `ms` is only the part of the index a neighbour lookup asked for (PartialScope) */
  partial?: PartialScope
}

/** A scope's index as a search uses it. */
interface Opened {
  scope: string
  ms: Index
  counts: TermCounts
  partial?: PartialScope
  /** what it was opened from (its tree and build) */
  held: Loaded
}

/** A ranked document of one scope, with what a hit needs. */
interface RankedHit {
  scope: string
  id: string
  score: number
  stored: Omit<IndexDoc, 'path'>
  /** the index terms it matched (for its snippet) */
  terms: () => string[]
}

const byRank = (a: RankedHit, b: RankedHit) => b.score - a.score || (a.scope < b.scope ? -1 : a.scope > b.scope ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

/** One scope's hits, best first, ties by path: the best k of them. */
interface RankSource {
  top(k: number): RankedHit[]
}

function rankSource(scope: string, ms: Index, terms: QueryTerm[], rq: RankQuery): RankSource {
  if (rankable(ms, rq)) {
    const r = new Ranking(ms, rq, BOOST)
    const stored = internals(ms)._storedFields as Map<number, Omit<IndexDoc, 'path'>>
    return {top: (k) => r.top(k, roundScore).map((h) => ({scope, id: h.id, score: h.score, stored: stored.get(h.shortId)!, terms: () => r.terms(h.shortId)}))}
  }
  // an index holding discarded documents (a neighbour lookup's partial one): MiniSearch ranks it
  const {query, options} = miniQuery(terms)
  const all = ms
    .search(query, options)
    .map((r): RankedHit => ({scope, id: r.id as string, score: roundScore(r.score), stored: r as unknown as Omit<IndexDoc, 'path'>, terms: () => r.terms}))
    .sort(byRank)
  return {top: (k) => all.slice(0, k)}
}

/**
 * Every index's hits for these terms, best first; ties by scope, then path: the same
 * order whatever order the indexes were built in. Lazily: the best 16 of each scope
 * first, then more when the caller reads on (the serving gate may pass over some).
 */
function* ranked(indexes: {scope: string; ms: Index}[], terms: QueryTerm[]): Generator<RankedHit> {
  const rq = rankQuery(terms)
  const sources = indexes.map(({scope, ms}) => rankSource(scope, ms, terms, rq))
  let pos = 0
  for (let k = 16; ; k *= 4) {
    const lists = sources.map((s) => s.top(k))
    const merged = lists.flat().sort(byRank)
    // the first k are the best k of all; when no scope had k, all there is
    const complete = lists.every((l) => l.length < k)
    const upto = complete ? merged.length : k
    for (; pos < upto; pos++) yield merged[pos]
    if (complete) return
  }
}

/** A search of indexes already opened (SearchOptions' scopes and head are not read: the indexes are these). */
function searchIn(indexes: Opened[], query: string, terms: QueryTerm[] | undefined, opts: SearchOptions): SearchHit[] {
  const query2 = terms ?? informativeTerms(query, indexes, opts.informative!)
  if (query2.length === 0) return []
  const limit = opts.limit ?? DEFAULT_LIMIT
  const hits: SearchHit[] = []
  for (const r of ranked(indexes, query2)) {
    if (hits.length >= limit) break
    const doc = r.stored
    let hit: SearchHit = {
      scope: r.scope,
      path: r.id,
      title: doc.title,
      author: doc.author,
      origin: doc.origin,
      tainted: doc.tainted,
      reviewed_by: doc.reviewed_by,
      blob: doc.blob,
      score: r.score,
      snippet: '',
      tags: doc.tags,
    }
    let body = doc.body
    if (opts.serve) {
      const served = opts.serve(hit)
      if (!served) continue
      hit = {...hit, title: served.title, author: served.author, origin: served.origin, tainted: served.tainted, reviewed_by: served.reviewed_by, tags: served.tags}
      body = served.body
    }
    hit = opts.bodies ? {...hit, body} : {...hit, snippet: makeSnippet(body, new Set(r.terms()))}
    if (!opts.filter || opts.filter(hit)) hits.push(hit)
  }
  return hits
}

/**
 * The part of a scope's index one neighbour lookup needs, from its postings file: a
 * MiniSearch index with the full index's statistics (document count, average field
 * lengths), the postings of only the terms asked for (read on demand) and only the
 * documents they hold, and the delta replayed as a full load replays it (a replaced
 * document discarded, its postings dropped as remove() drops them, the new one added).
 * MiniSearch then scores these terms exactly as over the full index. No stored fields:
 * a hit is a path, read from its file by the caller.
 */
class PartialScope implements TermCounts {
  readonly ms: Index
  private readonly inner: MiniInternals
  /** short ids of the full index's documents the delta replaced or removed */
  private readonly removed = new Set<number>()
  private readonly read = new Set<string>()

  constructor(
    readonly file: Postings,
    delta: Delta | undefined,
  ) {
    const h = file.header
    // as checkIds for a full index: a next id far above the documents is a damaged or planted file
    if (!Number.isSafeInteger(h.nextId) || h.nextId < 0 || h.nextId > nextIdBound(h.documentCount, h.dirtCount)) throw new Error('the postings file names an out-of-bounds next id')
    this.ms = MiniSearch.loadJS<IndexDoc>(
      {
        documentCount: h.documentCount, nextId: h.nextId, documentIds: {}, fieldIds: h.fieldIds, fieldLength: {},
        averageFieldLength: [...h.averageFieldLength], storedFields: {}, dirtCount: h.dirtCount, index: [], serializationVersion: 2,
      } as unknown as Parameters<typeof MiniSearch.loadJS>[0],
      OPTIONS,
    )
    this.inner = internals(this.ms)
    // in the delta's order, as loadScope's applyDoc: the same sums, so the same averages to the last bit
    for (const c of delta?.changes ?? []) {
      const old = file.byPath(c.path)
      if (old) {
        this.addDoc(old.sid, old.path, old.lengths)
        this.removed.add(old.sid)
        this.ms.discard(c.path)
      }
      if (c.doc) this.ms.add(c.doc)
    }
  }

  private addDoc(sid: number, path: string, lengths: number[]): void {
    this.inner._documentIds.set(sid, path)
    this.inner._idToShortId.set(path, sid)
    this.inner._fieldLength.set(sid, lengths)
  }

  /** The term's postings as the full index holds them after its delta: the file's (less what the delta removed), then the delta's. */
  load(term: string): Map<number, Map<number, number>> | undefined {
    if (this.read.has(term)) return this.inner._index.get(term)
    this.read.add(term)
    const base = this.file.term(term)
    if (!base) return this.inner._index.get(term)
    const merged = base.read()
    for (const [field, docs] of merged) {
      for (const sid of this.removed) docs.delete(sid)
      if (docs.size === 0) merged.delete(field)
    }
    for (const [field, docs] of this.inner._index.get(term) ?? []) {
      const into = merged.get(field) ?? new Map<number, number>()
      for (const [sid, tf] of docs) into.set(sid, tf)
      merged.set(field, into)
    }
    if (merged.size > 0) this.inner._index.set(term, merged)
    return merged.size > 0 ? merged : undefined
  }

  /** Before a search for the term: every document its postings name, with its field lengths (the search skips any it does not know). */
  prepare(term: string): void {
    for (const docs of this.load(term)?.values() ?? []) {
      for (const sid of docs.keys()) {
        if (this.inner._documentIds.has(sid)) continue
        const d = this.file.bySid(sid)
        if (!d) throw new Error(`postings name document ${sid}, which the file does not hold`)
        this.addDoc(sid, d.path, d.lengths)
      }
    }
  }

  atLeast(term: string): number {
    if (this.read.has(term)) return this.inner._index.get(term) ? docFreq(this.inner._index.get(term)) : -1
    const base = this.file.term(term)
    const added = this.inner._index.get(term)
    if (base) return Math.max(0, base.docs - this.removed.size)
    return docFreqAtLeast(added)
  }

  exactly(term: string): number {
    if (this.read.has(term)) return docFreq(this.inner._index.get(term))
    const base = this.file.term(term)
    if (!base) return docFreq(this.inner._index.get(term))
    // the file's count, less the replaced documents that held it, plus the delta's (new short ids: no overlap)
    return base.docs - base.holding(this.removed) + docFreq(this.inner._index.get(term))
  }
}

/** The scope's postings file when it is the one its index names (by hash) and reads; undefined sends the caller to the full index. */
function openPartial(store: Store, scope: string, meta: IndexMeta, delta: Delta | undefined): PartialScope | undefined {
  if (meta.postings === undefined) return undefined
  const file = openPostings(postingsPath(store, scope), meta.postings)
  if (!file) return undefined
  try {
    return new PartialScope(file, delta)
  } catch {
    file.close()
    return undefined
  }
}

/** The postings file's bytes for a full index, as loaded or built (before any delta). */
function postingsOf(ms: Index): Buffer {
  const m = internals(ms)
  return encodePostings({
    documentCount: m._documentCount, nextId: m._nextId, fieldIds: m._fieldIds, averageFieldLength: m._avgFieldLength,
    dirtCount: m._dirtCount, documentIds: m._documentIds, fieldLength: m._fieldLength, terms: m._index,
  })
}

/** Write a missing or damaged postings file again from its loaded index, when it comes out as the file the index names. */
function healPostings(store: Store, scope: string, meta: IndexMeta, ms: Index): void {
  try {
    const bytes = postingsOf(ms)
    if (meta.postings !== undefined && postingsHash(bytes) === meta.postings) writeAtomic(postingsPath(store, scope), bytes)
  } catch {
    // a folder we cannot write: the next lookup loads the full index again
  }
}

/**
 * Concurrent calls on one warm engine. `engram mcp` and `engram serve` answer one call at a
 * time (a call the MCP client cancels keeps its turn until its handler ends: mcp/server.ts),
 * so today no two of their calls overlap; before that fix a cancelled call's handler ran on
 * beside the next call, at another commit if the agent moved the ref between them. The
 * engine does not rely on its callers for that: it is safe under overlap on its own. bringUp moves the engine's index of a scope to another tree in place,
 * across awaits (git diff-tree, cat-file), and a neighbour lookup uses what it got across
 * awaits too: it searches, then checks the scope's signed manifest against the blobs of the
 * index it searched. Unguarded, a call at another commit moved that index under it: the
 * search could run on a half-moved index (a signed memory already removed), and the check
 * on the index after the other call, or its own re-ensure, had moved it back: so it passed.
 * Two rules close that, each cheap:
 * - one turn at a time (`locked`): whatever loads or moves indexes (ensure, with the trees
 *   it lists and the files it writes) runs alone, and a search reads the indexes in that
 *   same turn, so no call ever sees an index while it is being moved;
 * - an index kept by a caller past its turn (`hold`, until released) is never moved in
 *   place: a call that needs that scope at another tree loads it from the files instead
 *   (as it does when nothing is loaded), and that becomes the engine's index; the one kept
 *   is dropped when released. A lookup's view is thus one index from search to check.
 * Moving in place stays the path of every call that does not overlap another, which is
 * every call engram mcp answers unless one was cancelled: the cost is a promise chain and
 * a counter per call, and a load from the files only when an overlapping call needs another
 * commit. The alternatives cost every call: cloning the index at each HEAD move (a copy of
 * every document's postings), or keeping the turn through a lookup's awaits on its gate.
 */
class IndexEngine {
  private readonly loaded = new Map<string, Loaded>()
  /** scope trees of commit `head`, the last HEAD seen (see trees()) */
  private known: {head: string; trees: Map<string, string | null>} | undefined
  /** the end of the last turn taken (see locked) */
  private turn: Promise<unknown> = Promise.resolve()
  /** held indexes (by the object bringUp would move) and how many holds each has */
  private readonly pins = new Map<Index, number>()

  constructor(
    readonly store: Store,
    private readonly warm = false,
  ) {}

  /** Run `step` once every turn taken before it has ended, and alone: nothing that loads or moves indexes (ensure) runs outside a turn. */
  private locked<T>(step: () => Promise<T>): Promise<T> {
    const p = this.turn.then(step)
    this.turn = p.then(
      () => {},
      () => {},
    )
    return p
  }

  /** The indexes of these scopes at HEAD (or `head`), which bringUp does not move until `release()`. */
  hold(scopes: string[], warn: (message: string) => void, head?: string): Promise<{indexes: Opened[]; release: () => void}> {
    return this.locked(async () => {
      const indexes = await this.ensure(scopes, warn, 'full', head)
      for (const {ms} of indexes) this.pins.set(ms, (this.pins.get(ms) ?? 0) + 1)
      let released = false
      const release = () => {
        if (released) return
        released = true
        for (const {ms} of indexes) {
          const n = (this.pins.get(ms) ?? 1) - 1
          if (n > 0) this.pins.set(ms, n)
          else this.pins.delete(ms)
        }
      }
      return {indexes, release}
    })
  }

  sampleTerms(n: number): {scope: string; term: string}[] {
    const out: {scope: string; term: string}[] = []
    const scopes = [...this.loaded].filter(([scope, l]) => !scope.startsWith('run:') && !l.partial)
    for (const [scope, {ms}] of scopes) {
      const size = internals(ms)._index
      const step = Math.max(1, Math.floor(size.size / Math.max(1, Math.ceil(n / scopes.length))))
      let i = 0
      for (const [term] of internals(ms)._index) {
        if (i++ % step !== 0) continue
        out.push({scope, term})
        if (out.length >= n) return out
      }
    }
    return out
  }

  async search(query: string, opts: SearchOptions): Promise<SearchHit[]> {
    // syntax errors before anything is opened
    const terms = opts.informative === undefined ? parseQuery(query) : undefined
    const warn = opts.onWarning ?? (() => {})
    // in one turn: the indexes are searched as ensure left them (the search itself does not wait)
    return this.locked(async () => searchIn(await this.ensure(normaliseScopes(opts.scopes), warn, 'full', opts.head), query, terms, opts))
  }

  /** See `nominate` (the function): from the postings files where they are good, or from full indexes whose postings files are written again. */
  async nominate(text: string, opts: {scopes: string[]; limit: number; informative: number; onWarning?: (message: string) => void}, mode: 'postings' | 'rewrite'): Promise<Nominee[]> {
    const indexes = await this.locked(() => this.ensure(normaliseScopes(opts.scopes), opts.onWarning ?? (() => {}), mode))
    try {
      const terms = informativeTerms(text, indexes, opts.informative)
      if (terms.length === 0) return []
      for (const {partial: p} of indexes) for (const t of terms) p?.prepare(t.term)
      const out: Nominee[] = []
      for (const {scope, id, score} of ranked(indexes, terms)) {
        if (out.length >= opts.limit) break
        out.push({scope, path: id, score})
      }
      return out
    } finally {
      for (const {partial: p} of indexes) p?.file.close()
    }
  }

  /** Load (or build) the index of every scope at HEAD; returns those that have memory. `partial`: see nominate. Only in a turn (locked). */
  private async ensure(scopes: string[], warn: (message: string) => void, partial: 'full' | 'postings' | 'rewrite' = 'full', head?: string): Promise<Opened[]> {
    const {trees, listed} = await this.trees(scopes, true, head)
    if (listed) return this.ensureAt(scopes, trees, warn, partial)
    try {
      return await this.ensureAt(scopes, trees, warn, partial)
    } catch {
      // remembered trees git cannot use (a damaged or forged record): list them again
      removeFile(treesPath(this.store))
      this.known = undefined
      return this.ensureAt(scopes, (await this.trees(scopes, false)).trees, warn, partial)
    }
  }

  private async ensureAt(scopes: string[], trees: Map<string, string | null>, warn: (message: string) => void, partial: 'full' | 'postings' | 'rewrite'): Promise<Opened[]> {
    const out: Opened[] = []
    for (const scope of scopes) {
      const tree = trees.get(scope) ?? null
      if (tree === null) {
        this.loaded.delete(scope)
        if (existsSync(indexPath(this.store, scope))) removeScopeFiles(this.store, scope)
        continue
      }
      let held = this.loaded.get(scope)
      if (!held || held.tree !== tree) held = await this.bringUp(scope, tree, held, warn, this.warm ? 'full' : partial)
      // a partial index is never held: it answers only the terms it was opened for
      if (this.warm && !held.partial) this.loaded.set(scope, held)
      out.push({scope, ms: held.ms, counts: held.partial ?? (this.warm ? heldCounts(held) : fullCounts(held.ms)), partial: held.partial, held})
    }
    return out
  }

  /** The scope's index at `tree`: the files brought up to date, then loaded, or what is held moved forward in memory. */
  private async bringUp(scope: string, tree: string, held: Loaded | undefined, warn: (message: string) => void, partial: 'full' | 'postings' | 'rewrite' = 'full'): Promise<Loaded> {
    const up = await upkeep(this.store, scope, tree, warn)
    if (up.loaded) return up.loaded
    if (partial !== 'full') {
      const p = partial === 'postings' ? openPartial(this.store, scope, up.meta, up.delta) : undefined
      if (p) return {ms: p.ms, tree, build: up.meta.build, partial: p}
      // no good postings file: the full index, and the file written again from it
      return (
        loadScope(this.store, scope, up.meta, up.delta, warn, (ms) => healPostings(this.store, scope, up.meta, ms)) ??
        (await buildScope(this.store, scope, tree, warn))
      )
    }
    // a held index is moved in place only when no caller holds it (see IndexEngine), and it
    // leaves this.loaded first: a move that fails half-way is never taken for its old tree
    if (held && held.build === up.meta.build && !this.pins.has(held.ms)) {
      if (this.loaded.get(scope) === held) this.loaded.delete(scope)
      try {
        const changes = await diffTrees(this.store, held.tree, tree)
        const known = new Map((up.delta?.changes ?? []).map((c) => [c.path, c]))
        const fetch: TreeEntry[] = []
        for (const c of changes) {
          const d = known.get(c.path)
          if (!c.blob) applyDoc(held.ms, c.path, null)
          else if (d && (d.doc?.blob === c.blob || (d.doc === null && d.blob === c.blob))) applyDoc(held.ms, c.path, d.doc)
          else fetch.push({path: c.path, blob: c.blob})
        }
        const docs = await preparedDocs(this.store, scope, fetch, warn)
        for (const e of fetch) applyDoc(held.ms, e.path, docs.get(e.path) ?? null)
        return {ms: held.ms, tree, build: held.build}
      } catch {
        // the held tree is gone from git: load the files instead
      }
    }
    return loadScope(this.store, scope, up.meta, up.delta, warn) ?? (await buildScope(this.store, scope, tree, warn))
  }

  /**
   * Tree ids of the scopes at HEAD. HEAD is read from the repository's files (when they
   * are unclear a warm engine asks git, and a one-shot search runs `git ls-tree HEAD`, one
   * process instead of two, and records nothing). The trees of that commit come from
   * memory, or from the record of the last listing (treesPath), or from one `git ls-tree`
   * of that commit, which is then recorded. A commit fixes its trees, so while HEAD has
   * not moved a search starts no git process. `listed`: the trees came from git just now.
   * `given`: HEAD as the caller read it (a warm engine only), not read again.
   */
  async trees(scopes: string[], remembered: boolean, given?: string): Promise<{trees: Map<string, string | null>; listed: boolean}> {
    const head = this.warm ? (given ?? (await readHead(this.store.top))) : readHeadFromFiles(this.store.top)
    if (head === undefined) {
      this.known = undefined
      return {trees: await currentTrees(this.store, scopes), listed: true}
    }
    if (!remembered || this.known?.head !== head) this.known = {head, trees: new Map()}
    const known = this.known
    const has = () => scopes.every((s) => known.trees.has(s))
    if (remembered && !has()) {
      for (const [s, t] of readTreeRecord(this.store, head)) if (!known.trees.has(s)) known.trees.set(s, t)
    }
    if (remembered && has()) return {trees: known.trees, listed: false}
    let trees: Map<string, string | null>
    try {
      trees = await currentTrees(this.store, scopes, head)
    } catch {
      // a commit git does not know (the files said otherwise): ask for HEAD, remember nothing
      this.known = undefined
      return {trees: await currentTrees(this.store, scopes), listed: true}
    }
    for (const [s, t] of trees) known.trees.set(s, t)
    writeTreeRecord(this.store, head, known.trees)
    return {trees, listed: true}
  }

  close(): void {
    this.loaded.clear()
  }
}

// ---- files ----------------------------------------------------------------------------

/**
 * `<scope>.index`: one line of metadata (JSON), then `JSON.stringify` of the MiniSearch
 * index, read back with `MiniSearch.loadJSON` and the same options. `build` names this
 * one write, so that a delta made for another (a concurrent rebuild) is not replayed.
 */
interface IndexMeta {
  format: string
  scope: string
  tree: string
  build: string
  docs: number
  /** SHA-256 of the postings file written with this index (postings.ts); absent in an index written before them */
  postings?: string
  /** SHA-256 of the index's JSON (the file after its first line) */
  body: string
  /** size of the file (not stored: filled in when read) */
  bytes: number
}

/** A changed path since the full index's tree: its new document, or null when it is gone. */
interface DeltaChange {
  path: string
  /** the path's blob at `tree` (null when gone); a document that did not parse is null with its blob */
  blob: string | null
  doc: IndexDoc | null
  /** the path was a memory in the full index's tree */
  before: boolean
}

/** `<scope>.delta`: every path that differs between the full index's tree and `tree`. */
interface Delta {
  format: string
  scope: string
  build: string
  tree: string
  changes: DeltaChange[]
}

const META_BYTES = 4096

/** The metadata line of a scope's index file, reading only its start; undefined when absent, not ours or not sealed (readMetaOrWhy says which). */
function readMeta(store: Store, scope: string): IndexMeta | undefined {
  const m = readMetaOrWhy(store, scope)
  return typeof m === 'object' ? m : undefined
}

function readMetaOrWhy(store: Store, scope: string): IndexMeta | 'unsealed' | undefined {
  const file = indexPath(store, scope)
  let fd: number
  try {
    fd = openSync(file, 'r')
  } catch {
    return undefined
  }
  try {
    const buf = Buffer.alloc(META_BYTES)
    const n = readSync(fd, buf, 0, META_BYTES, 0)
    const text = buf.subarray(0, n).toString('utf8')
    const nl = text.indexOf('\n')
    if (nl < 0) return undefined
    return parseMeta(text.slice(0, nl), scope, statSync(file).size)
  } catch {
    return undefined
  } finally {
    closeSync(fd)
  }
}

const TREE_ID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/
const SHA256 = /^[0-9a-f]{64}$/

/**
 * Seals (docs/architecture.md, "The trust model"). Every index, delta and trees file in
 * the store carries an HMAC with the index key from engram's private folder, which the
 * agent's sandbox cannot read: so no one who can only write the store can make engram
 * read an index that is not what engram derived from git, such as a delta that empties a
 * memory's document and hides it from search and from a write's vote. A file whose seal
 * does not verify (planted, edited, or sealed under another ENGRAM_CONFIG_DIR) is rebuilt
 * with a warning. The index's first line seals its fields, the SHA-256 of the JSON after
 * it, and the postings file's hash (whose head hashes each term's postings: postings.ts).
 */
const sealOf = (label: string, text: string) => mac(indexSealKey(), label, text)

function metaFields(m: Omit<IndexMeta, 'bytes'>): string {
  return JSON.stringify({format: m.format, scope: m.scope, tree: m.tree, build: m.build, docs: m.docs, postings: m.postings, body: m.body})
}

/** The first line of an index file: its fields and their seal (always the same length for the same fields, whatever the hashes). */
function metaLine(m: Omit<IndexMeta, 'bytes'>): string {
  const fields = metaFields(m)
  return `${fields.slice(0, -1)},"seal":${JSON.stringify(sealOf('engram-index', fields))}}`
}

/** The index file's first line, checked: undefined when it is not an index of this scope in this format, 'unsealed' when its seal does not verify. */
function parseMeta(line: string, scope: string, bytes: number): IndexMeta | 'unsealed' | undefined {
  const m = JSON.parse(line) as Partial<IndexMeta> & {seal?: unknown}
  if (m?.format !== FORMAT || m.scope !== scope || typeof m.tree !== 'string' || !TREE_ID.test(m.tree) || typeof m.build !== 'string') return undefined
  if (!Number.isInteger(m.docs) || m.docs! < 0 || typeof m.body !== 'string' || !SHA256.test(m.body)) return undefined
  if (m.postings !== undefined && (typeof m.postings !== 'string' || !SHA256.test(m.postings))) return undefined
  const meta: IndexMeta = {format: FORMAT, scope, tree: m.tree, build: m.build, docs: m.docs!, postings: m.postings, body: m.body, bytes}
  return sameMac(m.seal, sealOf('engram-index', metaFields(meta))) ? meta : 'unsealed'
}

/**
 * For tests that stand in for an engram that writes a bad file (the parse and replay
 * checks behind the seal): the text of an index file with its first line sealed for
 * `body`, and a delta or trees file's sealed text. Whoever calls these holds the key.
 */
export const sealForTests = {
  index(line: string, body: string): string {
    // metaLine seals only the fields it names: the old seal in `line` is left out
    const m = JSON.parse(line) as Omit<IndexMeta, 'bytes'>
    return `${metaLine({...m, body: createHash('sha256').update(body, 'utf8').digest('hex')})}\n${body}`
  },
  delta: (json: string) => sealed('engram-index-delta', json),
  trees: (json: string) => sealed('engram-index-trees', json),
  /** the JSON of a sealed delta or trees file */
  open: (text: string) => text.slice(text.indexOf('\n') + 1),
}

/** `<seal>\n<json>`: a delta or trees file as written. */
function sealed(label: string, json: string): string {
  return `${sealOf(label, json)}\n${json}`
}

/** The JSON of a sealed file, or undefined when its seal does not verify (the file is then ignored and written again). */
function unseal(label: string, text: string): string | undefined {
  const nl = text.indexOf('\n')
  if (nl < 0) return undefined
  const json = text.slice(nl + 1)
  return sameMac(text.slice(0, nl), sealOf(label, json)) ? json : undefined
}

function readDelta(store: Store, scope: string, meta: IndexMeta, warn: (message: string) => void): Delta | undefined {
  let text: string
  try {
    text = readFileSync(deltaPath(store, scope), 'utf8')
  } catch {
    return undefined
  }
  const json = unseal('engram-index-delta', text)
  if (json === undefined) {
    warn(`search index delta for ${scope} is not sealed by this machine's engram (written by something else, or under another ENGRAM_CONFIG_DIR); recomputing it`)
    return undefined
  }
  try {
    const d = JSON.parse(json) as Delta
    if (d?.format !== FORMAT) return undefined // another format: recomputed quietly
    if (d.scope !== scope || typeof d.tree !== 'string' || !TREE_ID.test(d.tree) || !Array.isArray(d.changes)) throw new Error('not a delta of this scope')
    for (const c of d.changes) {
      if (typeof c?.path !== 'string' || typeof c.before !== 'boolean') throw new Error('a change without its path')
      if (c.doc !== null && (typeof c.doc !== 'object' || c.doc.path !== c.path || typeof c.doc.body !== 'string' || !Array.isArray(c.doc.tags))) throw new Error(`a bad document for ${c.path}`)
    }
    // a delta made for another build of the full index does not apply
    return d.build === meta.build ? d : undefined
  } catch (error) {
    warn(`search index delta for ${scope} is unreadable (${(error as Error).message}); recomputing it`)
    return undefined
  }
}

/**
 * Bring a scope's files to `tree` without loading the full index: the delta of paths that
 * differ from the index's tree (documents of the previous delta reused by blob id), or,
 * past deltaBound, a fold (load, replay, write a new full index). `loaded` is set when a
 * full index was loaded or built on the way.
 */
async function upkeep(store: Store, scope: string, tree: string, warn: (message: string) => void): Promise<{meta: IndexMeta; delta?: Delta; loaded?: Loaded}> {
  const got = readMetaOrWhy(store, scope)
  const meta = typeof got === 'object' ? got : undefined
  if (!meta) {
    if (got === 'unsealed') warn(`search index for ${scope} is not sealed by this machine's engram (written by something else, or under another ENGRAM_CONFIG_DIR); rebuilding it`)
    else if (existsSync(indexPath(store, scope))) warn(`search index for ${scope} is unreadable or from an older format; rebuilding it`)
    const loaded = await buildScope(store, scope, tree, warn)
    return {meta: readMeta(store, scope) ?? metaOf(scope, loaded), loaded}
  }
  if (meta.tree === tree) {
    removeFile(deltaPath(store, scope))
    return {meta}
  }
  const prev = readDelta(store, scope, meta, warn)
  if (prev?.tree === tree) return {meta, delta: prev}
  let changes
  try {
    changes = await diffTrees(store, meta.tree, tree)
  } catch (error) {
    warn(`search index for ${scope} cannot be updated from tree ${meta.tree.slice(0, 12)} (${(error as Error).message}); rebuilding it`)
    const loaded = await buildScope(store, scope, tree, warn)
    return {meta: readMeta(store, scope) ?? metaOf(scope, loaded), loaded}
  }
  const reuse = new Map((prev?.changes ?? []).map((c) => [c.path, c]))
  const wasBefore = new Map(changes.map((c) => [c.path, c.before]))
  const out: DeltaChange[] = []
  const fetch: TreeEntry[] = []
  for (const c of changes) {
    const p = reuse.get(c.path)
    if (!c.blob) out.push({path: c.path, blob: null, doc: null, before: c.before})
    else if (p && p.blob === c.blob) out.push({...p, before: c.before})
    else fetch.push({path: c.path, blob: c.blob})
  }
  const docs = await preparedDocs(store, scope, fetch, warn)
  for (const e of fetch) out.push({path: e.path, blob: e.blob, doc: docs.get(e.path) ?? null, before: wasBefore.get(e.path)!})
  out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  const delta: Delta = {format: FORMAT, scope, build: meta.build, tree, changes: out}
  if (out.length > deltaBound(meta.docs)) {
    const loaded = loadScope(store, scope, meta, delta, warn)
    if (!loaded) {
      const built = await buildScope(store, scope, tree, warn)
      return {meta: readMeta(store, scope) ?? metaOf(scope, built), loaded: built}
    }
    const folded = writeIndex(store, scope, tree, loaded.ms)
    return {meta: folded.meta, loaded: {ms: loaded.ms, tree, build: folded.meta.build}}
  }
  ensureIndexDir(store)
  writeAtomic(deltaPath(store, scope), sealed('engram-index-delta', JSON.stringify(delta)))
  return {meta, delta}
}

function metaOf(scope: string, loaded: Loaded): IndexMeta {
  return {format: FORMAT, scope, tree: loaded.tree, build: loaded.build, docs: loaded.ms.documentCount, body: '', bytes: 0}
}

/** Load a scope's full index and replay its delta; undefined (with a warning, files removed) when the file is unreadable. `loadedBase` sees the index before the delta. */
function loadScope(store: Store, scope: string, meta: IndexMeta, delta: Delta | undefined, warn: (message: string) => void, loadedBase?: (ms: Index) => void): Loaded | undefined {
  let ms: Index
  try {
    const bytes = readFileSync(indexPath(store, scope))
    const nl = bytes.indexOf(10)
    const head = nl < 0 ? undefined : parseMeta(bytes.subarray(0, nl).toString('utf8'), scope, meta.bytes)
    if (typeof head !== 'object' || head.build !== meta.build) throw new Error('the file changed while it was read')
    const body = bytes.subarray(nl + 1)
    // the sealed first line names the hash of what follows it: an edited body is not loaded
    if (createHash('sha256').update(body).digest('hex') !== head.body) throw new Error('its contents are not what its sealed first line names')
    ms = MiniSearch.loadJSON<IndexDoc>(body.toString('utf8'), OPTIONS)
    checkIds(ms)
  } catch (error) {
    warn(`search index for ${scope} is unreadable (${(error as Error).message}); rebuilding it`)
    removeScopeFiles(store, scope)
    return undefined
  }
  loadedBase?.(ms)
  try {
    for (const c of delta?.changes ?? []) applyDoc(ms, c.path, c.doc)
  } catch (error) {
    // a delta that parses but does not replay (written by something else): start over
    warn(`search index delta for ${scope} is unreadable (${(error as Error).message}); rebuilding the index`)
    removeScopeFiles(store, scope)
    return undefined
  }
  return {ms, tree: delta?.tree ?? meta.tree, build: meta.build}
}

/**
 * The ids of a loaded index are small whole numbers below its next id, and the next id is
 * not far above the documents (each later add takes it and counts on): a file with a huge
 * next id would make every document added after it cost memory in proportion (rank.ts
 * sizes its arrays by the largest id). Such a file is unreadable, and is rebuilt.
 */
/** The highest next id an index of these counts may name (see checkIds). */
function nextIdBound(documentCount: number, dirtCount: number): number {
  return 8 * (documentCount + dirtCount) + 1024
}

function checkIds(ms: Index): void {
  const m = internals(ms)
  let top = -1
  for (const id of m._documentIds.keys()) {
    if (!Number.isSafeInteger(id) || id < 0) throw new Error('a document id that is not a small whole number')
    if (id > top) top = id
  }
  if (!Number.isSafeInteger(m._nextId) || m._nextId <= top || m._nextId > nextIdBound(m._documentCount, m._dirtCount)) throw new Error(`next document id ${String(m._nextId).slice(0, 20)} is out of bounds`)
}

function writeIndex(store: Store, scope: string, tree: string, ms: Index): {meta: IndexMeta} {
  const build = randomBytes(8).toString('hex')
  const postings = postingsOf(ms)
  const hash = postingsHash(postings)
  const fields = {format: FORMAT, scope, tree, build, docs: ms.documentCount, postings: hash}
  ensureIndexDir(store)
  removeFile(deltaPath(store, scope))
  // the postings first: until the index names them, a reader finds the old hash and does not use them
  writeAtomic(postingsPath(store, scope), postings)
  // the index in pieces (persist.ts): `${line}\n${JSON.stringify(ms)}`, the line naming the
  // hash of the JSON after it, so written last, over a line of the same length
  const bodyHash = createHash('sha256')
  const placeholder = metaLine({...fields, body: '0'.repeat(64)})
  const written = writeAtomicPieces(indexPath(store, scope), (function* () {
    yield `${placeholder}\n`
    for (const piece of indexJsonPieces(ms)) {
      bodyHash.update(piece, 'utf8')
      yield piece
    }
  })(), () => {
    const body = bodyHash.digest('hex')
    return {at: 0, text: metaLine({...fields, body}), body}
  })
  return {meta: {...fields, body: written.head.body, bytes: written.bytes}}
}

/** The bytes are the blob git names by this id (`git cat-file` does not check a loose object's content). */
function isBlob(data: Buffer, blob: string): boolean {
  if (blob.length === 40) return gitBlobHash(data) === blob
  return createHash('sha256').update(`blob ${data.length}\0`).update(data).digest('hex') === blob
}

/**
 * The documents for these blobs, read in one `git cat-file --batch` and prepared for the
 * index; an unparseable memory is left out with a warning. A blob missing from git, or
 * whose bytes are not that blob, fails the whole call: an index sealed without the memory
 * would hide it from search and from every write's vote for as long as the index lasts,
 * after the object is put back (docs/architecture.md, "The trust model").
 */
async function preparedDocs(store: Store, scope: string, entries: TreeEntry[], warn: (message: string) => void, onDoc?: () => void): Promise<Map<string, IndexDoc>> {
  const out = new Map<string, IndexDoc>()
  for await (const {index, data} of catBlobs(store, entries.map((e) => e.blob))) {
    const {path, blob} = entries[index]
    onDoc?.()
    if (!data || !isBlob(data, blob)) {
      throw new EngramError('verification', `The store's git objects are damaged: the blob ${blob.slice(0, 12)} of ${scope}: ${path} is ${data ? 'not what its id names' : 'missing'}; the search index is not built without it.`, {
        nextStep: 'run `git fsck` in the store and restore the object (from a remote or a backup), then try again',
      })
    }
    try {
      out.set(path, prepareDoc(path, blob, await parseMemoryText(data.toString('utf8'), `${scope}: ${path}`)))
    } catch (error) {
      warn(`${(error as Error).message} Not indexed.`)
    }
  }
  return out
}

/** Build one scope's index from its tree and write it (replacing any delta). */
async function buildScope(store: Store, scope: string, tree: string, warn: (message: string) => void, entries?: TreeEntry[], onDoc?: () => void): Promise<Loaded> {
  const list = entries ?? (await listTree(store, tree))
  const docs = await preparedDocs(store, scope, list, warn, onDoc)
  const ms = newIndex()
  // in path order, so a rebuild adds the same documents in the same order
  ms.addAll(list.map((e) => docs.get(e.path)).filter((d): d is IndexDoc => d !== undefined))
  const {meta} = writeIndex(store, scope, tree, ms)
  removeFile(legacyShardPath(store, scope))
  return {ms, tree, build: meta.build}
}

/** The `n` rarest words of a plain text that occur in the indexes (ties by the word), as exact query terms. */
function informativeTerms(text: string, indexes: {counts: TermCounts}[], n: number): QueryTerm[] {
  if (n <= 0) return []
  const lookups = indexes.map(({counts}) => counts)
  const cands: {term: string; atLeast: number}[] = []
  for (const term of new Set(tokenize(text))) {
    let atLeast = -1
    for (const get of lookups) {
      const k = get.atLeast(term)
      if (k >= 0) atLeast = Math.max(atLeast, 0) + k
    }
    if (atLeast >= 0) cands.push({term, atLeast})
  }
  // exact counts in order of their lower bounds, until no later word can be among the rarest
  cands.sort((a, b) => a.atLeast - b.atLeast)
  const best: {term: string; df: number}[] = []
  const before = (a: {term: string; df: number}, b: {term: string; df: number}) => a.df < b.df || (a.df === b.df && a.term < b.term)
  for (const c of cands) {
    if (best.length >= n && c.atLeast > best[n - 1].df) break
    let df = 0
    for (const get of lookups) df += get.exactly(c.term)
    if (df === 0) continue
    const item = {term: c.term, df}
    if (best.length >= n && !before(item, best[n - 1])) continue
    let i = best.length
    while (i > 0 && before(item, best[i - 1])) i--
    best.splice(i, 0, item)
    if (best.length > n) best.pop()
  }
  return best.map(({term}) => ({term, mode: 'should', expand: false}))
}

function normaliseScopes(scopes: string[]): string[] {
  return [...new Set(scopes.map((s) => formatScope(parseScope(s))))].sort()
}

/** File-name key of a scope: `tenant:acme` → `tenant.acme` (kinds hold no dot, so this is reversible). */
function scopeKey(scope: string): string {
  return scope.replace(':', '.')
}

function indexPath(store: Store, scope: string): string {
  return store.abs(`${INDEX_DIR}/${scopeKey(scope)}.index`)
}

function deltaPath(store: Store, scope: string): string {
  return store.abs(`${INDEX_DIR}/${scopeKey(scope)}.delta`)
}

/** The write path's side file of the scope's full index (postings.ts). */
export function postingsPath(store: Store, scope: string): string {
  return store.abs(`${INDEX_DIR}/${scopeKey(scope)}.postings`)
}

/** The hand-written engine's file (before MiniSearch): removed when the scope is built. */
function legacyShardPath(store: Store, scope: string): string {
  return store.abs(`${INDEX_DIR}/${scopeKey(scope)}.shard`)
}

/**
 * The scope trees of one commit as last listed with git (see IndexEngine.trees), keyed by
 * the commit and the store's folder in the repository. Derived like the indexes: a missing
 * or unreadable record only costs a `git ls-tree`. Whoever can write the index folder can
 * forge it, as they can forge an index, and with the same limit: a wrong tree id can hide
 * results or answer from another indexed tree, but the caller (search.ts) serves a hit
 * only when the file on disk is the indexed blob and passes the serving gate.
 */
function treesPath(store: Store): string {
  return store.abs(`${INDEX_DIR}/trees`)
}

function readTreeRecord(store: Store, head: string): Map<string, string | null> {
  const out = new Map<string, string | null>()
  let record: {head?: unknown; prefix?: unknown; trees?: unknown}
  try {
    const json = unseal('engram-index-trees', readFileSync(treesPath(store), 'utf8'))
    if (json === undefined) return out
    record = JSON.parse(json) as typeof record
  } catch {
    return out
  }
  if (!record || record.head !== head || record.prefix !== store.prefix || !record.trees || typeof record.trees !== 'object') return out
  for (const [scope, tree] of Object.entries(record.trees)) {
    if (tree === null || (typeof tree === 'string' && TREE_ID.test(tree))) out.set(scope, tree)
  }
  return out
}

function writeTreeRecord(store: Store, head: string, trees: Map<string, string | null>): void {
  try {
    ensureIndexDir(store)
    writeAtomic(treesPath(store), sealed('engram-index-trees', JSON.stringify({head, prefix: store.prefix, trees: Object.fromEntries(trees)})))
  } catch {
    // an index folder we cannot write: searches still answer, listing trees with git
  }
}

/**
 * Temp file and rename: a reader sees the old file or the new one. No fsync (unlike
 * fsutil's writeFileAtomic, for files that must survive a crash): the index is derived, a
 * file lost to a power cut is rebuilt, and an fsync per scope costs seconds on a busy disk.
 */
function writeAtomic(path: string, text: string | Buffer): void {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
  writeFileSync(tmp, text)
  renameSync(tmp, path)
}

/**
 * writeAtomic, of text given in pieces (never held whole), then `head()`'s text written
 * over the same number of bytes at its offset before the rename; returns the bytes written.
 */
function writeAtomicPieces<H extends {at: number; text: string}>(path: string, pieces: Iterable<string>, head: () => H): {bytes: number; head: H} {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
  const fd = openSync(tmp, 'w')
  let bytes = 0
  let last: H
  const put = (b: Buffer, position?: number) => {
    for (let at = 0; at < b.length; ) at += writeSync(fd, b, at, b.length - at, position === undefined ? null : position + at)
  }
  try {
    for (const piece of pieces) {
      const b = Buffer.from(piece, 'utf8')
      put(b)
      bytes += b.length
    }
    last = head()
    put(Buffer.from(last.text, 'utf8'), last.at)
  } catch (error) {
    closeSync(fd)
    rmSync(tmp, {force: true})
    throw error
  }
  closeSync(fd)
  renameSync(tmp, path)
  return {bytes, head: last}
}

function removeFile(path: string): void {
  rmSync(path, {force: true})
}

function removeScopeFiles(store: Store, scope: string): void {
  removeFile(indexPath(store, scope))
  removeFile(deltaPath(store, scope))
  removeFile(postingsPath(store, scope))
  removeFile(legacyShardPath(store, scope))
}

function scopesOnDisk(store: Store): string[] {
  let names: string[]
  try {
    names = readdirSync(store.abs(INDEX_DIR))
  } catch {
    return []
  }
  const out = new Set<string>()
  for (const name of names) {
    const m = /^(org|(project|tenant|run)\.(.+))\.(?:index|shard)$/.exec(name)
    if (!m) continue
    const scope = m[1] === 'org' ? 'org' : `${m[2]}:${m[3]}`
    try {
      out.add(formatScope(parseScope(scope)))
    } catch {
      // not a file we wrote
    }
  }
  return [...out]
}

/** The index is derived data: keep it out of git even where the store's .gitignore does not say so. */
function ensureIndexDir(store: Store): void {
  const dir = store.abs(INDEX_DIR)
  mkdirSync(dir, {recursive: true})
  const ignore = `${dir}/.gitignore`
  if (!existsSync(ignore)) writeFileSync(ignore, '*\n')
}
