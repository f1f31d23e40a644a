import type MiniSearch from 'minisearch'

import {internals, type MiniInternals, type Postings} from './internals.js'

/**
 * Ranking a MiniSearch index without MiniSearch's per-document objects.
 *
 * `MiniSearch#search` builds a result object for every matching document (score, the
 * matched terms, a match map, a copy of the stored fields), then sorts them all. A search
 * wants ten. Over a 10k scope where a common word is in nearly every memory that is ~25 ms
 * of a warm query, almost all of it allocation (docs/architecture.md, "Measured costs").
 *
 * This computes the same scores from the same index — MiniSearch's postings, field lengths
 * and averages, its BM25 (k 1.2, b 0.7, d 0.5), its prefix and fuzzy expansion through the
 * index's own `atPrefix` / `fuzzyGet`, its weights (prefix 0.375, fuzzy 0.45) and its
 * "score × matched query terms" — adding every document's terms in the order MiniSearch
 * adds them, so each score is the same number to the last bit. The scores go into typed
 * arrays; only the best `k` documents are then picked (a selection, not a sort of all)
 * and made into hits. `test/unit/index-rank.test.ts` holds this to `MiniSearch#search`
 * on random stores and queries. Indexes holding discarded documents (a neighbour lookup's
 * partial index) are ranked by `MiniSearch#search` itself (index.ts).
 *
 * The query is an OR of the positive terms, less every document that holds an excluded
 * term exactly, keeping only documents that match every required term.
 */

/** One query term as MiniSearch expands it: prefix matches (length ≥ 3), fuzzy to a distance. */
export interface RankTerm {
  term: string
  prefix: boolean
  /** edit distance for fuzzy matches; 0 for none */
  fuzzy: number
}

export interface RankQuery {
  terms: RankTerm[]
  /** documents holding any of these exactly are left out */
  excluded: string[]
  /** a document must match each of these (as query terms, through any expansion) */
  required: string[]
}

/** A ranked document: its id, its score as MiniSearch gives it, and the index terms it matched. */
export interface Ranked {
  id: string
  shortId: number
  score: number
}

// MiniSearch's defaults (7.x), which engram does not change
const BM25 = {k: 1.2, b: 0.7, d: 0.5}
const PREFIX_WEIGHT = 0.375
const FUZZY_WEIGHT = 0.45
const MAX_FUZZY = 6

/** Field lengths as one flat array, and the scratch arrays of a query, kept per index while it does not change. */
interface Scratch {
  stamp: string
  fields: number
  lengths: Float64Array
  total: Float64Array
  part: Float64Array
  mask: Uint32Array
  /** 1 + the query number that last touched the document in `part` */
  seen: Uint32Array
  /** lists of document ids: all touched, touched by one query term */
  touched: Int32Array
  inThis: Int32Array
  /** room for a copy of the scores (the selection permutes it) */
  select: Float64Array
  /** 1 for each short id the index lists: postings of any other id (a damaged or planted file) are passed over */
  live: Uint8Array
  /**
   * Postings as arrays, made on first use: a Map walk costs several times more per entry.
   * MiniSearch changes its maps in place, so these go with the stamp; bounded in bytes.
   */
  arrays: WeakMap<Map<number, number>, Float64Array>
  arrayedBytes: number
  /** what a query term expanded to (prefix and fuzzy walks of the term tree), by term and expansion; bounded in terms */
  expansions: Map<string, Expanded>
  expandedTerms: number
}

type Expanded = {term: string; weight: number; data: Postings}[]

/** The expansions kept per index hold at most this many terms in all; a larger single one is not kept. */
const EXPANDED_TERMS_MAX = 100_000
const EXPANSION_KEPT_MAX = 1_000

/** Postings this long or longer are kept as arrays, at most ARRAYED_BYTES_MAX per index (with an allowance per array); shorter ones are copied for the one query. */
const ARRAY_MIN = 32
const ARRAYED_BYTES_MAX = 64 << 20
const ARRAY_OVERHEAD = 256

const scratchOf = new WeakMap<object, Scratch>()

function stampOf(ms: MiniInternals): string {
  return `${ms._nextId}/${ms._documentCount}/${ms._fieldLength.size}`
}

function scratch(ms: MiniInternals): Scratch {
  const stamp = stampOf(ms)
  const had = scratchOf.get(ms)
  if (had && had.stamp === stamp) return had
  const fields = Object.keys(ms._fieldIds).length
  // sized by the largest id the index lists, not by its nextId (a number a planted file could make huge)
  let top = -1
  for (const id of ms._documentIds.keys()) if (Number.isSafeInteger(id) && id > top) top = id
  const n = top + 1
  const live = new Uint8Array(n)
  for (const id of ms._documentIds.keys()) if (Number.isSafeInteger(id) && id >= 0) live[id] = 1
  const lengths = new Float64Array(n * fields)
  for (const [id, ls] of ms._fieldLength) {
    if (!(id >= 0 && id < n) || !Array.isArray(ls)) continue
    for (let f = 0; f < fields; f++) lengths[id * fields + f] = typeof ls[f] === 'number' ? ls[f] : 0
  }
  const s: Scratch = {
    stamp, fields, lengths, total: new Float64Array(n), part: new Float64Array(n), mask: new Uint32Array(n), seen: new Uint32Array(n),
    touched: new Int32Array(n), inThis: new Int32Array(n), select: new Float64Array(n), live, arrays: new WeakMap(), arrayedBytes: 0, expansions: new Map(), expandedTerms: 0,
  }
  scratchOf.set(ms, s)
  return s
}

/** Whether this index can be ranked here (else: MiniSearch#search). */
export function rankable<T>(ms: MiniSearch<T>, query: RankQuery): boolean {
  const inner = internals(ms)
  return inner._dirtCount === 0 && query.terms.length <= 32
}

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333)
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24
}

/** The terms one query term expands to, in MiniSearch's order: the term, its prefix matches, its fuzzy matches; with their weights. */
function expand(ms: MiniInternals, t: RankTerm): Expanded {
  const out: Expanded = []
  const exact = ms._index.get(t.term)
  if (exact) out.push({term: t.term, weight: 1, data: exact})
  let fuzzy: Map<string, [Postings, number]> | undefined
  if (t.fuzzy) {
    const distance = t.fuzzy < 1 ? Math.min(MAX_FUZZY, Math.round(t.term.length * t.fuzzy)) : t.fuzzy
    if (distance) fuzzy = ms._index.fuzzyGet(t.term, distance)
  }
  if (t.prefix) {
    for (const [term, data] of ms._index.atPrefix(t.term)) {
      const distance = term.length - t.term.length
      if (!distance) continue
      fuzzy?.delete(term)
      out.push({term, weight: (PREFIX_WEIGHT * term.length) / (term.length + 0.3 * distance), data})
    }
  }
  if (fuzzy) {
    for (const [term, [data, distance]] of fuzzy) {
      if (!distance) continue
      out.push({term, weight: (FUZZY_WEIGHT * term.length) / (term.length + distance), data})
    }
  }
  return out
}

/**
 * One scope's ranking of one query. `top(k)` gives the best k documents (fewer when fewer
 * match), best first, ties by id; `terms(shortId)` the index terms a document matched.
 */
export class Ranking<T> {
  private readonly inner: MiniInternals
  private readonly expanded: Expanded[]
  private readonly candidates: Int32Array
  private readonly scores: Float64Array
  private readonly select: Float64Array

  constructor(ms: MiniSearch<T>, query: RankQuery, boost: Record<string, number>) {
    const inner = internals(ms)
    this.inner = inner
    const s = scratch(inner)
    try {
      this.select = s.select
      const {fields, lengths, total, part, mask, seen, touched, inThis, live} = s
      const order = inner._options.fields.map((name) => ({fieldId: inner._fieldIds[name], boost: boost[name] || 1}))
      const N = inner._documentCount
      const {k, b, d} = BM25
      let nTouched = 0
      this.expanded = query.terms.map((t) => {
        const key = `${t.term}\0${t.prefix}\0${t.fuzzy}`
        let e = s.expansions.get(key)
        if (e === undefined) {
          e = expand(inner, t)
          if (e.length <= EXPANSION_KEPT_MAX) {
            if (s.expandedTerms + e.length > EXPANDED_TERMS_MAX) {
              s.expansions.clear()
              s.expandedTerms = 0
            }
            s.expansions.set(key, e)
            s.expandedTerms += e.length
          }
        }
        return e
      })
      const bit = new Map<string, number>()
      for (const t of query.terms) if (!bit.has(t.term)) bit.set(t.term, bit.size)
      for (let q = 0; q < query.terms.length; q++) {
        const mark = q + 1
        let nThis = 0
        for (const {weight, data} of this.expanded[q]) {
          for (const {fieldId, boost: fieldBoost} of order) {
            const freqs = data.get(fieldId)
            if (freqs === undefined) continue
            const matching = freqs.size
            const invDocFreq = Math.log(1 + (N - matching + 0.5) / (matching + 0.5))
            const avgFieldLength = inner._avgFieldLength[fieldId]
            const w = weight * fieldBoost
            // [doc, frequency] pairs, in the map's order (the order MiniSearch adds them in); kept when long
            let pairs = s.arrays.get(freqs)
            if (pairs === undefined) {
              pairs = new Float64Array(2 * matching)
              let i = 0
              freqs.forEach((tf, doc) => {
                pairs![i++] = doc
                pairs![i++] = tf
              })
              if (matching >= ARRAY_MIN) {
                const bytes = pairs.byteLength + ARRAY_OVERHEAD
                if (s.arrayedBytes + bytes > ARRAYED_BYTES_MAX) {
                  s.arrays = new WeakMap()
                  s.arrayedBytes = 0
                }
                s.arrays.set(freqs, pairs)
                s.arrayedBytes += bytes
              }
            }
            for (let i = 0; i < pairs.length; i += 2) {
              const doc = pairs[i]
              if (live[doc] !== 1) continue
              const termFreq = pairs[i + 1]
              const fieldLength = lengths[doc * fields + fieldId]
              const raw = invDocFreq * (d + (termFreq * (k + 1)) / (termFreq + k * (1 - b + (b * fieldLength) / avgFieldLength)))
              if (seen[doc] !== mark) {
                seen[doc] = mark
                part[doc] = 0
                inThis[nThis++] = doc
              }
              part[doc] += w * raw
            }
          }
        }
        const m = 1 << bit.get(query.terms[q].term)!
        for (let i = 0; i < nThis; i++) {
          const doc = inThis[i]
          if (mask[doc] === 0) {
            touched[nTouched++] = doc
            total[doc] = 0
          }
          total[doc] += part[doc]
          mask[doc] |= m
        }
      }
      let required = 0
      let unmatchable = false
      for (const r of query.required) {
        const i = bit.get(r)
        if (i === undefined) unmatchable = true
        else required |= 1 << i
      }
      const excluded = new Set<number>()
      for (const term of query.excluded) {
        const data = inner._index.get(term)
        if (!data) continue
        for (const {fieldId} of order) for (const doc of data.get(fieldId)?.keys() ?? []) excluded.add(doc)
      }
      let n = 0
      for (let i = 0; i < nTouched; i++) {
        const doc = touched[i]
        const m = mask[doc]
        // seen[] holds query-term numbers and mask[] this query's bits: both clean for the next query
        mask[doc] = 0
        seen[doc] = 0
        if (unmatchable || (m & required) >>> 0 !== required >>> 0 || (excluded.size > 0 && excluded.has(doc))) continue
        // kept in touched[] from the front (i ≥ n): the candidates, with their scores in part[]
        touched[n] = doc
        part[n] = total[doc] * popcount(m)
        n++
      }
      this.candidates = touched.slice(0, n)
      this.scores = part.slice(0, n)
    } catch (error) {
      // the scratch may be half-written (marks, sums): the next query makes it anew
      scratchOf.delete(inner)
      throw error
    }
  }

  get size(): number {
    return this.candidates.length
  }

  /** The best k, best first; ties (after rounding) by id. */
  top(k: number, round: (score: number) => number): Ranked[] {
    const n = this.candidates.length
    let keep: number[]
    if (n <= k) keep = Array.from({length: n}, (_, i) => i)
    else {
      // the k-th largest score, then everything that could round to it or above
      const kth = kthLargest(this.scores, k, this.select)
      const floor = kth - Math.abs(kth) * 1e-11
      keep = []
      for (let i = 0; i < n; i++) if (this.scores[i] >= floor) keep.push(i)
    }
    const out = keep.map((i) => {
      const shortId = this.candidates[i]
      return {id: this.inner._documentIds.get(shortId)!, shortId, score: round(this.scores[i])}
    })
    out.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    return out.slice(0, k)
  }

  /** The index terms (query terms and their expansions) a document matched, as MiniSearch's `terms`. */
  terms(shortId: number): string[] {
    const out: string[] = []
    for (const list of this.expanded) {
      for (const {term, data} of list) {
        if (out.includes(term)) continue
        for (const fieldId of Object.values(this.inner._fieldIds)) {
          if (data.get(fieldId)?.has(shortId)) {
            out.push(term)
            break
          }
        }
      }
    }
    return out
  }
}

/** The k-th largest value (1-based) of a non-empty array, k ≤ its length: a quickselect on a copy (in `room`, when given). */
export function kthLargest(values: Float64Array, k: number, room?: Float64Array): number {
  const a = room && room.length >= values.length ? room.subarray(0, values.length) : new Float64Array(values.length)
  a.set(values)
  let lo = 0
  let hi = a.length - 1
  const want = k - 1
  while (lo < hi) {
    const pivot = a[(lo + hi) >>> 1]
    let i = lo
    let j = hi
    while (i <= j) {
      while (a[i] > pivot) i++
      while (a[j] < pivot) j--
      if (i <= j) {
        const t = a[i]
        a[i] = a[j]
        a[j] = t
        i++
        j--
      }
    }
    if (want <= j) hi = j
    else if (want >= i) lo = i
    else return a[want]
  }
  return a[want]
}
