import {describe, expect, it} from 'vitest'

import {BOOST, miniQuery, newIndex, rankQuery} from '../../src/core/index/index.js'
import {kthLargest, rankable, Ranking} from '../../src/core/index/rank.js'
import {parseQuery} from '../../src/core/index/tokenize.js'
import {fc, runs} from './properties-seed.js'

/**
 * rank.ts must rank exactly as MiniSearch#search does over the same index: the same
 * documents, the same scores to the last bit, for plain, prefix, fuzzy, required and
 * excluded words, over indexes changed by remove() and add().
 */

// words that share prefixes and lie one or two edits apart, so expansion matters
const VOCAB = ['deploy', 'deployment', 'deployer', 'depot', 'stage', 'staging', 'stag', 'cache', 'caches', 'cached', 'cachet', 'redis', 'reds', 'latency', 'latent',
  'quota', 'quote', 'quotas', 'rollback', 'rollbacks', 'rolled', 'kubernetes', 'kubernetis', 'helm', 'hello', 'help', 'timeout', 'timeouts', 'timeoff', 'acme']

const word = fc.constantFrom(...VOCAB)
const text = (max: number) => fc.array(word, {minLength: 0, maxLength: max}).map((w) => w.join(' '))
const doc = fc.record({title: text(4), tags: fc.array(word, {maxLength: 3}), body: text(40)})

interface Doc {
  path: string
  title: string
  tags: string[]
  body: string
  blob: string
  author: string
  origin: string
  tainted: boolean
  reviewed_by: string | null
}

function build(docs: {title: string; tags: string[]; body: string}[]) {
  const ms = newIndex()
  ms.addAll(docs.map((d, i): Doc => ({path: `n/${String(i).padStart(3, '0')}.md`, ...d, blob: `b${i}`, author: 'a', origin: 'direct_chat', tainted: false, reviewed_by: null})))
  return ms
}

/** MiniSearch's own answer, best first, ties by id. */
function reference(ms: ReturnType<typeof newIndex>, query: string) {
  const {query: q, options} = miniQuery(parseQuery(query))
  return ms
    .search(q, options)
    .map((r) => ({id: r.id as string, score: r.score, terms: [...r.terms].sort()}))
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
}

function fast(ms: ReturnType<typeof newIndex>, query: string, k = 1000) {
  const rq = rankQuery(parseQuery(query))
  expect(rankable(ms, rq)).toBe(true)
  const r = new Ranking(ms, rq, BOOST)
  return r.top(k, (s) => s).map((h) => ({id: h.id, score: h.score, terms: r.terms(h.shortId).sort()}))
}

const query = fc
  .array(fc.tuple(fc.constantFrom('', '', '', '+', '-', '"'), word), {minLength: 1, maxLength: 5})
  .map((parts) => parts.map(([op, w]) => (op === '"' ? `"${w}"` : `${op}${w}`)).join(' '))
  .filter((q) => {
    try {
      parseQuery(q)
      return true
    } catch {
      return false
    }
  })

describe('ranking (rank.ts) against MiniSearch#search', () => {
  it('gives the same documents with the same scores, to the last bit, and the same matched terms', () => {
    fc.assert(
      fc.property(fc.array(doc, {minLength: 1, maxLength: 40}), fc.array(query, {minLength: 1, maxLength: 4}), (docs, queries) => {
        const ms = build(docs)
        for (const q of queries) expect(fast(ms, q)).toEqual(reference(ms, q))
      }),
      {numRuns: runs(150)},
    )
  })

  it('stays exact over an index changed by remove() and add(), query after query', () => {
    fc.assert(
      fc.property(fc.array(doc, {minLength: 2, maxLength: 30}), fc.array(fc.tuple(fc.nat(), doc, query), {minLength: 1, maxLength: 6}), (docs, steps) => {
        const ms = build(docs)
        for (const [n, replacement, q] of steps) {
          expect(fast(ms, q)).toEqual(reference(ms, q))
          const path = `n/${String(n % docs.length).padStart(3, '0')}.md`
          const old = ms.getStoredFields(path)
          if (old) ms.remove({path, ...old} as Doc)
          ms.add({path, ...replacement, blob: 'x', author: 'a', origin: 'direct_chat', tainted: false, reviewed_by: null})
          expect(fast(ms, q)).toEqual(reference(ms, q))
        }
      }),
      {numRuns: runs(60)},
    )
  })

  it('picks the best k as a full sort would, ties by id', () => {
    fc.assert(
      fc.property(fc.array(doc, {minLength: 1, maxLength: 60}), query, fc.integer({min: 1, max: 12}), (docs, q, k) => {
        const ms = build(docs)
        expect(fast(ms, q, k)).toEqual(reference(ms, q).slice(0, k))
      }),
      {numRuns: runs(150)},
    )
  })

  it('finds the k-th largest value', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.double({noNaN: true, min: 0, max: 100}), fc.constantFrom(1, 2, 2, 3)), {minLength: 1, maxLength: 80}), fc.nat(), (xs, n) => {
        const k = (n % xs.length) + 1
        const sorted = [...xs].sort((a, b) => b - a)
        expect(kthLargest(Float64Array.from(xs), k)).toBe(sorted[k - 1])
      }),
      {numRuns: runs(300)},
    )
  })
})

describe('ranking after a failure mid-way', () => {
  it('does not reuse scratch left half-written by a query that threw', () => {
    const ms = build([
      {title: 'alpha', tags: [], body: 'alpha beta gamma'},
      {title: 'beta', tags: [], body: 'alpha gamma delta'},
      {title: 'gamma', tags: [], body: 'gamma delta'},
    ])
    expect(fast(ms, 'alpha')).toEqual(reference(ms, 'alpha'))
    // one postings map of "gamma" throws once while it is walked (as running out of memory would)
    const postings = (ms as unknown as {_index: {get(t: string): Map<number, Map<number, number>>}})._index.get('gamma')
    const field = [...postings.values()][0]
    const walk = field.forEach.bind(field)
    let fail = true
    field.forEach = ((fn: (v: number, k: number, m: Map<number, number>) => void) => {
      walk((v, k, m) => {
        fn(v, k, m)
        if (fail) {
          fail = false
          throw new Error('out of memory')
        }
      })
    }) as typeof field.forEach
    expect(() => fast(ms, 'alpha gamma')).toThrow('out of memory')
    for (const q of ['alpha', 'gamma', 'delta alpha', 'alpha gamma']) expect(fast(ms, q)).toEqual(reference(ms, q))
  })
})
