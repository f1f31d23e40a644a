import {spawnSync} from 'node:child_process'
import {existsSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterEach, beforeAll, describe, expect, it, vi} from 'vitest'

// @ts-expect-error a plain ES module without types
import {assemble} from '../../scripts/gen-kernel.mjs'
import {bestFirst, boundedEditDistance, Candidate, kernelParams, Scored, scoreDocs, scorePostings, ShardView} from '../../src/core/index/engine.js'
import {search, SearchHit} from '../../src/core/index/index.js'
import {createKernel, Kernel, kernelBytes, kernelFor} from '../../src/core/index/kernel.js'
import {Delta, DeltaDoc, LoadedShard, packTf, ShardBuilder} from '../../src/core/index/shard.js'
import {parseQuery, tokenize} from '../../src/core/index/tokenize.js'
import {docRecord as record, prng, useTestRepos} from './index-helpers.js'

const repo = useTestRepos()
let dirs: string[] = []
afterEach(() => {
  for (const d of dirs) rmSync(d, {recursive: true, force: true})
  dirs = []
  vi.restoreAllMocks()
  vi.unstubAllGlobals()
  delete process.env.ENGRAM_NO_WASM
})

/** The exact bits of each double (toEqual would take 0 for -0). */
const bits = (a: Float64Array) => Array.from(new BigUint64Array(Float64Array.from(a).buffer), (b) => b.toString(16))

/** With ENGRAM_NO_WASM=1: the JavaScript path. */
function withoutKernel<T>(fn: () => T): T {
  process.env.ENGRAM_NO_WASM = '1'
  try {
    return fn()
  } finally {
    delete process.env.ENGRAM_NO_WASM
  }
}

// the process's kernel exists, so every list of more than a few postings goes through it
beforeAll(() => {
  expect(kernelFor(Number.MAX_SAFE_INTEGER)).toBeInstanceOf(Kernel)
})

describe('the kernel bytes', () => {
  it('are what scripts/gen-kernel.mjs assembles from its source', () => {
    expect(Buffer.from(kernelBytes()).equals(Buffer.from(assemble()))).toBe(true)
  })
})

/** A varint as the shard writes it, with `pad` extra zero groups (a longer encoding of the same value). */
function varint(out: number[], v: number, pad = 0): void {
  const groups: number[] = []
  do {
    groups.push(v & 0x7f)
    v = Math.floor(v / 128)
  } while (v > 0)
  for (let i = 0; i < pad; i++) groups.push(0)
  for (let i = 0; i < groups.length; i++) out.push(groups[i] | (i < groups.length - 1 ? 0x80 : 0))
}

/** Random postings of documents below n: gaps of every varint length up to five bytes, every frequency shape (noted in `seen`). */
function randomPostings(rand: () => number, n: number, count: number, seen: Set<string>): number[] {
  const out: number[] = []
  const pick = (cap: number) => {
    const r = rand()
    const f = r < 0.2 ? 0 : r < 0.3 ? cap : r < 0.5 ? 128 + Math.floor(rand() * (cap - 127)) : Math.floor(rand() * Math.min(cap, 40))
    seen.add(f === 0 ? 'zero' : f === cap ? `cap ${cap}` : f >= 128 ? 'two bytes' : 'one byte')
    return f
  }
  // doc ids ascend from 0: the first gap is the first id (0 too), the others at least 1
  let doc = 0
  for (let i = 0; i < count; i++) {
    const gap = rand() < 0.03 ? Math.floor((rand() * (n - doc)) / 16) : i === 0 ? 0 : 1 + Math.floor(rand() * 3)
    if (doc + gap >= n || (gap === 0 && i > 0)) break
    doc += gap
    const pad = rand() < 0.15 ? 1 + Math.floor(rand() * 4) : 0
    const gapBytes: number[] = []
    varint(gapBytes, gap)
    varint(out, gap, Math.min(pad, 5 - gapBytes.length))
    seen.add(`gap of ${Math.max(gapBytes.length, Math.min(5, gapBytes.length + pad))} bytes`)
    for (const f of [pick(255), pick(255)]) {
      if (f < 128) out.push(f)
      else out.push((f & 0x7f) | 0x80, f >> 7)
    }
    varint(out, pick(0x7fff), rand() < 0.1 ? 1 : 0)
  }
  return out
}

describe('scoring postings', () => {
  it('gives the documents and bit-identical scores of the JavaScript, on random lists', () => {
    const rand = prng(42)
    const k = createKernel()!
    expect(k).toBeDefined()
    let compared = 0
    const seen = new Set<string>()
    for (let round = 0; round < 60; round++) {
      // past 16384 documents, gaps take three bytes
      const n = 1 + Math.floor(rand() * (round % 3 === 0 ? 400_000 : 20_000))
      const lens = new Uint32Array(n * 3)
      for (let i = 0; i < lens.length; i++) {
        const r = rand()
        lens[i] = r < 0.1 ? 0 : r < 0.15 ? 0xffffffff - Math.floor(rand() * 1000) : Math.floor(rand() * 600)
      }
      const deleted = rand() < 0.5 ? undefined : Uint8Array.from({length: n}, () => (rand() < 0.25 ? 1 : 0))
      const avg = Float64Array.from({length: 3}, () => (rand() < 0.15 ? 0 : rand() * 300))
      // the postings in the middle of a larger buffer, as in a shard's post section
      const lead = Math.floor(rand() * 50)
      const list = randomPostings(rand, n, 1 + Math.floor(rand() * 6000), seen)
      const p = Uint8Array.from([...Array.from({length: lead}, () => 0xff), ...list, 0x81, 0x81])
      // the same lengths twice in a row: the kernel keeps them; other deleted flags: it copies those
      for (const del of [deleted, deleted ? undefined : Uint8Array.from({length: n}, (_, i) => i % 2)]) {
        const cap = list.length >>> 2
        const jsDocs = new Int32Array(cap)
        const jsS = new Float64Array(cap)
        const count = scorePostings(p, lead, lead + list.length, lens, del, avg, jsDocs, jsS)
        const extra = round % 4
        const out = k.score(p, lead, lead + list.length, lens, del, kernelParams(avg), extra)
        expect(out.docs.length).toBe(count + extra)
        expect(Array.from(out.docs.subarray(0, count))).toEqual(Array.from(jsDocs.subarray(0, count)))
        expect(bits(out.s.subarray(0, count))).toEqual(bits(jsS.subarray(0, count)))
        compared += count
      }
    }
    expect(compared).toBeGreaterThan(100_000)
    expect([...seen].sort()).toEqual(['cap 255', 'cap 32767', 'gap of 1 bytes', 'gap of 2 bytes', 'gap of 3 bytes', 'gap of 4 bytes', 'gap of 5 bytes', 'one byte', 'two bytes', 'zero'])
  })

  it('decodes the largest values the format holds: 255 title and tags, a 0x7fff body, a five-byte gap', () => {
    const n = 3
    const lens = Uint32Array.from([0, 0, 0, 7, 0xffffffff, 1, 3, 3, 3])
    const avg = Float64Array.of(0, 2.5, 1e-300)
    const list: number[] = []
    varint(list, 0, 4) // doc 0 in five bytes
    list.push(0xff, 0x01, 0xff, 0x01) // 255, 255
    varint(list, 0x7fff)
    varint(list, 1)
    list.push(0, 0, 0) // a posting with no frequency at all scores 0
    varint(list, 1, 2)
    list.push(0x80, 0x01, 0) // title 128, tags 0
    varint(list, 1)
    const p = Uint8Array.from(list)
    const jsDocs = new Int32Array(8)
    const jsS = new Float64Array(8)
    const count = scorePostings(p, 0, p.length, lens, undefined, avg, jsDocs, jsS)
    expect(count).toBe(n)
    const out = createKernel()!.score(p, 0, p.length, lens, undefined, kernelParams(avg), 0)
    expect(Array.from(out.docs)).toEqual([0, 1, 2])
    expect(bits(out.s)).toEqual(bits(jsS.subarray(0, count)))
    expect(out.s[1]).toBe(0)
  })
})

// ---- real shards -----------------------------------------------------------------

/** index terms (stems, as tokenize makes them) */
const VOCAB = [...new Set(tokenize('deploy deployment deployer staging stages cluster clusters caches cached redis retry retries pager oncall runbook'))]

function randomTerms(rand: () => number): {lens: [number, number, number]; terms: Map<string, number>} {
  const terms = new Map<string, number>()
  const count = 1 + Math.floor(rand() * 8)
  for (let i = 0; i < count; i++) {
    const w = VOCAB[Math.floor(rand() * VOCAB.length)]
    terms.set(w, packTf(rand() < 0.7 ? 0 : Math.floor(rand() * 300), rand() < 0.8 ? 0 : Math.floor(rand() * 300), Math.floor(rand() * (rand() < 0.05 ? 40_000 : 20))))
  }
  return {lens: [Math.floor(rand() * 12), Math.floor(rand() * 5), Math.floor(rand() * 900)], terms}
}

/** A shard of n random documents and a delta that deletes some and adds others. */
function randomScope(seed: number, n: number): {shard: LoadedShard; delta: Delta} {
  const rand = prng(seed)
  const dir = mkdtempSync(join(tmpdir(), 'engram-kernel-'))
  dirs.push(dir)
  const builder = new ShardBuilder()
  for (let i = 0; i < n; i++) builder.add(record(`m${String(i).padStart(6, '0')}.md`), randomTerms(rand))
  const file = join(dir, 'org.shard')
  writeFileSync(file, builder.encode('org', 'f'.repeat(40)))
  const shard = LoadedShard.open(file, 'org')!
  const deleted = [...new Set(Array.from({length: Math.floor(n / 7)}, () => Math.floor(rand() * n)))]
  const docs: DeltaDoc[] = Array.from({length: 40}, (_, i) => {
    const t = randomTerms(rand)
    return {...record(`new${i}.md`), lens: t.lens, terms: [...t.terms]}
  })
  return {shard, delta: {format: 1, scope: 'org', build: shard.header.build, tree: 'e'.repeat(40), deleted, docs}}
}

describe('scoring a view', () => {
  const QUERIES = ['deploy', 'deploy staging', 'clustr cache', '+retry pager', 'redis -cache oncall', 'runbook +deploy -stage', '"oncall runbook" retri']

  it('gives the same term scores and the same matches, bit for bit, with and without the kernel', () => {
    for (const [seed, n, withDelta] of [
      [1, 3000, false],
      [2, 5000, true],
      [3, 200, true],
    ] as const) {
      const {shard, delta} = randomScope(seed, n)
      try {
        const d = withDelta ? delta : undefined
        const wasm = new ShardView('org', shard, d)
        const js = new ShardView('org', shard, d)
        const score = vi.spyOn(Kernel.prototype, 'score')
        const add = vi.spyOn(Kernel.prototype, 'add')
        for (const term of [...VOCAB, 'absent']) {
          const a = wasm.termScores(term)
          const b = withoutKernel(() => js.termScores(term))
          expect(Array.from(a.docs)).toEqual(Array.from(b.docs))
          expect(bits(a.s)).toEqual(bits(b.s))
        }
        for (const q of QUERIES) {
          const query = parseQuery(q)
          const mA = new Set<string>()
          const mB = new Set<string>()
          const a = scoreDocs(wasm, query, mA)
          // the same view's term scores, added up by the JavaScript
          const b = withoutKernel(() => scoreDocs(wasm, query, mB))
          const c = withoutKernel(() => scoreDocs(js, query, new Set()))
          expect([...mA]).toEqual([...mB])
          for (const other of [b, c]) {
            expect(Array.from(a.docs)).toEqual(Array.from(other.docs))
            expect(bits(a.scores)).toEqual(bits(other.scores))
          }
          if (n > 1000) expect(a.docs.length).toBeGreaterThan(0)
        }
        // the kernel did the work it was given
        expect(score).toHaveBeenCalled()
        expect(add).toHaveBeenCalled()
      } finally {
        shard.close()
      }
    }
  })

  it('leaves its working memory clean after an error mid-way, and then scores the same', () => {
    const {shard, delta} = randomScope(5, 3000)
    try {
      const view = new ShardView('org', shard, delta)
      const query = parseQuery('deploy -staging cluster')
      const before = scoreDocs(view, query, new Set())
      const k = kernelFor(Number.MAX_SAFE_INTEGER)!
      const finish = vi.spyOn(Kernel.prototype, 'finish').mockImplementationOnce(() => {
        throw new Error('interrupted')
      })
      expect(() => scoreDocs(view, query, new Set())).toThrow('interrupted')
      expect(finish).toHaveBeenCalled()
      const after = scoreDocs(view, query, new Set())
      expect(Array.from(after.docs)).toEqual(Array.from(before.docs))
      expect(bits(after.scores)).toEqual(bits(before.scores))
      // and a query that excludes nothing is not hiding what the last one excluded
      const plain = scoreDocs(view, parseQuery('staging'), new Set())
      const plainJs = withoutKernel(() => scoreDocs(view, parseQuery('staging'), new Set()))
      expect(Array.from(plain.docs)).toEqual(Array.from(plainJs.docs))
      expect(k).toBe(kernelFor(Number.MAX_SAFE_INTEGER))
    } finally {
      shard.close()
    }
  })
})

describe('fuzzy terms', () => {
  it('walks the dictionary to the same terms and distances as the JavaScript (and as measuring every term)', () => {
    const rand = prng(23)
    const word = (min: number, max: number, alphabet = 'abcd') =>
      Array.from({length: min + Math.floor(rand() * (max - min + 1))}, () => alphabet[Math.floor(rand() * alphabet.length)]).join('')
    const terms = new Set<string>()
    while (terms.size < 3000) {
      const r = rand()
      if (r < 0.8) terms.add(word(1, 10))
      else if (r < 0.9) terms.add(`${word(0, 4)}${['é', 'ß', '日本', 'ü'][Math.floor(rand() * 4)]}${word(0, 4)}`)
      else terms.add(word(11, 64, 'abcdefgh'))
    }
    const list = [...terms]
    const dir = mkdtempSync(join(tmpdir(), 'engram-kernel-'))
    dirs.push(dir)
    const builder = new ShardBuilder()
    for (let i = 0; i < 300; i++) {
      builder.add(record(`m${String(i).padStart(4, '0')}.md`), {lens: [1, 0, 10], terms: new Map(list.slice(i * 10, i * 10 + 10).map((t) => [t, packTf(0, 0, 1)]))})
    }
    const file = join(dir, 'org.shard')
    writeFileSync(file, builder.encode('org', 'f'.repeat(40)))
    const shard = LoadedShard.open(file, 'org')!
    try {
      const view = new ShardView('org', shard, undefined)
      const fuzzy = vi.spyOn(Kernel.prototype, 'fuzzy')
      let found = 0
      for (let round = 0; round < 150; round++) {
        const q = round % 10 === 9 ? list[Math.floor(rand() * list.length)] : round % 10 === 8 ? word(12, 20) : word(1, 11)
        for (const max of [0, 1, 2]) {
          const a = [...view.fuzzyTerms(q, max)]
          const b = withoutKernel(() => [...view.fuzzyTerms(q, max)])
          expect(a).toEqual(b)
          const brute = list.map((t) => [t, boundedEditDistance(q, t, max)] as [string, number]).filter(([, d]) => d <= max)
          expect(new Map(a)).toEqual(new Map(brute))
          found += a.length
        }
      }
      expect(fuzzy).toHaveBeenCalled()
      expect(found).toBeGreaterThan(2000)
    } finally {
      shard.close()
    }
  })
})

describe('ranking', () => {
  it('yields the same candidates in the same rounds with and without the kernel', () => {
    const rand = prng(11)
    for (let round = 0; round < 40; round++) {
      // scores with many ties, over several scopes (views need only a scope and paths here)
      const sets: Scored[] = Array.from({length: 1 + (round % 3)}, (_, v) => {
        const n = round % 5 === 0 ? Math.floor(rand() * 5) : Math.floor(rand() * 3000)
        const view = {scope: `s${v}`, path: (doc: number) => `m${doc % 97}/${doc}.md`} as unknown as ShardView
        const levels = 1 + Math.floor(rand() * 400)
        return {
          view,
          docs: Int32Array.from({length: n}, (_, i) => i * 3),
          scores: Float64Array.from({length: n}, () => Math.floor(rand() * levels) / 7),
        }
      })
      const batch = 1 + Math.floor(rand() * 40)
      const take = (it: Generator<Candidate>) => {
        const out: string[] = []
        for (const c of it) {
          out.push(`${c.view.scope} ${c.doc} ${c.path} ${c.score}`)
          if (out.length > 500) break
        }
        return out
      }
      // each round's threshold: the k-th largest score below the last one
      const kernel = kernelFor(Number.MAX_SAFE_INTEGER)!
      const all = sets.flatMap((set) => Array.from(set.scores)).sort((x, y) => y - x)
      for (const [k, upper] of [
        [batch, Infinity],
        [2 * batch, all[batch] ?? 0],
        [1, all[0] ?? 0],
        [all.length + 1, Infinity],
      ]) {
        const below = all.filter((v) => v < upper)
        const expected = below.length === 0 ? undefined : below.length < k ? -Infinity : below[k - 1]
        expect(kernel.threshold(sets.map((set) => set.scores), k, upper)).toBe(expected)
      }
      const within = vi.spyOn(Kernel.prototype, 'within')
      const a = take(bestFirst(sets, batch))
      const total = sets.reduce((n, s) => n + s.scores.length, 0)
      if (total >= 128) expect(within).toHaveBeenCalled()
      const b = withoutKernel(() => take(bestFirst(sets, batch)))
      expect(a).toEqual(b)
      expect(a.length).toBe(Math.min(total, 501))
      vi.restoreAllMocks()
    }
  })
})

describe('a whole search', () => {
  const WORDS = 'deploy deploys deployment staging stage cluster cache redis queue retry backoff tenant billing invoice oncall pager runbook config flag'.split(' ')
  const QUERIES = ['deploy', 'deploy staging', 'redis queue', 'cache +retry', 'billing -invoice', 'clustr', 'pagers oncall runbook', 'config flag tenant']

  async function both(r: ReturnType<typeof repo>): Promise<void> {
    const opts = {scopes: ['org'], limit: 40}
    const score = vi.spyOn(Kernel.prototype, 'score')
    const withWasm: SearchHit[][] = []
    for (const q of QUERIES) withWasm.push(await search(r.store, q, opts))
    expect(score).toHaveBeenCalled()
    score.mockClear()
    process.env.ENGRAM_NO_WASM = '1'
    const withJs: SearchHit[][] = []
    try {
      for (const q of QUERIES) withJs.push(await search(r.store, q, opts))
    } finally {
      delete process.env.ENGRAM_NO_WASM
    }
    expect(score).not.toHaveBeenCalled()
    expect(withWasm).toEqual(withJs)
    expect(bits(Float64Array.from(withWasm.flat(), (h) => h.score))).toEqual(bits(Float64Array.from(withJs.flat(), (h) => h.score)))
    expect(withWasm.flat().length).toBeGreaterThan(100)
  }

  it('finds the same hits with the same scores with ENGRAM_NO_WASM=1 and without, before and after a delta', async () => {
    const r = repo()
    const rand = prng(9)
    const body = () => `${Array.from({length: 5 + Math.floor(rand() * 40)}, () => WORDS[Math.floor(rand() * WORDS.length)]).join(' ')}\n`
    for (let i = 0; i < 240; i++) r.put(`org/m${i}.md`, {title: WORDS[Math.floor(rand() * WORDS.length)], tags: rand() < 0.3 ? ['ops'] : [], body: body()})
    r.commit()
    await both(r)
    for (let i = 0; i < 240; i += 9) r.remove(`org/m${i}.md`)
    for (let i = 4; i < 240; i += 11) if (i % 9 !== 0) r.put(`org/m${i}.md`, {title: 'edited', body: body()})
    r.commit('changes')
    await both(r)
  })
})

describe('without WebAssembly', () => {
  it('falls back to the JavaScript when WebAssembly is missing or refuses the module', () => {
    vi.stubGlobal('WebAssembly', undefined)
    expect(createKernel()).toBeUndefined()
    vi.unstubAllGlobals()
    vi.stubGlobal('WebAssembly', {
      ...WebAssembly,
      Module: function () {
        throw new Error('no')
      },
    })
    expect(createKernel()).toBeUndefined()
    vi.unstubAllGlobals()
    process.env.ENGRAM_NO_WASM = '1'
    expect(kernelFor(Number.MAX_SAFE_INTEGER)).toBeUndefined()
  })

  const dist = fileURLToPath(new URL('../../dist/core/index/', import.meta.url))
  it.skipIf(!existsSync(join(dist, 'kernel.js')))('scores under node --jitless (no WebAssembly at all) as with the kernel', () => {
    const {shard, delta} = randomScope(6, 4000)
    shard.close()
    const script = `
      const {kernelFor} = await import(${JSON.stringify(join(dist, 'kernel.js'))})
      const {ShardView, scoreDocs} = await import(${JSON.stringify(join(dist, 'engine.js'))})
      const {LoadedShard} = await import(${JSON.stringify(join(dist, 'shard.js'))})
      const {parseQuery} = await import(${JSON.stringify(join(dist, 'tokenize.js'))})
      const shard = LoadedShard.open(process.argv[1], 'org')
      const view = new ShardView('org', shard, JSON.parse(process.argv[2]))
      const r = scoreDocs(view, parseQuery('deploy staging -cache'), new Set())
      const bits = Array.from(new BigUint64Array(Float64Array.from(r.scores).buffer), (b) => b.toString(16))
      console.log(JSON.stringify({wasm: typeof WebAssembly, kernel: kernelFor(1e9) === undefined ? 'none' : 'made', docs: Array.from(r.docs), bits}))
    `
    const file = join(dirs[dirs.length - 1], 'org.shard')
    const run = spawnSync(process.execPath, ['--jitless', '--input-type=module', '-e', script, file, JSON.stringify(delta)], {encoding: 'utf8'})
    expect(run.status, run.stderr).toBe(0)
    const out = JSON.parse(run.stdout)
    expect(out.wasm).toBe('undefined')
    expect(out.kernel).toBe('none')
    const reopened = LoadedShard.open(file, 'org')!
    try {
      const r = scoreDocs(new ShardView('org', reopened, delta), parseQuery('deploy staging -cache'), new Set())
      expect(out.docs).toEqual(Array.from(r.docs))
      expect(out.bits).toEqual(bits(r.scores))
      expect(out.docs.length).toBeGreaterThan(100)
    } finally {
      reopened.close()
    }
  })
})
