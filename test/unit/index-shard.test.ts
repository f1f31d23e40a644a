import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

import {boundedEditDistance, ShardView} from '../../src/core/index/engine.js'
import {CorruptIndexError, LoadedShard, packTf, peekHeader, ShardBuilder} from '../../src/core/index/shard.js'
import {docRecord as record, prng} from './index-helpers.js'

let dirs: string[] = []
afterEach(() => {
  for (const d of dirs) rmSync(d, {recursive: true, force: true})
  dirs = []
})

/** Write a shard of documents (path → terms) with the given block size; returns its file. */
function writeShard(docs: [string, string[]][], blockSize?: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'engram-shard-'))
  dirs.push(dir)
  const builder = new ShardBuilder()
  for (const [path, terms] of docs) {
    builder.add(record(path), {lens: [1, 0, terms.length], terms: new Map(terms.map((t) => [t, packTf(0, 0, 1)]))})
  }
  const file = join(dir, 'org.shard')
  writeFileSync(file, builder.encode('org', 'f'.repeat(40), blockSize))
  return file
}

function flip(file: string, at: number): void {
  const buf = readFileSync(file)
  buf[at] ^= 0x55
  writeFileSync(file, buf)
}

describe('lazily checked shard blocks', () => {
  const docs: [string, string[]][] = Array.from({length: 200}, (_, i) => [`m${String(i).padStart(3, '0')}.md`, ['alpha', `w${i}`]])

  it('reads only the blocks a query needs, and refuses a damaged one when it is used', () => {
    const file = writeShard(docs, 256)
    const header = peekHeader(file)!
    const clean = LoadedShard.open(file, 'org')!
    const blockOf = (term: string) => {
      const {start} = clean.postings(clean.termIndex(term))
      return Math.floor((header.header.sections.post[0] + start) / 256)
    }
    const damaged = clean.postings(clean.termIndex('w150'))
    expect(blockOf('w10')).not.toBe(blockOf('w150'))
    const expected = new ShardView('org', clean, undefined).termScores('w10')
    clean.close()

    flip(file, header.coreStart + header.header.sections.post[0] + damaged.start)
    const shard = LoadedShard.open(file, 'org')! // opening reads no block of the core
    try {
      const view = new ShardView('org', shard, undefined)
      expect(view.termScores('w10')).toEqual(expected)
      let error: unknown
      try {
        view.termScores('w150')
      } catch (e) {
        error = e
      }
      expect(error).toBeInstanceOf(CorruptIndexError)
      expect(error).toMatchObject({scope: 'org', message: expect.stringMatching(/checksum mismatch in block \d+/)})
    } finally {
      shard.close()
    }
  })

  it('checks the block of a path before it is served', () => {
    const file = writeShard(docs, 256)
    const header = peekHeader(file)!
    const clean = LoadedShard.open(file, 'org')!
    expect(clean.path(150)).toBe('m150.md')
    expect(clean.docIndex('m150.md')).toBe(150)
    expect(clean.record(150).path).toBe('m150.md')
    clean.close()

    // paths are stored back to back: doc 150's starts 150 paths in
    flip(file, header.coreStart + header.header.sections.paths[0] + 150 * 'm000.md'.length + 1)
    const shard = LoadedShard.open(file, 'org')!
    try {
      expect(shard.path(10)).toBe('m010.md')
      expect(() => shard.path(150)).toThrow(CorruptIndexError)
      expect(() => shard.record(150)).toThrow(CorruptIndexError)
    } finally {
      shard.close()
    }
  })
})

describe('dictionary scans', () => {
  /** Words over a small alphabet (many shared prefixes and near misses), some of them not ASCII. */
  function randomWord(rand: () => number): string {
    const letters = ['a', 'b', 'c', 'd', 'e', 'д', 'ж', '𝔘']
    const n = 1 + Math.floor(rand() * 9)
    let w = ''
    for (let i = 0; i < n; i++) w += letters[Math.floor(rand() * (rand() < 0.9 ? 5 : letters.length))]
    return w
  }

  it('find exactly the terms a full scan finds: fuzzy with their distances, and prefixes', () => {
    const rand = prng(5)
    const words = [...new Set(Array.from({length: 3000}, () => randomWord(rand)))]
    const file = writeShard(words.map((w, i) => [`d${String(i).padStart(5, '0')}.md`, [w]]))
    const shard = LoadedShard.open(file, 'org')!
    try {
      const view = new ShardView('org', shard, undefined)
      for (let trial = 0; trial < 300; trial++) {
        const q = trial % 3 === 0 ? words[Math.floor(rand() * words.length)] : randomWord(rand)
        const max = 1 + (trial % 2)
        const expected = new Map<string, number>()
        for (const w of words) {
          if (Math.abs(w.length - q.length) > max) continue
          const d = boundedEditDistance(q, w, max)
          if (d <= max) expected.set(w, d)
        }
        const got = view.fuzzyTerms(q, max)
        expect(new Map([...got].sort()), `fuzzy ${q} ${max}`).toEqual(new Map([...expected].sort()))
        expect(view.prefixTerms(q).sort(), `prefix ${q}`).toEqual(words.filter((w) => w.startsWith(q)).sort())
      }
    } finally {
      shard.close()
    }
  })
})
