import type {Delta, DocRecord, LoadedShard} from './shard.js'
import {FIELDS} from './shard.js'
import type {QueryTerm} from './tokenize.js'
import {termOf} from './tokenize.js'

/**
 * Scoring over one scope: the base shard minus its deleted documents plus the delta
 * segment. Every statistic BM25 uses (document count, field lengths, document
 * frequencies) is computed over the live documents only, and candidate terms are
 * visited in a fixed order, so a shard with a delta scores exactly as a fresh rebuild.
 */

/** BM25+ as MiniSearch uses it, with title and tags boosted. */
const K1 = 1.2
const B = 0.7
const D = 0.5
export const BOOST: readonly number[] = [3, 2, 1] // title, tags, body
const PREFIX_WEIGHT = 0.375
const FUZZY_WEIGHT = 0.45
const MAX_PREFIX_EXPANSIONS = 20
const MAX_FUZZY_EXPANSIONS = 20

export interface Candidate {
  view: ShardView
  doc: number
  path: string
  score: number
}

export class ShardView {
  readonly scope: string
  readonly base: LoadedShard | undefined
  readonly delta: Delta | undefined
  readonly baseN: number
  readonly n: number
  readonly avg: Float64Array
  private readonly deleted: Uint8Array
  private readonly deltaPostings = new Map<string, number[]>()
  private readonly deltaTerms: string[]
  private readonly deltaLens: Uint32Array

  constructor(scope: string, base: LoadedShard | undefined, delta: Delta | undefined) {
    this.scope = scope
    this.base = base
    this.delta = delta
    this.baseN = base?.header.n ?? 0
    this.deleted = new Uint8Array(this.baseN)
    const total = base ? [...base.header.total] : [0, 0, 0]
    let live = this.baseN
    for (const id of delta?.deleted ?? []) {
      if (id < 0 || id >= this.baseN || this.deleted[id]) continue
      this.deleted[id] = 1
      live--
      for (let f = 0; f < FIELDS; f++) total[f] -= base!.lens[id * FIELDS + f]
    }
    const docs = delta?.docs ?? []
    this.deltaLens = new Uint32Array(docs.length * FIELDS)
    docs.forEach((d, i) => {
      for (let f = 0; f < FIELDS; f++) {
        this.deltaLens[i * FIELDS + f] = d.lens[f]
        total[f] += d.lens[f]
      }
      for (const [t, p] of d.terms) {
        let list = this.deltaPostings.get(t)
        if (!list) this.deltaPostings.set(t, (list = []))
        list.push(i, p)
      }
    })
    this.deltaTerms = [...this.deltaPostings.keys()].sort()
    this.n = live + docs.length
    this.avg = new Float64Array(FIELDS)
    for (let f = 0; f < FIELDS; f++) this.avg[f] = this.n > 0 ? total[f] / this.n : 0
  }

  /** Live documents holding `term`: doc ids (delta docs follow the base's) and their field frequencies. */
  postings(term: string): {docs: number[]; tfs: number[]} {
    const docs: number[] = []
    const tfs: number[] = []
    const base = this.base
    if (base) {
      const t = base.termIndex(term)
      if (t >= 0) {
        base.forEachPosting(t, (doc, title, tags, body) => {
          if (this.deleted[doc]) return
          docs.push(doc)
          tfs.push(title, tags, body)
        })
      }
    }
    const list = this.deltaPostings.get(term)
    if (list) {
      for (let i = 0; i < list.length; i += 2) {
        const p = list[i + 1]
        docs.push(this.baseN + list[i])
        tfs.push(p & 255, (p >>> 8) & 255, Math.floor(p / 65536))
      }
    }
    return {docs, tfs}
  }

  fieldLength(doc: number, f: number): number {
    return doc < this.baseN ? this.base!.lens[doc * FIELDS + f] : this.deltaLens[(doc - this.baseN) * FIELDS + f]
  }

  path(doc: number): string {
    return doc < this.baseN ? this.base!.paths[doc] : this.delta!.docs[doc - this.baseN].path
  }

  record(doc: number): DocRecord {
    if (doc < this.baseN) return this.base!.record(doc)
    const {lens: _lens, terms: _terms, ...rec} = this.delta!.docs[doc - this.baseN]
    return rec
  }

  /** Dictionary terms starting with `prefix` (base and delta; may include terms with no live document). */
  prefixTerms(prefix: string): string[] {
    const out = new Set<string>()
    const base = this.base
    if (base) {
      for (let i = base.lowerBound(prefix); i < base.dict.length && base.dict[i].startsWith(prefix); i++) out.add(base.dict[i])
    }
    for (const t of this.deltaTerms) if (t.startsWith(prefix)) out.add(t)
    return [...out]
  }

  /** Dictionary terms within `max` edits of `term`, with their distance. */
  fuzzyTerms(term: string, max: number): Map<string, number> {
    const out = new Map<string, number>()
    const scan = (list: string[]) => {
      for (const t of list) {
        if (Math.abs(t.length - term.length) > max || out.has(t)) continue
        const d = boundedEditDistance(term, t, max)
        if (d <= max) out.set(t, d)
      }
    }
    if (this.base) scan(this.base.dict)
    scan(this.deltaTerms)
    return out
  }
}

let rowA = new Int32Array(80)
let rowB = new Int32Array(80)

/** Levenshtein distance, or max+1 as soon as it must exceed max. */
export function boundedEditDistance(a: string, b: string, max: number): number {
  if (a === b) return 0
  const m = a.length
  const n = b.length
  if (Math.abs(m - n) > max) return max + 1
  // rows reused across calls: a fuzzy lookup runs this over the whole dictionary
  if (n + 1 > rowA.length) {
    rowA = new Int32Array(n + 1)
    rowB = new Int32Array(n + 1)
  }
  let prev = rowA
  let cur = rowB
  for (let j = 0; j <= n; j++) prev[j] = j
  for (let i = 1; i <= m; i++) {
    cur[0] = i
    let rowMin = i
    const ca = a.charCodeAt(i - 1)
    for (let j = 1; j <= n; j++) {
      const cost = ca === b.charCodeAt(j - 1) ? 0 : 1
      const v = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
      cur[j] = v
      if (v < rowMin) rowMin = v
    }
    if (rowMin > max) return max + 1
    ;[prev, cur] = [cur, prev]
  }
  return prev[n]
}

function fuzzyDistanceFor(term: string): number {
  if (term.length >= 8) return 2
  if (term.length >= 4) return 1
  return 0
}

interface Expansion {
  term: string
  weight: number
  docs: number[]
  tfs: number[]
}

/** The terms a query term matches in a view: exact, then prefix, then fuzzy; live terms only. */
function expand(view: ShardView, q: QueryTerm): Expansion[] {
  const out: Expansion[] = []
  const seen = new Set<string>([q.term])
  const exact = view.postings(q.term)
  if (exact.docs.length > 0) out.push({term: q.term, weight: 1, ...exact})
  if (!q.expand) return out
  if (q.term.length >= 3) {
    const cands = view
      .prefixTerms(q.term)
      .filter((t) => !seen.has(t))
      .sort((a, b) => a.length - b.length || (a < b ? -1 : 1))
    let taken = 0
    for (const t of cands) {
      if (taken >= MAX_PREFIX_EXPANSIONS) break
      seen.add(t)
      const p = view.postings(t)
      if (p.docs.length === 0) continue
      const distance = t.length - q.term.length
      out.push({term: t, weight: (PREFIX_WEIGHT * t.length) / (t.length + 0.3 * distance), ...p})
      taken++
    }
  }
  const max = fuzzyDistanceFor(q.term)
  if (max > 0) {
    const cands = [...view.fuzzyTerms(q.term, max)].filter(([t]) => !seen.has(t)).sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1))
    let taken = 0
    for (const [t, distance] of cands) {
      if (taken >= MAX_FUZZY_EXPANSIONS) break
      seen.add(t)
      const p = view.postings(t)
      if (p.docs.length === 0) continue
      out.push({term: t, weight: (FUZZY_WEIGHT * t.length) / (t.length + distance), ...p})
      taken++
    }
  }
  return out
}

/**
 * Score one view. Returns every matching live document (required terms present,
 * excluded ones absent) and the terms that matched, for snippets.
 */
export function scoreView(view: ShardView, query: QueryTerm[], matched: Set<string>): Candidate[] {
  const size = view.baseN + (view.delta?.docs.length ?? 0)
  if (view.n === 0) return []
  const scores = new Float64Array(size)
  const hitTerms = new Uint16Array(size)
  const mustHits = new Uint16Array(size)
  const excluded = new Uint8Array(size)
  const stamp = new Int32Array(size).fill(-1)
  const touched: number[] = []
  let positive = 0
  let musts = 0
  query.forEach((q, qi) => {
    if (q.mode === 'not') {
      for (const d of view.postings(q.term).docs) excluded[d] = 1
      return
    }
    positive++
    if (q.mode === 'must') musts++
    for (const e of expand(view, q)) {
      matched.add(e.term)
      const df = e.docs.length
      const idf = Math.log(1 + (view.n - df + 0.5) / (df + 0.5))
      for (let i = 0; i < e.docs.length; i++) {
        const doc = e.docs[i]
        let s = 0
        for (let f = 0; f < FIELDS; f++) {
          const tf = e.tfs[i * FIELDS + f]
          if (tf === 0) continue
          const norm = 1 - B + (B * view.fieldLength(doc, f)) / (view.avg[f] || 1)
          s += BOOST[f] * (D + (tf * (K1 + 1)) / (tf + K1 * norm))
        }
        if (stamp[doc] === -1) touched.push(doc)
        if (stamp[doc] !== qi) {
          stamp[doc] = qi
          hitTerms[doc]++
          if (q.mode === 'must') mustHits[doc]++
        }
        scores[doc] += e.weight * idf * s
      }
    }
  })
  const out: Candidate[] = []
  for (const doc of touched) {
    if (excluded[doc] || mustHits[doc] < musts) continue
    // documents matching more of the query's words rank above those matching one word often
    out.push({view, doc, path: view.path(doc), score: (scores[doc] * hitTerms[doc]) / positive})
  }
  return out
}

export function compareCandidates(a: Candidate, b: Candidate): number {
  if (a.score !== b.score) return b.score - a.score
  if (a.view.scope !== b.view.scope) return a.view.scope < b.view.scope ? -1 : 1
  return a.path < b.path ? -1 : a.path > b.path ? 1 : 0
}

const SNIPPET_LENGTH = 200
const WORD_RE = /[\p{L}\p{N}]+/gu

/** A one-line excerpt of the body around the first word that matched. */
export function makeSnippet(body: string, matched: Set<string>): string {
  let pos = -1
  for (const m of body.matchAll(WORD_RE)) {
    let w = m[0].toLowerCase()
    if (/[^\u0000-\u007f]/.test(w)) w = w.normalize('NFD').replace(/\p{M}+/gu, '')
    const t = termOf(w)
    if (t !== undefined && matched.has(t)) {
      pos = m.index ?? 0
      break
    }
  }
  let start = pos <= 60 ? 0 : pos - 60
  if (start > 0) {
    const space = body.lastIndexOf(' ', start)
    if (space > start - 20 && space >= 0) start = space + 1
  }
  let end = Math.min(body.length, start + SNIPPET_LENGTH)
  if (end < body.length) {
    const space = body.lastIndexOf(' ', end)
    if (space > start + SNIPPET_LENGTH / 2) end = space
  }
  const text = body.slice(start, end).replace(/\s+/g, ' ').trim()
  return `${start > 0 ? '…' : ''}${text}${end < body.length ? '…' : ''}`
}
