import {existsSync, readdirSync, readFileSync, writeFileSync, mkdirSync} from 'node:fs'

import {formatScope, parseScope} from '../store/scope.js'
import type {Store} from '../store/store.js'
import {bestFirst, makeSnippet, scoreDocs, ShardView} from './engine.js'
import type {Delta, DeltaDoc} from './shard.js'
import {
  CorruptIndexError,
  decodeDelta,
  encodeDelta,
  FORMAT_VERSION,
  LoadedShard,
  OldFormatError,
  peekHeader,
  removeFile,
  ShardBuilder,
  writeAtomic,
} from './shard.js'
import {catBlobs} from '../git/git.js'
import type {Provenance} from '../memory/memory.js'
import {currentTrees, diffTrees, listScopes, listTree, parseMemoryText, prepareDoc} from './source.js'
import {readHead, readHeadFromFiles} from './head.js'
import {parseQuery, tokenize} from './tokenize.js'
import type {QueryTerm} from './tokenize.js'

export {tokenize, stem, parseQuery, STOP_WORDS} from './tokenize.js'
export {readHead} from './head.js'

/**
 * The derived search index (DESIGN.md §6): one shard per scope under `.engram/index/`,
 * built from the scope's committed tree, kept fresh from `git diff-tree` through a small
 * delta segment, rebuilt from scratch with the same results at any time.
 */

export const INDEX_DIR = '.engram/index'

export interface SearchHit extends Provenance {
  /** git blob id of the indexed file (compare with the verified set before serving) */
  blob: string
  score: number
  snippet: string
  tags: string[]
  /** the indexed body, with `bodies` only (its snippet is then empty) */
  body?: string
}

export interface IndexStatus {
  scope: string
  /** live documents (base minus deletions plus delta) */
  docs: number
  /** tree id the shard reflects, or null when there is no shard */
  tree: string | null
  /** the shard reflects the scope's tree at HEAD */
  fresh: boolean
  /** bytes on disk (shard and delta) */
  bytes: number
  /** changes held in the delta segment (documents added or replaced, plus deletions) */
  delta: number
}

export interface SearchOptions {
  /** scopes the caller may read; nothing else is opened */
  scopes: string[]
  limit?: number
  /** applied before limiting, e.g. to keep only verified memory */
  filter?: (hit: SearchHit) => boolean
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
}

export const DEFAULT_LIMIT = 10

/** Past this many pending changes the delta is merged into a new base. */
export function deltaBound(baseDocs: number): number {
  return Math.min(1000, Math.max(200, Math.ceil(baseDocs * 0.05)))
}

export async function search(store: Store, query: string, opts: SearchOptions): Promise<SearchHit[]> {
  const engine = new IndexEngine(store)
  try {
    return await engine.search(query, opts)
  } finally {
    engine.close()
  }
}

/** Bring the shards of these scopes up to date (incrementally where a shard exists). */
export async function refresh(store: Store, scopes: string[], opts: {onWarning?: (message: string) => void} = {}): Promise<void> {
  const engine = new IndexEngine(store)
  try {
    await engine.ensure(normaliseScopes(scopes), opts.onWarning ?? (() => {}))
  } finally {
    engine.close()
  }
}

/** Rebuild shards from scratch (all scopes at HEAD by default; stale shards of vanished scopes are removed). */
export async function rebuild(
  store: Store,
  opts: {scopes?: string[]; onProgress?: (done: number, total: number) => void; onWarning?: (message: string) => void} = {},
): Promise<IndexStatus[]> {
  const head = readHeadFromFiles(store.top)
  const present = await listScopes(store)
  // what git listed is the trees of `head` only if HEAD did not move meanwhile
  if (head !== undefined && readHeadFromFiles(store.top) === head) writeTreeRecord(store, head, new Map(present))
  const scopes = opts.scopes ? normaliseScopes(opts.scopes) : [...present.keys()].sort()
  const trees = opts.scopes ? await currentTrees(store, scopes) : new Map<string, string | null>(present)
  const listed = new Map<string, Awaited<ReturnType<typeof listTree>>>()
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
      removeShard(store, scope)
      continue
    }
    await buildScope(store, scope, tree, warn, listed.get(scope), () => opts.onProgress?.(++done, total))
  }
  if (!opts.scopes) {
    for (const scope of shardScopesOnDisk(store)) if (!present.has(scope)) removeShard(store, scope)
  }
  const all = await status(store)
  return all.filter((s) => scopes.includes(s.scope))
}

export async function status(store: Store): Promise<IndexStatus[]> {
  const present = await listScopes(store)
  const scopes = [...new Set([...present.keys(), ...shardScopesOnDisk(store)])].sort()
  return scopes.map((scope) => {
    const current = present.get(scope) ?? null
    const head = peekHeader(shardPath(store, scope))
    if (!head) return {scope, docs: 0, tree: null, fresh: current === null, bytes: 0, delta: 0}
    let delta: Delta | undefined
    let deltaBytes = 0
    try {
      const text = readFileSync(deltaPath(store, scope), 'utf8')
      deltaBytes = Buffer.byteLength(text)
      delta = decodeDelta(text, scope)
      if (delta.build !== head.header.build) delta = undefined
    } catch {
      delta = undefined
    }
    const tree = delta?.tree ?? head.header.tree
    return {
      scope,
      docs: head.header.n - (delta?.deleted.length ?? 0) + (delta?.docs.length ?? 0),
      tree,
      fresh: tree === current,
      bytes: head.size + deltaBytes,
      delta: (delta?.deleted.length ?? 0) + (delta?.docs.length ?? 0),
    }
  })
}

/**
 * Keeps shards open between searches (for a long-lived server). Each search reads HEAD
 * from the repository's files; while it is the commit the scope trees were listed at, no
 * git runs at all. A new commit costs one `git ls-tree` and applies only what changed.
 */
export class WarmEngine {
  private readonly engine: IndexEngine
  constructor(store: Store) {
    this.engine = new IndexEngine(store, true)
  }
  search(query: string, opts: SearchOptions): Promise<SearchHit[]> {
    return this.engine.search(query, opts)
  }
  close(): void {
    this.engine.close()
  }
}

// ---- internals ----------------------------------------------------------------------

interface ShardState {
  base: LoadedShard
  delta: Delta | undefined
  view: ShardView
}

class IndexEngine {
  private readonly store: Store
  private readonly shards = new Map<string, ShardState>()
  /** scope trees of commit `head`, the last HEAD seen (see trees()) */
  private known: {head: string; trees: Map<string, string | null>} | undefined

  constructor(
    store: Store,
    private readonly warm = false,
  ) {
    this.store = store
  }

  /**
   * A shard's blocks are checked when a query first uses them, so damage can surface
   * mid-search: the shard is then dropped and rebuilt, with a warning, and the search
   * starts over (once per scope).
   */
  async search(query: string, opts: SearchOptions, rebuilt = new Set<string>()): Promise<SearchHit[]> {
    const terms = opts.informative === undefined ? parseQuery(query) : undefined
    const warn = opts.onWarning ?? (() => {})
    const views = await this.ensure(normaliseScopes(opts.scopes), warn)
    try {
      return this.answer(views, terms ?? informativeTerms(query, views, opts.informative!), opts)
    } catch (error) {
      if (!(error instanceof CorruptIndexError) || error.scope === undefined || rebuilt.has(error.scope)) throw error
      warn(`search index for ${error.scope} is damaged (${error.message}); rebuilding it`)
      this.drop(error.scope, true)
      rebuilt.add(error.scope)
      return this.search(query, opts, rebuilt)
    }
  }

  private answer(views: ShardView[], query: QueryTerm[], opts: SearchOptions): SearchHit[] {
    if (query.length === 0) return []
    const limit = opts.limit ?? DEFAULT_LIMIT
    const matched = new Set<string>()
    const scored = views.map((view) => scoreDocs(view, query, matched))
    const hits: SearchHit[] = []
    for (const c of bestFirst(scored, limit * 2)) {
      if (hits.length >= limit) break
      const rec = c.view.record(c.doc)
      const hit: SearchHit = {
        scope: c.view.scope,
        path: rec.path,
        title: rec.title,
        author: rec.author,
        origin: rec.origin,
        tainted: rec.tainted,
        reviewed_by: rec.reviewed_by,
        blob: rec.blob,
        score: c.score,
        snippet: opts.bodies ? '' : makeSnippet(rec.body, matched),
        tags: rec.tags,
        ...(opts.bodies ? {body: rec.body} : {}),
      }
      if (!opts.filter || opts.filter(hit)) hits.push(hit)
    }
    return hits
  }

  /** Make every scope's view current with HEAD; returns views for scopes that have memory. */
  async ensure(scopes: string[], warn: (message: string) => void): Promise<ShardView[]> {
    const {trees, listed} = await this.trees(scopes, true)
    if (listed) return this.ensureAt(scopes, trees, warn)
    try {
      return await this.ensureAt(scopes, trees, warn)
    } catch {
      // remembered trees git cannot use (a damaged or forged record): list them again
      removeFile(treesPath(this.store))
      this.known = undefined
      return this.ensureAt(scopes, (await this.trees(scopes, false)).trees, warn)
    }
  }

  private async ensureAt(scopes: string[], trees: Map<string, string | null>, warn: (message: string) => void): Promise<ShardView[]> {
    const views: ShardView[] = []
    for (const scope of scopes) {
      const tree = trees.get(scope) ?? null
      if (tree === null) {
        this.drop(scope, existsSync(shardPath(this.store, scope)))
        continue
      }
      let state = this.shards.get(scope) ?? this.load(scope, warn)
      const recorded = state ? (state.delta?.tree ?? state.base.header.tree) : null
      if (!state) {
        state = await this.build(scope, tree, warn)
      } else if (recorded !== tree) {
        try {
          state = await this.update(state, scope, recorded!, tree, warn)
        } catch (error) {
          if (!(error instanceof CorruptIndexError)) throw error
          warn(`search index for ${scope} is damaged (${error.message}); rebuilding it`)
          state = await this.build(scope, tree, warn)
        }
      }
      this.shards.set(scope, state)
      views.push(state.view)
    }
    return views
  }

  /**
   * Tree ids of the scopes at HEAD. HEAD is read from the repository's files (when they
   * are unclear a warm engine asks git, and a one-shot search runs `git ls-tree HEAD`, one
   * process instead of two, and records nothing). The trees of that commit come from
   * memory, or from the record of the last listing (treesPath), or from one `git ls-tree`
   * of that commit, which is then recorded. A commit fixes its trees, so while HEAD has
   * not moved a search starts no git process. `listed`: the trees came from git just now.
   */
  private async trees(scopes: string[], remembered: boolean): Promise<{trees: Map<string, string | null>; listed: boolean}> {
    const head = this.warm ? await readHead(this.store.top) : readHeadFromFiles(this.store.top)
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

  private load(scope: string, warn: (message: string) => void): ShardState | undefined {
    let base: LoadedShard | undefined
    try {
      base = LoadedShard.open(shardPath(this.store, scope), scope)
    } catch (error) {
      if (error instanceof OldFormatError) warn(`search index for ${scope} is from an older format (${error.message}); rebuilding it`)
      else warn(`search index for ${scope} is unreadable (${(error as Error).message}); rebuilding it`)
      removeShard(this.store, scope)
      return undefined
    }
    if (!base) return undefined
    let delta: Delta | undefined
    let text: string | undefined
    try {
      text = readFileSync(deltaPath(this.store, scope), 'utf8')
    } catch {
      text = undefined
    }
    if (text !== undefined) {
      try {
        delta = decodeDelta(text, scope)
        // a delta made for another build of the base (a concurrent rebuild) does not apply
        if (delta.build !== base.header.build) delta = undefined
      } catch (error) {
        if (!(error instanceof OldFormatError)) warn(`search index delta for ${scope} is unreadable (${(error as Error).message}); recomputing it`)
        delta = undefined
      }
      if (!delta) removeFile(deltaPath(this.store, scope))
    }
    try {
      return {base, delta, view: new ShardView(scope, base, delta)}
    } catch (error) {
      // the view reads the lengths of deleted documents
      if (!(error instanceof CorruptIndexError)) throw error
      warn(`search index for ${scope} is unreadable (${error.message}); rebuilding it`)
      base.close()
      removeShard(this.store, scope)
      return undefined
    }
  }

  private async build(scope: string, tree: string, warn: (message: string) => void): Promise<ShardState> {
    this.drop(scope, false)
    await buildScope(this.store, scope, tree, warn)
    const base = LoadedShard.open(shardPath(this.store, scope), scope)
    if (!base) throw new CorruptIndexError(`search index for ${scope} vanished while it was built`)
    return {base, delta: undefined, view: new ShardView(scope, base, undefined)}
  }

  /** Apply the paths that changed between two trees to the delta segment (or merge past the bound). */
  private async update(state: ShardState, scope: string, from: string, to: string, warn: (message: string) => void): Promise<ShardState> {
    let changes
    try {
      changes = await diffTrees(this.store, from, to)
    } catch (error) {
      warn(`search index for ${scope} cannot be updated from tree ${from.slice(0, 12)} (${(error as Error).message}); rebuilding it`)
      return this.build(scope, to, warn)
    }
    const base = state.base
    const prev = state.delta
    const deleted = new Set(prev?.deleted ?? [])
    const docs = new Map<string, DeltaDoc>((prev?.docs ?? []).map((d) => [d.path, d]))
    const fetch: {path: string; blob: string}[] = []
    for (const c of changes) {
      docs.delete(c.path)
      const id = base.docIndex(c.path)
      if (id >= 0) deleted.add(id)
      if (c.blob) fetch.push({path: c.path, blob: c.blob})
    }
    if (deleted.size + docs.size + fetch.length > deltaBound(base.header.n)) return this.build(scope, to, warn)
    for await (const {path, record, terms} of preparedDocs(this.store, scope, fetch, warn)) {
      docs.set(path, {...record, lens: terms.lens, terms: [...terms.terms]})
    }
    const delta: Delta = {
      format: FORMAT_VERSION,
      scope,
      build: base.header.build,
      tree: to,
      deleted: [...deleted].sort((a, b) => a - b),
      docs: [...docs.values()].sort((a, b) => (a.path < b.path ? -1 : 1)),
    }
    ensureIndexDir(this.store)
    writeAtomic(deltaPath(this.store, scope), encodeDelta(delta))
    return {base, delta, view: new ShardView(scope, base, delta)}
  }

  private drop(scope: string, removeFiles: boolean): void {
    this.shards.get(scope)?.base.close()
    this.shards.delete(scope)
    if (removeFiles) removeShard(this.store, scope)
  }

  close(): void {
    for (const s of this.shards.values()) s.base.close()
    this.shards.clear()
  }
}

/**
 * The documents for these blobs, read in one `git cat-file --batch` and prepared for the
 * index; a missing blob or an unparseable memory is skipped with a warning.
 */
async function* preparedDocs(
  store: Store,
  scope: string,
  entries: {path: string; blob: string}[],
  warn: (message: string) => void,
  onDoc?: () => void,
): AsyncGenerator<{path: string} & ReturnType<typeof prepareDoc>> {
  for await (const {index, data} of catBlobs(store, entries.map((e) => e.blob))) {
    const {path, blob} = entries[index]
    onDoc?.()
    if (!data) {
      warn(`${scope}: ${path} is missing from git; not indexed`)
      continue
    }
    try {
      const memory = await parseMemoryText(data.toString('utf8'), `${scope}: ${path}`)
      yield {path, ...prepareDoc(path, blob, memory)}
    } catch (error) {
      warn(`${(error as Error).message} Not indexed.`)
    }
  }
}

/** Build one scope's base shard from its tree and write it (replacing any delta). */
async function buildScope(
  store: Store,
  scope: string,
  tree: string,
  warn: (message: string) => void,
  entries?: {path: string; blob: string}[],
  onDoc?: () => void,
): Promise<void> {
  const list = entries ?? (await listTree(store, tree))
  const builder = new ShardBuilder()
  for await (const {record, terms} of preparedDocs(store, scope, list, warn, onDoc)) builder.add(record, terms)
  ensureIndexDir(store)
  removeFile(deltaPath(store, scope))
  writeAtomic(shardPath(store, scope), builder.encode(scope, tree))
}

/** The `n` rarest words of a plain text that occur in the views (ties by the word), as exact query terms. */
function informativeTerms(text: string, views: ShardView[], n: number): QueryTerm[] {
  if (n <= 0) return []
  const cands: {term: string; atLeast: number}[] = []
  for (const term of new Set(tokenize(text))) {
    let atLeast = -1
    for (const v of views) {
      const n = v.docFreqAtLeast(term)
      if (n >= 0) atLeast = Math.max(atLeast, 0) + n
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
    for (const v of views) df += v.docFreq(c.term)
    if (df === 0) continue // only in deleted documents
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

function shardPath(store: Store, scope: string): string {
  return store.abs(`${INDEX_DIR}/${scopeKey(scope)}.shard`)
}

function deltaPath(store: Store, scope: string): string {
  return store.abs(`${INDEX_DIR}/${scopeKey(scope)}.delta`)
}

/**
 * The scope trees of one commit as last listed with git (see IndexEngine.trees), keyed by
 * the commit and the store's folder in the repository. Derived like the shards: a missing
 * or unreadable record only costs a `git ls-tree`. Whoever can write the index folder can
 * forge it, as they can forge a shard, and with the same limit: a wrong tree id can hide
 * results or answer from another indexed tree, but the caller (search.ts) serves a hit
 * only when the file on disk is the indexed blob and passes the serving gate.
 */
function treesPath(store: Store): string {
  return store.abs(`${INDEX_DIR}/trees`)
}

const TREE_ID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/

function readTreeRecord(store: Store, head: string): Map<string, string | null> {
  const out = new Map<string, string | null>()
  let record: {head?: unknown; prefix?: unknown; trees?: unknown}
  try {
    record = JSON.parse(readFileSync(treesPath(store), 'utf8')) as typeof record
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
    writeAtomic(treesPath(store), JSON.stringify({head, prefix: store.prefix, trees: Object.fromEntries(trees)}))
  } catch {
    // an index folder we cannot write: searches still answer, listing trees with git
  }
}

function removeShard(store: Store, scope: string): void {
  removeFile(shardPath(store, scope))
  removeFile(deltaPath(store, scope))
}

function shardScopesOnDisk(store: Store): string[] {
  let names: string[]
  try {
    names = readdirSync(store.abs(INDEX_DIR))
  } catch {
    return []
  }
  const out: string[] = []
  for (const name of names) {
    const m = /^(org|(project|tenant|run)\.(.+))\.shard$/.exec(name)
    if (!m) continue
    const scope = m[1] === 'org' ? 'org' : `${m[2]}:${m[3]}`
    try {
      out.push(formatScope(parseScope(scope)))
    } catch {
      // not a file we wrote
    }
  }
  return out
}

/** The index is derived data: keep it out of git even where the store's .gitignore does not say so. */
function ensureIndexDir(store: Store): void {
  const dir = store.abs(INDEX_DIR)
  mkdirSync(dir, {recursive: true})
  const ignore = `${dir}/.gitignore`
  if (!existsSync(ignore)) writeFileSync(ignore, '*\n')
}
