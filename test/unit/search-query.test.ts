import {describe, expect, it} from 'vitest'

import {isEngramError} from '../../src/core/store/errors.js'
import {makeSnippet} from '../../src/core/index/snippet.js'
import {parseQuery, stem, termOf, tokenize} from '../../src/core/index/tokenize.js'
import {parseCanonicalMemory as parseMemoryFast} from '../../src/core/memory/memory.js'
import {parseMemory, serializeMemory} from '../../src/core/memory/memory.js'

function badInputOf(fn: () => unknown): string {
  try {
    fn()
  } catch (error) {
    if (isEngramError(error) && error.code === 'bad-input') return error.message
    throw error
  }
  throw new Error('expected a bad-input error')
}

describe('term pipeline', () => {
  it('lowercases, drops stop-words and single letters, stems', () => {
    expect(tokenize('The Deploys were deployed; deploying is a DEPLOY.')).toEqual(['deploy', 'deploy', 'deploy', 'deploy'])
    expect(tokenize('policies policy')).toEqual(['policy', 'policy'])
    expect(tokenize('caching cached caches cache')).toEqual(['cach', 'cach', 'cach', 'cach'])
    expect(tokenize('running runs run')).toEqual(['run', 'run', 'run'])
    expect(tokenize('stage staging staged')).toEqual(['stag', 'stag', 'stag'])
  })

  it('keeps numbers and identifiers, folds diacritics', () => {
    expect(tokenize('v2 port 8080 café_config')).toEqual(['v2', 'port', '8080', 'caf', 'config'])
    expect(stem('status')).toBe('status')
    expect(stem('analysis')).toBe('analysis')
  })

  it('bounds the length of a term', () => {
    const [t] = tokenize('x'.repeat(500))
    expect(t.length).toBeLessThanOrEqual(64)
  })

  it('never cuts a long word inside a surrogate pair (terms survive UTF-8)', () => {
    const [t] = tokenize(`${'x'.repeat(63)}𝔘𝔘`)
    expect(t).toBe('x'.repeat(63))
    expect(Buffer.from(t, 'utf8').toString('utf8')).toBe(t)
    const [u] = tokenize(`${'x'.repeat(62)}𝔘𝔘`)
    expect(u).toBe(`${'x'.repeat(62)}𝔘`)
  })
})

describe('query syntax', () => {
  it('parses plain, required, excluded and quoted words', () => {
    const q = parseQuery('deploys +staging -legacy "blue green"')
    expect(q).toEqual([
      {term: 'deploy', mode: 'should', expand: true},
      {term: 'stag', mode: 'must', expand: true},
      {term: 'legacy', mode: 'not', expand: false},
      {term: 'blu', mode: 'must', expand: false},
      {term: 'green', mode: 'must', expand: false},
    ])
  })

  it('reports syntax errors as bad input', () => {
    expect(badInputOf(() => parseQuery('deploy "staging'))).toMatch(/unclosed quote at position 8/)
    expect(badInputOf(() => parseQuery('deploy - staging'))).toMatch(/"-" at position 8 with no word/)
    expect(badInputOf(() => parseQuery('   '))).toMatch(/empty/)
    expect(badInputOf(() => parseQuery('the and of'))).toMatch(/no searchable words/)
    expect(badInputOf(() => parseQuery('-legacy'))).toMatch(/only excludes/)
  })

  it('truncates a very long query to a bounded number of terms', () => {
    const words = Array.from({length: 2000}, (_, i) => `word${i}`)
    const q = parseQuery(words.join(' ').slice(0, 10_000))
    expect(q.length).toBe(32)
    expect(q.filter((t) => t.expand).length).toBe(8)
    expect(q[0].term).toBe('word0')
  })
})

describe('fast frontmatter parse', () => {
  const base = {
    id: 'm1',
    title: 'Deploy "notes" — café',
    scope: 'project:web',
    tags: ['ops', 'deploy'],
    author: 'alice',
    source_session: null,
    origin: 'email' as const,
    tainted: true,
    taint_reasons: ['origin:email'],
    created: '2025-01-01T00:00:00.000Z',
    updated: '2025-01-02T00:00:00.000Z',
    version: 3,
    proposal: 'p1',
    reviewed_by: null,
    digest: null,
    signature: 'c2ln',
  }

  it('gives exactly what parseMemory gives for files our writer emits', () => {
    const bodies = ['plain body\n', '\n\nleading blank lines\r\nand CRLF\r\n', '', 'tab\there --- not a fence\n---\nafter a rule\n']
    for (const body of bodies) {
      const text = serializeMemory({frontmatter: base, body})
      const fast = parseMemoryFast(text)
      expect(fast).toBeDefined()
      expect(fast).toEqual(parseMemory(text, 'x'))
    }
  })

  it('leaves anything else to parseMemory', () => {
    expect(parseMemoryFast('---\nid: m1\ntitle: plain yaml\n---\nbody\n')).toBeUndefined()
    const text = serializeMemory({frontmatter: base, body: 'b\n'})
    expect(parseMemoryFast(text.replace('"email"', '"carrier-pigeon"'))).toBeUndefined()
    expect(parseMemoryFast(text.replace('version: 3', 'version: 0'))).toBeUndefined()
    expect(parseMemoryFast(text.replace('---\n', '---\nid: "dup"\n'))).toBeUndefined()
  })
})

describe('snippets', () => {
  it('start at the first word whose term matched, as stemming every word would find it', () => {
    const vocabulary = ['flies', 'fly', 'studies', 'running', 'run', 'passes', 'pass', 'boxes', 'the', 'a', '7', 'caffè', 'naïve', 'hopped', 'hope', 'x', 'deploy', 'deployment']
    let seed = 7
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n)
    for (let round = 0; round < 300; round++) {
      const body = Array.from({length: 40}, () => vocabulary[rnd(vocabulary.length)]).join(' ')
      const matched = new Set(Array.from({length: 1 + rnd(3)}, () => termOf(vocabulary[rnd(vocabulary.length)])).filter((t): t is string => t !== undefined))
      // brute force: stem every word
      let pos = -1
      for (const m of body.matchAll(/[\p{L}\p{N}]+/gu)) {
        const w = m[0].toLowerCase().normalize('NFD').replace(/\p{M}+/gu, '')
        const t = termOf(w)
        if (t !== undefined && matched.has(t)) {
          pos = m.index
          break
        }
      }
      const snippet = makeSnippet(body, matched)
      const expected = makeSnippetAt(body, pos)
      expect(snippet, `${[...matched]} in ${body}`).toBe(expected)
    }
  })
})

/** The snippet text makeSnippet builds around a position (its windowing, restated). */
function makeSnippetAt(body: string, pos: number): string {
  let start = pos <= 60 ? 0 : pos - 60
  if (start > 0) {
    const space = body.lastIndexOf(' ', start)
    if (space > start - 20 && space >= 0) start = space + 1
  }
  let end = Math.min(body.length, start + 200)
  if (end < body.length) {
    const space = body.lastIndexOf(' ', end)
    if (space > start + 100) end = space
  }
  const text = body.slice(start, end).replace(/\s+/g, ' ').trim()
  return `${start > 0 ? '…' : ''}${text}${end < body.length ? '…' : ''}`
}
