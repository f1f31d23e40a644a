import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

import {ShardView} from '../../src/core/index/engine.js'
import {CorruptIndexError, DocRecord, LoadedShard, packTf, peekHeader, ShardBuilder} from '../../src/core/index/shard.js'
let dirs: string[] = []
afterEach(() => {
  for (const d of dirs) rmSync(d, {recursive: true, force: true})
  dirs = []
})

const record = (path: string): DocRecord => ({
  path,
  blob: '0'.repeat(40),
  title: path,
  tags: [],
  author: 'alice',
  origin: 'direct_chat',
  tainted: false,
  reviewed_by: null,
  body: `body of ${path}`,
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
