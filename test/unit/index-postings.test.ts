import {readFileSync, rmSync, writeFileSync} from 'node:fs'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {INDEX_DIR, nominate, postingsPath, rebuild, refresh, search, status} from '../../src/core/index/index.js'
import {prng, TestRepo} from './index-helpers.js'

const SCOPES = ['org', 'project:web']
const VOCAB = ('deploy staging cluster rollback cache latency invoice billing quota limit oncall runbook pager certificate rotation postgres ' +
  'migration timeout webhook retry backoff terraform helm chart kafka topic consumer lag redis sentinel failover').split(' ')

/**
 * The write path's lookup (nominate, from the postings files) must nominate exactly what a
 * search of the full MiniSearch index with the same rare words finds, scores included,
 * with a delta of changes since the index was written; and a postings file that is gone,
 * damaged or not the one the index names must change nothing but the time taken.
 */
describe('neighbour nomination from the postings files', () => {
  let r: TestRepo
  const rand = prng(11)
  const word = () => (rand() < 0.85 ? VOCAB[Math.floor(VOCAB.length * rand() * rand())] : `qx${Math.floor(rand() * 3000).toString(36)}`)
  const sentence = (n: number) => Array.from({length: n}, word).join(' ')
  const texts: string[] = []

  /** the first `n` texts (each full search loads the whole index: the slow part of this file) */
  const compare = async (n = texts.length) => {
    const out: string[][] = []
    for (const text of texts.slice(0, n)) {
      const full = (await search(r.store, text, {scopes: SCOPES, limit: 8, informative: 12, bodies: true})).map((h) => `${h.scope}/${h.path} ${h.score}`)
      const nominated = (await nominate(r.store, text, {scopes: SCOPES, limit: 8, informative: 12})).map((h) => `${h.scope}/${h.path} ${h.score}`)
      expect(nominated).toEqual(full)
      out.push(nominated)
    }
    return out
  }

  beforeAll(async () => {
    r = new TestRepo()
    for (let i = 0; i < 2200; i++) r.put(`project/web/m${i}.md`, {title: sentence(4), tags: i % 7 === 0 ? ['ops'] : [], body: `${sentence(20 + (i % 40))}.\n`})
    for (let i = 0; i < 300; i++) r.put(`org/o${i}.md`, {title: sentence(3), body: `${sentence(15)}.\n`})
    r.commit('memories')
    await rebuild(r.store)
    // changes since the full index: a delta of replaced, removed and new documents
    for (let i = 0; i < 40; i++) r.put(`project/web/m${i * 13}.md`, {title: sentence(4), body: `${sentence(30)} qxnewword${i}.\n`})
    for (let i = 0; i < 30; i++) r.remove(`project/web/m${i * 17 + 5}.md`)
    for (let i = 0; i < 50; i++) r.put(`project/web/new${i}.md`, {title: sentence(4), body: `${sentence(25)} qxfresh${i % 5}.\n`})
    r.commit('changes')
    await refresh(r.store, SCOPES)
    texts.push('qxnewword3 and qxfresh2 only', `${readFileSync(r.store.abs('project/web/new7.md'), 'utf8')}`, 'nothing indexed here zzzz')
    for (let i = 0; i < 27; i++) {
      const n = (i * 31) % 2200
      // a removed document's words too: they must no longer count
      const doc = n % 17 === 5 && n < 30 * 17 ? '' : (readFileSync(r.store.abs(`project/web/m${n}.md`), 'utf8').split('\n---\n')[1] ?? '')
      texts.push(i % 3 === 0 ? sentence(40) : `${doc} ${sentence(8)}`)
    }
  }, 300_000)
  afterAll(() => r.cleanup())

  it('nominates exactly what the full index finds, with a delta replayed', async () => {
    expect((await status(r.store)).find((s) => s.scope === 'project:web')?.delta).toBeGreaterThan(100)
    const results = await compare()
    expect(results.filter((x) => x.length > 0).length).toBeGreaterThan(25)
    // words only in the delta's documents are found
    expect(results[0].some((h) => h.startsWith('project:web/new'))).toBe(true)
  })

  it('changes nothing when the postings file is gone, and writes it again as it was', async () => {
    const file = postingsPath(r.store, 'project:web')
    const before = readFileSync(file)
    rmSync(file)
    await compare(6)
    expect(readFileSync(file).equals(before)).toBe(true)
  })

  it('changes nothing when the postings file is damaged or not the one the index names', async () => {
    const file = postingsPath(r.store, 'project:web')
    const good = readFileSync(file)
    // a torn write, garbage, and bytes flipped in the postings past the head
    for (const bad of [good.subarray(0, good.length >> 1), Buffer.from('not a postings file\n'), Buffer.from(good.map((b, i) => (i > good.length - 4000 ? b ^ 0x55 : b)))]) {
      writeFileSync(file, bad)
      await compare(4)
    }
    // an index that names no postings (written before them): the full index, every time
    const index = r.store.abs(`${INDEX_DIR}/project.web.index`)
    const text = readFileSync(index, 'utf8')
    const nl = text.indexOf('\n')
    const meta = JSON.parse(text.slice(0, nl))
    delete meta.postings
    writeFileSync(index, `${JSON.stringify(meta)}${text.slice(nl)}`)
    rmSync(file)
    await compare(4)
  })
})
