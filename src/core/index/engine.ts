import {kernelFor} from './kernel.js'
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
const MAX_CACHED_SCANS = 4096
/** doc-id gap (varint of up to 32 bits), title and tags (≤ 255), body (≤ 0x7fff) */
const MAX_POSTING_BYTES = 5 + 2 + 2 + 3
/** ~12 bytes each: about 50 MB of cached term scores per view at most */
const MAX_SCORED_POSTINGS = 4_000_000

interface Scratch {
  scores: Float64Array
  hitTerms: Uint16Array
  mustHits: Uint16Array
  excluded: Uint8Array
  stamp: Int32Array
  touched: Int32Array
}

export interface TermScores {
  docs: Int32Array
  s: Float64Array
}

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
  /** live documents */
  readonly n: number
  /** document ids run from 0 to size - 1: the base's, then the delta's */
  readonly size: number
  readonly avg: Float64Array
  private readonly deleted: Uint8Array
  private readonly deltaPostings = new Map<string, number[]>()
  private readonly deltaTerms: string[]
  private readonly deltaLens: Uint32Array
  /**
   * Dictionary scans per query term (prefix and fuzzy candidates), kept for the life of
   * the view: a view is one base build plus one delta, so a change of either makes a new
   * view and an empty cache. Bounded; cleared when full.
   */
  private readonly scans = new Map<string, {prefix: string[]; fuzzy: [string, number][]}>()
  /** Per term: its live documents and each one's BM25 term score (fixed for the view); bounded by postings held. */
  private readonly scored = new Map<string, TermScores>()
  private scoredPostings = 0
  private scratchArrays: Scratch | undefined
  private readonly deletedCount: number
  private readonly fieldParams: Float64Array

  constructor(scope: string, base: LoadedShard | undefined, delta: Delta | undefined) {
    this.scope = scope
    this.base = base
    this.delta = delta
    this.baseN = base?.header.n ?? 0
    this.deleted = new Uint8Array(this.baseN)
    const total = base ? [...base.header.total] : [0, 0, 0]
    let live = this.baseN
    const deleted = delta?.deleted ?? []
    const lens = deleted.length > 0 ? base?.lens : undefined
    for (const id of deleted) {
      if (id < 0 || id >= this.baseN || this.deleted[id]) continue
      this.deleted[id] = 1
      live--
      for (let f = 0; f < FIELDS; f++) total[f] -= lens![id * FIELDS + f]
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
    this.size = this.baseN + docs.length
    this.deletedCount = this.baseN - live
    this.avg = new Float64Array(FIELDS)
    for (let f = 0; f < FIELDS; f++) this.avg[f] = this.n > 0 ? total[f] / this.n : 0
    this.fieldParams = kernelParams(this.avg)
  }

  path(doc: number): string {
    return doc < this.baseN ? this.base!.path(doc) : this.delta!.docs[doc - this.baseN].path
  }

  record(doc: number): DocRecord {
    if (doc < this.baseN) return this.base!.record(doc)
    const {lens: _lens, terms: _terms, ...rec} = this.delta!.docs[doc - this.baseN]
    return rec
  }

  /** Dictionary terms starting with `prefix` (base and delta; may include terms with no live document). */
  prefixTerms(prefix: string): string[] {
    const out = new Set<string>(this.base?.prefixTerms(prefix))
    for (const t of this.deltaTerms) if (t.startsWith(prefix)) out.add(t)
    return [...out]
  }

  /**
   * The live documents holding `term` and, for each, the BM25 sum over fields before IDF
   * and expansion weight. Depends only on the view's statistics, so it is computed once.
   */
  termScores(term: string): TermScores {
    const hit = this.scored.get(term)
    if (hit) return hit
    const base = this.base
    const t = base ? base.termIndex(term) : -1
    const list = this.deltaPostings.get(term)
    const nDelta = list ? list.length / 2 : 0
    // a base posting takes at least four bytes (four varints)
    const wasm = t >= 0 ? kernelFor(base!.postingBytes(t) >>> 2) : undefined
    let docs: Int32Array
    let s: Float64Array
    let k = 0
    if (wasm) {
      const {start, end} = base!.postings(t)
      ;({docs, s} = wasm.score(base!.post, start, end, base!.lens, this.deletedCount > 0 ? this.deleted : undefined, this.fieldParams, nDelta))
      k = docs.length - nDelta
    } else {
      const cap = (t >= 0 ? base!.postingBytes(t) >>> 2 : 0) + nDelta
      docs = new Int32Array(cap)
      s = new Float64Array(cap)
      if (t >= 0) {
        const {start, end} = base!.postings(t)
        k = scorePostings(base!.post, start, end, base!.lens, this.deletedCount > 0 ? this.deleted : undefined, this.avg, docs, s)
      }
    }
    if (list) {
      const lens = this.deltaLens
      for (let i = 0; i < list.length; i += 2) {
        const p = list[i + 1]
        const title = p & 255
        const tags = (p >>> 8) & 255
        const body = Math.floor(p / 65536)
        const l = list[i] * FIELDS
        let v = 0
        if (title !== 0) v += fieldScore(BOOST[0], title, lens[l], this.avg[0])
        if (tags !== 0) v += fieldScore(BOOST[1], tags, lens[l + 1], this.avg[1])
        if (body !== 0) v += fieldScore(BOOST[2], body, lens[l + 2], this.avg[2])
        docs[k] = this.baseN + list[i]
        s[k++] = v
      }
    }
    const out = k === docs.length ? {docs, s} : {docs: docs.subarray(0, k), s: s.subarray(0, k)}
    if (this.scoredPostings + k > MAX_SCORED_POSTINGS) {
      this.scored.clear()
      this.scoredPostings = 0
    }
    this.scored.set(term, out)
    this.scoredPostings += k + 8
    return out
  }

  /** Per-document working arrays for scoring, made once per view (scoreDocs leaves them zeroed). */
  scratch(): Scratch {
    if (!this.scratchArrays) {
      const size = this.size
      this.scratchArrays = {
        scores: new Float64Array(size),
        hitTerms: new Uint16Array(size),
        mustHits: new Uint16Array(size),
        excluded: new Uint8Array(size),
        stamp: new Int32Array(size).fill(-1),
        touched: new Int32Array(size),
      }
    }
    return this.scratchArrays
  }

  /** Number of live documents holding `term` (without decoding postings unless base documents were deleted). */
  docFreq(term: string): number {
    if (this.deletedCount > 0) return this.termScores(term).docs.length
    let n = 0
    const base = this.base
    if (base) {
      const t = base.termIndex(term)
      if (t >= 0) {
        // every posting is four varints, each ending in a byte below 0x80
        const p = base.post
        const {start, end} = base.postings(t)
        for (let i = start; i < end; i++) if (p[i] < 0x80) n++
        n >>>= 2
      }
    }
    return n + (this.deltaPostings.get(term)?.length ?? 0) / 2
  }

  /**
   * A cheap lower bound of docFreq from the postings' byte length alone (a posting takes at
   * most MAX_POSTING_BYTES), for skipping the exact count of words that cannot be rare;
   * -1 when the view's dictionary does not hold the word at all.
   */
  docFreqAtLeast(term: string): number {
    let n = -1
    const base = this.base
    if (base) {
      const t = base.termIndex(term)
      if (t >= 0) n = Math.max(0, Math.ceil(base.postingBytes(t) / MAX_POSTING_BYTES) - this.deletedCount)
    }
    const delta = this.deltaPostings.get(term)
    if (delta) n = Math.max(n, 0) + delta.length / 2
    return n
  }

  /** Prefix and fuzzy candidates of a query term, sorted as `expand` takes them (cached per view). */
  scan(term: string, fuzzyMax: number): {prefix: string[]; fuzzy: [string, number][]} {
    let hit = this.scans.get(term)
    if (hit) return hit
    const prefix = term.length >= 3 ? this.prefixTerms(term).filter((t) => t !== term).sort((a, b) => a.length - b.length || (a < b ? -1 : 1)) : []
    const fuzzy = fuzzyMax > 0 ? [...this.fuzzyTerms(term, fuzzyMax)].filter(([t]) => t !== term).sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1)) : []
    hit = {prefix, fuzzy}
    if (this.scans.size >= MAX_CACHED_SCANS) this.scans.clear()
    this.scans.set(term, hit)
    return hit
  }

  /** Dictionary terms within `max` edits of `term`, with their distance. */
  fuzzyTerms(term: string, max: number): Map<string, number> {
    const out = new Map<string, number>()
    if (this.base) fuzzyDictionary(this.base, term, max, out)
    for (const t of this.deltaTerms) {
      if (Math.abs(t.length - term.length) > max || out.has(t)) continue
      const d = boundedEditDistance(term, t, max)
      if (d <= max) out.set(t, d)
    }
    return out
  }
}

const ASCII_RE = /^[\u0000-\u007f]*$/
let walkRows = new Int32Array(1024)

/**
 * Terms of a shard's dictionary within `max` edits of `term`, with their distance as
 * boundedEditDistance counts it (UTF-16 code units), added to `out`. The dictionary is
 * sorted, so neighbouring terms share prefixes: the Levenshtein row of each prefix byte
 * is kept for the next term, and a prefix whose row already exceeds `max` skips every
 * term that starts with it. ASCII bytes are code units; a term with other bytes is
 * decoded and measured as a string from the first such byte on (its ASCII prefix still
 * prunes), and a non-ASCII query term scans the decoded dictionary.
 */
function fuzzyDictionary(shard: LoadedShard, term: string, max: number, out: Map<string, number>): void {
  const {bytes, off} = shard.dictionary()
  const nTerms = off.length - 1
  const m = term.length
  const measure = (i: number) => {
    const t = shard.term(i)
    if (Math.abs(t.length - m) > max) return
    const d = boundedEditDistance(term, t, max)
    if (d <= max) out.set(t, d)
  }
  if (!ASCII_RE.test(term)) {
    // a UTF-16 length is at most the UTF-8 length: shorter byte strings are too short
    for (let i = 0; i < nTerms; i++) if (off[i + 1] - off[i] >= m - max) measure(i)
    return
  }
  const q = new Uint8Array(m)
  for (let j = 0; j < m; j++) q[j] = term.charCodeAt(j)
  const wasm = kernelFor(nTerms)
  if (wasm) {
    // the same walk in the kernel; terms with other bytes come back to be measured here
    const found = wasm.fuzzy(bytes, off, q, max)
    for (let k = 0; k < found.length; k += 2) {
      if (found[k + 1] < 0) measure(found[k])
      else out.set(shard.term(found[k]), found[k + 1])
    }
    return
  }
  const w = m + 1
  // a row past m + max has every cell above max, so no term needs more rows than this
  if (walkRows.length < (m + max + 2) * w) walkRows = new Int32Array((m + max + 2) * w)
  const rows = walkRows
  for (let j = 0; j <= m; j++) rows[j] = j
  let ref = 0 // dictionary offset of the term whose prefix rows are held
  let valid = 0 // rows 1..valid are those of its first `valid` bytes
  for (let i = 0; i < nTerms; i++) {
    const a = off[i]
    const len = off[i + 1] - a
    let r = 0
    const shared = Math.min(valid, len)
    while (r < shared && bytes[a + r] === bytes[ref + r]) r++
    let dead = false
    let ascii = true
    while (r < len) {
      const c = bytes[a + r]
      if (c >= 0x80) {
        ascii = false
        break
      }
      // only cells within `max` of the diagonal can hold max or less; the cells just
      // outside the band read as max + 1, so nothing beyond it can come back under
      const prev = r * w
      const cur = prev + w
      const lo = r + 1 - max > 1 ? r + 1 - max : 1
      const hi = r + 1 + max < m ? r + 1 + max : m
      if (lo === 1) rows[cur] = r + 1
      else rows[cur + lo - 1] = max + 1
      let rowMin = lo === 1 ? r + 1 : max + 1
      for (let j = lo; j <= hi; j++) {
        let v = rows[prev + j] + 1
        const ins = rows[cur + j - 1] + 1
        if (ins < v) v = ins
        const sub = rows[prev + j - 1] + (q[j - 1] === c ? 0 : 1)
        if (sub < v) v = sub
        rows[cur + j] = v
        if (v < rowMin) rowMin = v
      }
      if (hi < m) rows[cur + hi + 1] = max + 1
      r++
      if (rowMin > max) {
        dead = true
        break
      }
    }
    ref = a
    valid = r
    if (dead) {
      // every following term that starts with these r bytes is too far as well
      for (;;) {
        const b = off[i + 1]
        if (i + 1 >= nTerms || off[i + 2] - b < r) break
        let k = 0
        while (k < r && bytes[b + k] === bytes[a + k]) k++
        if (k < r) break
        i++
      }
    } else if (!ascii) {
      measure(i)
    } else if (len - m <= max && m - len <= max && rows[len * w + m] <= max) {
      // (a length further than max from m leaves the last cell outside the band)
      out.set(shard.term(i), rows[len * w + m])
    }
  }
}

/** BM25+ of one field of one document, before IDF (MiniSearch's formula). */
function fieldScore(boost: number, tf: number, len: number, avg: number): number {
  return boost * (D + (tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * len) / (avg || 1))))
}

/** What the kernel's `score` reads: the constants as scorePostings has them in locals, then the field averages (each `|| 1`). */
export function kernelParams(avg: Float64Array): Float64Array {
  return Float64Array.of(...BOOST, K1, K1 + 1, B, 1 - B, D, avg[0] || 1, avg[1] || 1, avg[2] || 1)
}

/**
 * Decode a base term's postings (bytes [start, end) of `p`) and score each live document
 * as fieldScore does, with the same operations in the same order (so scores are bit for
 * bit a rebuild's), inlined: a one-shot process runs this loop before the JIT has warmed
 * up, and the optimising compiler takes a small function sooner. Writes doc ids and
 * scores to `docs` and `s`; returns their count.
 */
export function scorePostings(
  p: Uint8Array,
  start: number,
  end: number,
  lens: Uint32Array,
  deleted: Uint8Array | undefined,
  avg: Float64Array,
  docs: Int32Array,
  s: Float64Array,
): number {
  // constants in locals: interpreted, K1 + 1 and 1 - B would be recomputed (to the same
  // values) and boxed on every posting
  const [bt, bg, bb] = BOOST
  const k1 = K1
  const k1p1 = K1 + 1
  const b_ = B
  const omb = 1 - B
  const d_ = D
  const a0 = avg[0] || 1
  const a1 = avg[1] || 1
  const a2 = avg[2] || 1
  let k = 0
  let i = start
  let doc = 0
  while (i < end) {
    let b = p[i++]
    let d = b & 0x7f
    for (let mul = 128; b >= 0x80; mul *= 128) {
      b = p[i++]
      d += (b & 0x7f) * mul
    }
    doc += d
    // title and tags frequencies are capped at 255, so they take at most two bytes
    let title = p[i++]
    if (title >= 0x80) title = (title & 0x7f) + p[i++] * 128
    let tags = p[i++]
    if (tags >= 0x80) tags = (tags & 0x7f) + p[i++] * 128
    b = p[i++]
    let body = b & 0x7f
    for (let mul = 128; b >= 0x80; mul *= 128) {
      b = p[i++]
      body += (b & 0x7f) * mul
    }
    if (deleted !== undefined && deleted[doc] === 1) continue
    const l = doc * FIELDS
    let v = 0
    if (title !== 0) v += bt * (d_ + (title * k1p1) / (title + k1 * (omb + (b_ * lens[l]) / a0)))
    if (tags !== 0) v += bg * (d_ + (tags * k1p1) / (tags + k1 * (omb + (b_ * lens[l + 1]) / a1)))
    if (body !== 0) v += bb * (d_ + (body * k1p1) / (body + k1 * (omb + (b_ * lens[l + 2]) / a2)))
    docs[k] = doc
    s[k++] = v
  }
  return k
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
    const t = prev
    prev = cur
    cur = t
  }
  return prev[n]
}

function fuzzyDistanceFor(term: string): number {
  if (term.length >= 8) return 2
  if (term.length >= 4) return 1
  return 0
}

interface Expansion extends TermScores {
  term: string
  weight: number
}

/** The terms a query term matches in a view: exact, then prefix, then fuzzy; live terms only. */
function expand(view: ShardView, q: QueryTerm): Expansion[] {
  const out: Expansion[] = []
  const seen = new Set<string>([q.term])
  const exact = view.termScores(q.term)
  if (exact.docs.length > 0) out.push({term: q.term, weight: 1, docs: exact.docs, s: exact.s})
  if (!q.expand) return out
  const {prefix, fuzzy} = view.scan(q.term, fuzzyDistanceFor(q.term))
  let taken = 0
  for (const t of prefix) {
    if (taken >= MAX_PREFIX_EXPANSIONS) break
    seen.add(t)
    const p = view.termScores(t)
    if (p.docs.length === 0) continue
    const distance = t.length - q.term.length
    out.push({term: t, weight: (PREFIX_WEIGHT * t.length) / (t.length + 0.3 * distance), docs: p.docs, s: p.s})
    taken++
  }
  taken = 0
  for (const [t, distance] of fuzzy) {
    if (taken >= MAX_FUZZY_EXPANSIONS) break
    if (seen.has(t)) continue
    seen.add(t)
    const p = view.termScores(t)
    if (p.docs.length === 0) continue
    out.push({term: t, weight: (FUZZY_WEIGHT * t.length) / (t.length + distance), docs: p.docs, s: p.s})
    taken++
  }
  return out
}

/** Matching documents of one view with their final scores (parallel arrays, unordered). */
export interface Scored {
  view: ShardView
  docs: Int32Array
  scores: Float64Array
}

/**
 * Where scoreDocs adds up one view's weighted term scores: the view's scratch arrays, or
 * the WebAssembly kernel's (kernel.ts), which does the same in the same order. `end`
 * leaves the working arrays zeroed, whether or not `finish` was reached.
 */
interface Accumulator {
  exclude(docs: Int32Array): void
  add(docs: Int32Array, s: Float64Array, w: number, qi: number, must: boolean): void
  /** matching documents: every required term present, no excluded one; final scores weigh in the count of query terms matched */
  finish(musts: number, positive: number): {docs: Int32Array; scores: Float64Array}
  end(): void
}

class ScratchAccumulator implements Accumulator {
  private nTouched = 0
  private readonly excludedLists: Int32Array[] = []
  constructor(private readonly scratch: Scratch) {}

  exclude(docs: Int32Array): void {
    const excluded = this.scratch.excluded
    this.excludedLists.push(docs)
    for (let i = 0; i < docs.length; i++) excluded[docs[i]] = 1
  }

  add(docs: Int32Array, s: Float64Array, w: number, qi: number, must: boolean): void {
    this.nTouched = accumulate(docs, s, w, qi, must, this.scratch, this.nTouched)
  }

  finish(musts: number, positive: number): {docs: Int32Array; scores: Float64Array} {
    const {scores, hitTerms, mustHits, excluded, touched} = this.scratch
    const nTouched = this.nTouched
    const docs = new Int32Array(nTouched)
    const final = new Float64Array(nTouched)
    let k = 0
    for (let i = 0; i < nTouched; i++) {
      const doc = touched[i]
      if (excluded[doc] || mustHits[doc] < musts) continue
      docs[k] = doc
      // documents matching more of the query's words rank above those matching one word often
      final[k++] = (scores[doc] * hitTerms[doc]) / positive
    }
    return {docs: docs.subarray(0, k), scores: final.subarray(0, k)}
  }

  end(): void {
    const {scores, hitTerms, mustHits, excluded, stamp, touched} = this.scratch
    for (let i = 0; i < this.nTouched; i++) {
      const doc = touched[i]
      scores[doc] = 0
      hitTerms[doc] = 0
      mustHits[doc] = 0
      stamp[doc] = -1
    }
    this.nTouched = 0
    for (const list of this.excludedLists) for (let i = 0; i < list.length; i++) excluded[list[i]] = 0
  }
}

/** Add one expansion's weighted scores to the scratch arrays; returns the new count of touched documents. */
function accumulate(docs: Int32Array, s: Float64Array, w: number, qi: number, must: boolean, scratch: Scratch, nTouched: number): number {
  const {scores, hitTerms, mustHits, stamp, touched} = scratch
  for (let i = 0; i < docs.length; i++) {
    const doc = docs[i]
    if (stamp[doc] !== qi) {
      if (stamp[doc] === -1) touched[nTouched++] = doc
      stamp[doc] = qi
      hitTerms[doc]++
      if (must) mustHits[doc]++
    }
    scores[doc] += w * s[i]
  }
  return nTouched
}

/**
 * Score one view: every matching live document (required terms present, excluded ones
 * absent), and the terms that matched, for snippets. Adds up in the view's scratch arrays
 * or, for enough postings, in the kernel's; either is left zeroed (a search is
 * synchronous, so one set per view, and one kernel per process, is enough).
 */
export function scoreDocs(view: ShardView, query: QueryTerm[], matched: Set<string>): Scored {
  if (view.n === 0) return {view, docs: new Int32Array(0), scores: new Float64Array(0)}
  // every list to add up, in query order, before choosing where: their size decides
  const excluded: Int32Array[] = []
  const lists: {e: Expansion; w: number; qi: number}[] = []
  let postings = 0
  let positive = 0
  let musts = 0
  for (let qi = 0; qi < query.length; qi++) {
    const q = query[qi]
    if (q.mode === 'not') {
      excluded.push(view.termScores(q.term).docs)
      continue
    }
    positive++
    if (q.mode === 'must') musts++
    for (const e of expand(view, q)) {
      matched.add(e.term)
      const df = e.docs.length
      const idf = Math.log(1 + (view.n - df + 0.5) / (df + 0.5))
      lists.push({e, w: e.weight * idf, qi})
      postings += df
    }
  }
  const wasm = kernelFor(postings)
  const acc: Accumulator = wasm ? wasm.begin(view.size) : new ScratchAccumulator(view.scratch())
  try {
    for (const docs of excluded) acc.exclude(docs)
    for (const {e, w, qi} of lists) acc.add(e.docs, e.s, w, qi, query[qi].mode === 'must')
    const {docs, scores} = acc.finish(musts, positive)
    return {view, docs, scores}
  } finally {
    acc.end()
  }
}

/** scoreDocs as candidate objects (every match; for callers that sort them all). */
export function scoreView(view: ShardView, query: QueryTerm[], matched: Set<string>): Candidate[] {
  const {docs, scores} = scoreDocs(view, query, matched)
  const out: Candidate[] = []
  for (let i = 0; i < docs.length; i++) out.push({view, doc: docs[i], path: view.path(docs[i]), score: scores[i]})
  return out
}

/**
 * Matches of several views in compareCandidates order, lazily: rounds of the next `batch`
 * best scores (doubling each round), found with a small heap and then sorted, so a search
 * pays for its limit plus what its filter rejects, not for sorting every matching document.
 * A round takes every document tied with its lowest score, so ties keep their order. Both
 * passes over the scores run in the kernel when it is worth it (the same comparisons).
 */
export function* bestFirst(sets: Scored[], batch = 32): Generator<Candidate> {
  let upper = Infinity
  let k = Math.max(1, batch)
  let total = 0
  for (const set of sets) total += set.scores.length
  for (;;) {
    const wasm = kernelFor(total)
    const lower = wasm ? wasm.threshold(sets.map((set) => set.scores), k, upper) : threshold(sets, k, upper)
    if (lower === undefined) return
    const round: Candidate[] = []
    for (const set of sets) {
      const {view, docs, scores} = set
      if (wasm) {
        const within = wasm.within(scores, lower, upper)
        for (let j = 0; j < within.length; j++) {
          const i = within[j]
          round.push({view, doc: docs[i], path: view.path(docs[i]), score: scores[i]})
        }
        continue
      }
      for (let i = 0; i < scores.length; i++) {
        const v = scores[i]
        if (v < upper && v >= lower) round.push({view, doc: docs[i], path: view.path(docs[i]), score: v})
      }
    }
    round.sort(compareCandidates)
    yield* round
    if (lower === -Infinity) return
    upper = lower
    k *= 2
  }
}

/**
 * The k-th largest score below `upper` over all sets (kept in a min-heap of k), -Infinity
 * when fewer are below it, undefined when none is.
 */
function threshold(sets: Scored[], k: number, upper: number): number | undefined {
  const heap = new Float64Array(k)
  let size = 0
  for (const set of sets) {
    const sc = set.scores
    for (let i = 0; i < sc.length; i++) {
      const v = sc[i]
      if (!(v < upper)) continue
      if (size < k) {
        // sift up in a min-heap
        let j = size++
        heap[j] = v
        while (j > 0) {
          const parent = (j - 1) >>> 1
          if (heap[parent] <= heap[j]) break
          // a plain swap: a destructuring one allocates and iterates, slow before the JIT
          const t = heap[parent]
          heap[parent] = heap[j]
          heap[j] = t
          j = parent
        }
      } else if (v > heap[0]) {
        heap[0] = v
        let j = 0
        for (;;) {
          const l = 2 * j + 1
          if (l >= k) break
          const m = l + 1 < k && heap[l + 1] < heap[l] ? l + 1 : l
          if (heap[m] >= heap[j]) break
          const t = heap[m]
          heap[m] = heap[j]
          heap[j] = t
          j = m
        }
      }
    }
  }
  if (size === 0) return undefined
  return size < k ? -Infinity : heap[0]
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
  // Stemming only ever changes a word's ending and keeps at least its first two
  // characters, so a word whose first two are no matched term's cannot match: most words
  // are passed over without stemming them.
  const heads = new Set<string>()
  for (const t of matched) heads.add(t.slice(0, 2))
  for (const m of body.matchAll(WORD_RE)) {
    let w = m[0].toLowerCase()
    if (/[^\u0000-\u007f]/.test(w)) w = w.normalize('NFD').replace(/\p{M}+/gu, '')
    if (!heads.has(w.slice(0, 2))) continue
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
