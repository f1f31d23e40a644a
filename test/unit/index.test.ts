import {existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, truncateSync, writeFileSync} from 'node:fs'
import MiniSearch from 'minisearch'
import {afterEach, describe, expect, it} from 'vitest'

import {isEngramError} from '../../src/core/store/errors.js'
import {gitBlobHash} from '../../src/core/memory/hash.js'
import {deltaBound, FORMAT, INDEX_DIR, rebuild, refresh, sealForTests, search, SearchHit, status, WarmEngine} from '../../src/core/index/index.js'
import {prng, TestRepo, useTestRepos} from './index-helpers.js'

const repo = useTestRepos()

const shardFile = (r: TestRepo, key: string) => r.store.abs(`${INDEX_DIR}/${key}.index`)
const deltaFile = (r: TestRepo, key: string) => r.store.abs(`${INDEX_DIR}/${key}.delta`)
const paths = (hits: SearchHit[]) => hits.map((h) => `${h.scope}/${h.path}`)

describe('search', () => {
  it('finds by stem, prefix and a typo, with provenance, blob id and snippet', async () => {
    const r = repo()
    const text = r.put('project/web/ops/deploy.md', {
      title: 'Release checklist',
      tags: ['ops'],
      author: 'bob',
      origin: 'email',
      tainted: true,
      reviewed_by: 'carol',
      body: 'Before the release we deploy to staging on kubernetes, then watch the dashboards.\n',
    })
    r.put('project/web/notes/other.md', {title: 'Lunch', body: 'Pizza on Fridays.\n'})
    r.commit()
    const opts = {scopes: ['project:web']}

    const [hit] = await search(r.store, 'deploys', opts)
    expect(hit).toMatchObject({
      scope: 'project:web',
      path: 'ops/deploy.md',
      title: 'Release checklist',
      author: 'bob',
      origin: 'email',
      tainted: true,
      reviewed_by: 'carol',
      tags: ['ops'],
      blob: gitBlobHash(text),
    })
    expect(hit.blob).toBe(r.git('rev-parse', 'HEAD:project/web/ops/deploy.md').trim())
    expect(hit.snippet).toContain('deploy to staging')
    expect(hit.score).toBeGreaterThan(0)

    expect(paths(await search(r.store, 'kube', opts))).toEqual(['project:web/ops/deploy.md'])
    expect(paths(await search(r.store, 'kubernets', opts))).toEqual(['project:web/ops/deploy.md'])
    expect(paths(await search(r.store, 'pizza', opts))).toEqual(['project:web/notes/other.md'])
    expect(await search(r.store, 'nonexistentword', opts)).toEqual([])
  })

  it('boosts title and tag matches over body matches', async () => {
    const r = repo()
    r.put('org/a-body.md', {title: 'Misc', body: 'We use terraform for everything here.\n'})
    r.put('org/b-title.md', {title: 'Terraform', body: 'We use it for everything here.\n'})
    r.put('org/c-tag.md', {title: 'Misc', tags: ['terraform'], body: 'We use it for everything here.\n'})
    r.commit()
    expect(paths(await search(r.store, 'terraform', {scopes: ['org']}))).toEqual(['org/b-title.md', 'org/c-tag.md', 'org/a-body.md'])
  })

  it('applies +required and -excluded words, and the filter before the limit', async () => {
    const r = repo()
    for (let i = 0; i < 6; i++) r.put(`org/n${i}.md`, {body: `deploy note ${i % 2 === 0 ? 'staging' : 'production'}\n`})
    r.commit()
    const scopes = ['org']
    expect(paths(await search(r.store, 'deploy +staging', {scopes}))).toEqual(['org/n0.md', 'org/n2.md', 'org/n4.md'])
    expect(paths(await search(r.store, 'deploy -staging', {scopes}))).toEqual(['org/n1.md', 'org/n3.md', 'org/n5.md'])
    const filtered = await search(r.store, 'deploy', {scopes, limit: 2, filter: (h) => h.path !== 'org/n0.md' && h.path !== 'n0.md'})
    expect(paths(filtered)).toEqual(['org/n1.md', 'org/n2.md'])
  })

  it('keeps every positive word of a query that also excludes words (they do not exclude each other)', async () => {
    const r = repo()
    r.put('org/both.md', {body: 'alpha bravo\n'})
    r.put('org/alpha.md', {body: 'alpha only\n'})
    r.put('org/bravo.md', {body: 'bravo only\n'})
    r.put('org/charlie.md', {body: 'alpha charlie\n'})
    r.put('org/delta.md', {body: 'bravo delta\n'})
    r.commit()
    const scopes = ['org']
    // before: MiniSearch's subquery took AND_NOT from around it, so "alpha bravo -charlie" was alpha AND_NOT bravo AND_NOT charlie
    expect(paths(await search(r.store, 'alpha bravo -charlie', {scopes})).sort()).toEqual(['org/alpha.md', 'org/both.md', 'org/bravo.md', 'org/delta.md'])
    // and every excluded word excludes (not "charlie AND_NOT delta")
    expect(paths(await search(r.store, 'alpha bravo -charlie -delta', {scopes})).sort()).toEqual(['org/alpha.md', 'org/both.md', 'org/bravo.md'])
    expect(paths(await search(r.store, 'alpha bravo -charlie -delta', {scopes}))[0]).toBe('org/both.md')
  })

  it('answers a 10,000-character query', async () => {
    const r = repo()
    r.put('org/a.md', {body: 'alpha beta gamma\n'})
    r.commit()
    const query = `alpha ${'lorem ipsum dolor sit amet '.repeat(400)}`.slice(0, 10_000)
    expect(query.length).toBe(10_000)
    const started = Date.now()
    expect(paths(await search(r.store, query, {scopes: ['org']}))).toEqual(['org/a.md'])
    expect(Date.now() - started).toBeLessThan(5000)
  })

  it('rejects a malformed query as bad input before touching the index', async () => {
    const r = repo()
    r.put('org/a.md', {body: 'alpha\n'})
    r.commit()
    const err = await search(r.store, 'alpha "beta', {scopes: ['org']}).catch((e: unknown) => e)
    expect(isEngramError(err) && err.code).toBe('bad-input')
    expect(existsSync(r.store.abs(INDEX_DIR))).toBe(false)
  })

  it('works for a store in a subfolder of the work tree, and with no commits', async () => {
    const r = repo('memory/store')
    expect(await search(r.store, 'alpha', {scopes: ['org']})).toEqual([])
    r.put('org/a.md', {body: 'alpha\n'})
    r.put('tenant/x/a.md', {body: 'alpha\n'})
    r.commit()
    expect(paths(await search(r.store, 'alpha', {scopes: ['org', 'tenant:x']}))).toEqual(['org/a.md', 'tenant:x/a.md'])
  })
})

describe('index isolation', () => {
  it('a tenant search neither returns nor loads another tenant, and no index file holds another scope text', async () => {
    const r = repo()
    r.put('tenant/a/x.md', {title: 'Acme runbook', body: 'shared word and zanzibarsecret for tenant a\n'})
    r.put('tenant/b/x.md', {title: 'Beta runbook', body: 'shared word and quokkaconfidential for tenant b\n'})
    r.put('org/x.md', {body: 'shared word for everyone\n'})
    r.commit()
    const hits = await search(r.store, 'shared quokkaconfidential zanzibarsecret', {scopes: ['tenant:a', 'org']})
    expect(hits.map((h) => h.scope).sort()).toEqual(['org', 'tenant:a'])
    expect(hits.some((h) => h.snippet.includes('quokka'))).toBe(false)
    expect(existsSync(shardFile(r, 'tenant.b'))).toBe(false)
    expect(readdirSync(r.store.abs(INDEX_DIR)).sort()).toEqual(['.gitignore', 'org.index', 'org.postings', 'tenant.a.index', 'tenant.a.postings', 'trees'])
    expect(await search(r.store, 'quokkaconfidential', {scopes: ['tenant:a']})).toEqual([])

    await rebuild(r.store)
    const a = readFileSync(shardFile(r, 'tenant.a'), 'latin1')
    const b = readFileSync(shardFile(r, 'tenant.b'), 'latin1')
    expect(a).toContain('zanzibarsecret')
    expect(a).not.toContain('quokka')
    expect(b).not.toContain('zanzibar')
    expect(readFileSync(shardFile(r, 'org'), 'latin1')).not.toMatch(/quokka|zanzibar/)
    // the write path's postings files hold their own scope's terms only
    const postings = (key: string) => readFileSync(r.store.abs(`${INDEX_DIR}/${key}.postings`), 'latin1')
    expect(postings('tenant.a')).toContain('zanzibarsecret')
    expect(postings('tenant.a')).not.toContain('quokka')
    expect(postings('tenant.b')).not.toContain('zanzibar')
    expect(postings('org')).not.toMatch(/quokka|zanzibar/)
  })

  it('keeps the index out of git', async () => {
    const r = repo()
    r.put('org/a.md', {body: 'alpha\n'})
    r.commit()
    await search(r.store, 'alpha', {scopes: ['org']})
    expect(r.git('status', '--porcelain')).toBe('')
  })
})

/** A store of random memories over a small vocabulary, so that queries hit many documents. */
const VOCAB = 'deploy staging cluster cache redis queue retry backoff tenant billing invoice oncall pager runbook config flag'.split(' ')
function randomBody(rand: () => number): string {
  const n = 5 + Math.floor(rand() * 30)
  return `${Array.from({length: n}, () => VOCAB[Math.floor(rand() * VOCAB.length)] + (rand() < 0.2 ? 's' : '')).join(' ')}\n`
}
const QUERIES = ['deploy', 'stag', 'redis queue', 'cache +retry', 'billing -invoice', 'clustr', 'pagers oncall runbook', 'config flag tenant']

async function allResults(r: TestRepo, scopes: string[]): Promise<SearchHit[][]> {
  const out: SearchHit[][] = []
  for (const q of QUERIES) out.push(await search(r.store, q, {scopes, limit: 50}))
  return out
}

describe('incremental upkeep', () => {
  it('gives exactly the results of a full rebuild after adds, edits, deletes and renames', async () => {
    const r = repo()
    const rand = prng(7)
    const scopes = ['org', 'project:p']
    const live = new Set<string>()
    const add = () => {
      const rel = `${rand() < 0.4 ? 'org' : 'project/p'}/m${Math.floor(rand() * 1e9)}.md`
      r.put(rel, {title: VOCAB[Math.floor(rand() * VOCAB.length)], tags: rand() < 0.5 ? ['ops'] : [], body: randomBody(rand)})
      live.add(rel)
    }
    for (let i = 0; i < 40; i++) add()
    r.commit()
    await refresh(r.store, scopes)
    const builtOrg = statSync(shardFile(r, 'org')).ino

    for (let round = 0; round < 6; round++) {
      const list = [...live].sort()
      const pickOne = () => list.splice(Math.floor(rand() * list.length), 1)[0]
      // edit
      for (let k = 0; k < 3; k++) {
        const rel = pickOne()
        r.put(rel, {title: 'edited', body: randomBody(rand)})
      }
      // delete
      const gone = pickOne()
      r.remove(gone)
      live.delete(gone)
      // rename (within the scope and across scopes)
      const moved = pickOne()
      const to = `${round % 2 === 0 ? 'org' : 'project/p'}/renamed-${round}.md`
      r.write(to, readFileSync(r.store.abs(moved), 'utf8'))
      r.remove(moved)
      live.delete(moved)
      live.add(to)
      add()
      r.commit(`round ${round}`)

      const incremental = await allResults(r, scopes)
      // the incremental path was taken: the full index was kept and a delta written
      expect(statSync(shardFile(r, 'org')).ino).toBe(builtOrg)
      expect(existsSync(deltaFile(r, 'org'))).toBe(true)

      // compare with a from-scratch index, then put the incremental one back for the next round
      const kept = `${r.store.abs(INDEX_DIR)}.kept`
      renameSync(r.store.abs(INDEX_DIR), kept)
      const fresh = await allResults(r, scopes)
      expect(incremental).toEqual(fresh)
      expect(fresh.flat().length).toBeGreaterThan(50)
      rmSync(r.store.abs(INDEX_DIR), {recursive: true})
      renameSync(kept, r.store.abs(INDEX_DIR))
    }
  }, 60_000)
})

describe('damaged and outdated index files', () => {
  async function setup(): Promise<{r: TestRepo; expected: SearchHit[][]}> {
    const r = repo()
    const rand = prng(11)
    for (let i = 0; i < 30; i++) r.put(`org/m${i}.md`, {title: VOCAB[i % VOCAB.length], body: randomBody(rand)})
    r.commit()
    const expected = await allResults(r, ['org'])
    expect(expected.flat().length).toBeGreaterThan(20)
    return {r, expected}
  }
  async function searchWarned(r: TestRepo): Promise<{results: SearchHit[][]; warnings: string[]}> {
    const warnings: string[] = []
    const results: SearchHit[][] = []
    for (const q of QUERIES) results.push(await search(r.store, q, {scopes: ['org'], limit: 50, onWarning: (m) => warnings.push(m)}))
    return {results, warnings}
  }

  it('rebuilds an index whose JSON is damaged, with a warning and the right answers', async () => {
    const {r, expected} = await setup()
    const file = shardFile(r, 'org')
    const text = readFileSync(file, 'utf8')
    const nl = text.indexOf('\n')
    writeFileSync(file, `${text.slice(0, nl + 20)}}{${text.slice(nl + 22)}`)
    const {results, warnings} = await searchWarned(r)
    expect(warnings[0]).toMatch(/search index for org is unreadable .*rebuilding it/)
    expect(warnings).toHaveLength(1)
    expect(results).toEqual(expected)
  })

  it('rebuilds an index whose next document id is far above its documents (a planted number)', async () => {
    const {r, expected} = await setup()
    const file = shardFile(r, 'org')
    const text = readFileSync(file, 'utf8')
    const nl = text.indexOf('\n')
    const ms = JSON.parse(text.slice(nl + 1))
    ms.nextId = 2_000_000_000
    // sealed: an engram that wrote such a number (behind the seal, the checks still hold)
    writeFileSync(file, sealForTests.index(text.slice(0, nl), JSON.stringify(ms)))
    const {results, warnings} = await searchWarned(r)
    expect(warnings[0]).toMatch(/search index for org is unreadable \(next document id 2000000000 is out of bounds\)/)
    expect(results).toEqual(expected)
  })

  it('passes over postings of a document the index does not list, as MiniSearch does, and does not fail', async () => {
    const {r, expected} = await setup()
    const file = shardFile(r, 'org')
    const text = readFileSync(file, 'utf8')
    const nl = text.indexOf('\n')
    const ms = JSON.parse(text.slice(nl + 1))
    // document 5 unlisted (no path, no stored fields, no lengths) but its postings kept; and
    // every term also "held" by documents 29 999 and -1, which the index never listed
    const five = ms.documentIds['5']
    expect(five).toBeDefined()
    delete ms.documentIds['5']
    delete ms.storedFields['5']
    delete ms.fieldLength['5']
    ms.documentCount -= 1
    for (const [, fields] of ms.index) for (const f of Object.keys(fields)) Object.assign(fields[f], {29999: 3, '-1': 2})
    writeFileSync(file, sealForTests.index(text.slice(0, nl), JSON.stringify(ms)))
    const {results, warnings} = await searchWarned(r)
    expect(warnings).toEqual([])
    expect(results.flat().every((h) => typeof h.path === 'string' && h.path.startsWith('m'))).toBe(true)
    // the same documents less the unlisted one (the extra postings change each term's statistics, so the order may differ)
    expect(results.map((hs) => hs.map((h) => h.path).sort())).toEqual(expected.map((hs) => hs.map((h) => h.path).filter((p) => p !== five).sort()))
  })

  it('rebuilds a truncated index', async () => {
    const {r, expected} = await setup()
    for (const size of [10, 100, statSync(shardFile(r, 'org')).size - 1]) {
      truncateSync(shardFile(r, 'org'), size)
      const {results, warnings} = await searchWarned(r)
      expect(warnings).toHaveLength(1)
      expect(results).toEqual(expected)
    }
  })

  it('rebuilds an index of another format', async () => {
    const {r, expected} = await setup()
    const file = shardFile(r, 'org')
    writeFileSync(file, readFileSync(file, 'utf8').replace(FORMAT, 'engram-minisearch-0'))
    const {results, warnings} = await searchWarned(r)
    expect(warnings[0]).toMatch(/older format; rebuilding it/)
    expect(results).toEqual(expected)
    expect(JSON.parse(readFileSync(file, 'utf8').split('\n')[0]).format).toBe(FORMAT)
  })

  it('recomputes a corrupt delta file', async () => {
    const {r} = await setup()
    r.put('org/new.md', {title: 'fresh', body: 'deploy deploy brandnewword\n'})
    r.remove('org/m3.md')
    r.commit()
    await refresh(r.store, ['org'])
    const expected = await allResults(r, ['org'])
    const text = readFileSync(deltaFile(r, 'org'), 'utf8')
    writeFileSync(deltaFile(r, 'org'), text.slice(0, text.length - 3))
    const {results, warnings} = await searchWarned(r)
    expect(warnings[0]).toMatch(/delta for org is not sealed by this machine's engram/)
    expect(results).toEqual(expected)
    expect(paths(await search(r.store, 'brandnewword', {scopes: ['org']}))).toEqual(['org/new.md'])
  })

  it('indexes the memory it can parse and warns about the rest', async () => {
    const r = repo()
    r.put('org/good.md', {body: 'alpha\n'})
    r.write('org/bad.md', '---\nid: [unclosed\n---\nalpha\n')
    r.write('org/readme.txt', 'alpha but not memory\n')
    r.commit()
    const warnings: string[] = []
    expect(paths(await search(r.store, 'alpha', {scopes: ['org'], onWarning: (m) => warnings.push(m)}))).toEqual(['org/good.md'])
    expect(warnings.join('\n')).toMatch(/org: bad\.md: malformed frontmatter/)
  })
})

describe('rebuild, status and the warm engine', () => {
  it('rebuilds every scope with progress, reports status, and notices a new commit', async () => {
    const r = repo()
    r.put('org/a.md', {body: 'alpha\n'})
    r.put('project/p/a.md', {body: 'alpha\n'})
    r.put('tenant/t/a.md', {body: 'alpha\n'})
    r.put('tenant/t/b.md', {body: 'beta\n'})
    r.commit()
    const progress: [number, number][] = []
    const built = await rebuild(r.store, {onProgress: (done, total) => progress.push([done, total])})
    expect(progress[0]).toEqual([0, 4])
    expect(progress[progress.length - 1]).toEqual([4, 4])
    expect(built.map((s) => [s.scope, s.docs, s.fresh, s.delta])).toEqual([
      ['org', 1, true, 0],
      ['project:p', 1, true, 0],
      ['tenant:t', 2, true, 0],
    ])
    expect(built[0].tree).toBe(r.git('rev-parse', 'HEAD:org').trim())
    expect(built[0].bytes).toBeGreaterThan(0)

    r.put('tenant/t/c.md', {body: 'gamma\n'})
    r.commit()
    expect((await status(r.store)).find((s) => s.scope === 'tenant:t')?.fresh).toBe(false)
    await refresh(r.store, ['tenant:t'])
    expect((await status(r.store)).find((s) => s.scope === 'tenant:t')).toMatchObject({docs: 3, fresh: true, delta: 1})
  })

  it('keeps indexes loaded between searches and applies new commits', async () => {
    const r = repo()
    r.put('org/a.md', {body: 'alpha\n'})
    r.commit()
    const warm = new WarmEngine(r.store)
    try {
      expect(paths(await warm.search('alpha', {scopes: ['org']}))).toEqual(['org/a.md'])
      r.put('org/b.md', {body: 'alpha beta\n'})
      r.commit()
      expect(paths(await warm.search('alpha', {scopes: ['org']}))).toEqual(['org/a.md', 'org/b.md'])
      r.remove('org/a.md')
      r.remove('org/b.md')
      r.commit()
      expect(await warm.search('alpha', {scopes: ['org']})).toEqual([])
      expect(existsSync(shardFile(r, 'org'))).toBe(false)
    } finally {
      warm.close()
    }
  })

  it('folds the delta into a new full index once it grows past its bound', async () => {
    const r = repo()
    r.put('org/seed.md', {body: 'alpha\n'})
    r.commit()
    await refresh(r.store, ['org'])
    const first = statSync(shardFile(r, 'org')).ino
    const bound = deltaBound(1)
    for (let i = 0; i < bound - 1; i++) r.put(`org/n${i}.md`, {body: `alpha ${i}\n`})
    r.commit()
    await refresh(r.store, ['org'])
    expect(statSync(shardFile(r, 'org')).ino).toBe(first)
    for (let i = 0; i < 5; i++) r.put(`org/m${i}.md`, {body: `alpha ${i}\n`})
    r.commit()
    await refresh(r.store, ['org'])
    expect(statSync(shardFile(r, 'org')).ino).not.toBe(first)
    expect(existsSync(deltaFile(r, 'org'))).toBe(false)
    expect((await status(r.store))[0]).toMatchObject({docs: bound + 5, delta: 0, fresh: true})
  }, 30_000)
})

describe('the MiniSearch index', () => {
  it('finds "Acme renews in March" for "renewal": one stem for renewal, renews, renew', async () => {
    const r = repo()
    r.put('tenant/acme/contract.md', {title: 'Contract', body: 'Acme renews in March.\n'})
    r.put('tenant/acme/other.md', {title: 'Office', body: 'The office moves in May.\n'})
    r.commit()
    for (const q of ['renewal', 'renewals', 'renew', 'renewing', 'renewed']) {
      expect(paths(await search(r.store, q, {scopes: ['tenant:acme']})), q).toEqual(['tenant:acme/contract.md'])
    }
  })

  it('is persisted with toJSON and loads with loadJSON into the same answers as a fresh index', async () => {
    const r = repo()
    const rand = prng(3)
    for (let i = 0; i < 40; i++) r.put(`org/m${i}.md`, {title: VOCAB[i % VOCAB.length], tags: i % 3 ? [] : ['ops'], body: randomBody(rand)})
    r.commit()
    const first = await allResults(r, ['org']) // builds and writes the file
    const text = readFileSync(shardFile(r, 'org'), 'utf8')
    const meta = JSON.parse(text.slice(0, text.indexOf('\n')))
    expect(meta).toMatchObject({format: FORMAT, scope: 'org', tree: r.git('rev-parse', 'HEAD:org').trim(), docs: 40})
    // the rest of the file is MiniSearch's own serialisation
    const body = JSON.parse(text.slice(text.indexOf('\n') + 1))
    expect(body).toMatchObject({documentCount: 40, serializationVersion: 2})
    expect(MiniSearch).toBeTypeOf('function')
    const again = await allResults(r, ['org']) // loads the file
    expect(again).toEqual(first)
    rmSync(r.store.abs(INDEX_DIR), {recursive: true})
    expect(await allResults(r, ['org'])).toEqual(first)
  })

  it('breaks ties by score, then scope, then path, whatever order the files were added in', async () => {
    const r = repo()
    // identical documents in scopes of the same size score the same; added in an order unlike the expected one
    for (const rel of ['tenant/b/z.md', 'org/y.md', 'tenant/a/b.md', 'org/a.md', 'tenant/a/a.md', 'tenant/b/y.md']) r.put(rel, {body: 'tiebreaker words\n'})
    r.commit()
    const scopes = ['org', 'tenant:a', 'tenant:b']
    const hits = await search(r.store, 'tiebreaker', {scopes})
    expect(paths(hits)).toEqual(['org/a.md', 'org/y.md', 'tenant:a/a.md', 'tenant:a/b.md', 'tenant:b/y.md', 'tenant:b/z.md'])
    expect(new Set(hits.map((h) => h.score)).size).toBe(1)
    // and a title match ranks first in its scope
    r.put('tenant/b/z.md', {title: 'Tiebreaker', body: 'tiebreaker words\n'})
    r.commit()
    expect(paths(await search(r.store, 'tiebreaker', {scopes}))[0]).toBe('tenant:b/z.md')
  })

  it('opens only the indexes of the scopes asked for', async () => {
    const r = repo()
    r.put('tenant/a/x.md', {body: 'alpha\n'})
    r.put('tenant/b/x.md', {body: 'alpha\n'})
    r.commit()
    await rebuild(r.store)
    // an unreadable index of another scope is never read
    writeFileSync(shardFile(r, 'tenant.b'), 'garbage')
    const warnings: string[] = []
    expect(paths(await search(r.store, 'alpha', {scopes: ['tenant:a'], onWarning: (m) => warnings.push(m)}))).toEqual(['tenant:a/x.md'])
    expect(warnings).toEqual([])
    expect(readFileSync(shardFile(r, 'tenant.b'), 'utf8')).toBe('garbage')
  })

  it('keeps upkeep to a delta file: one commit does not rewrite the full index', async () => {
    const r = repo()
    for (let i = 0; i < 30; i++) r.put(`org/m${i}.md`, {body: `alpha ${i}\n`})
    r.commit()
    await refresh(r.store, ['org'])
    const before = readFileSync(shardFile(r, 'org'))
    r.put('org/m3.md', {body: 'alpha changed\n'})
    r.put('org/new.md', {body: 'alpha new\n'})
    r.remove('org/m4.md')
    r.commit()
    await refresh(r.store, ['org'])
    expect(readFileSync(shardFile(r, 'org')).equals(before)).toBe(true)
    const delta = JSON.parse(sealForTests.open(readFileSync(deltaFile(r, 'org'), 'utf8')))
    expect(delta.changes.map((c: {path: string; doc: unknown}) => [c.path, c.doc !== null])).toEqual([['m3.md', true], ['m4.md', false], ['new.md', true]])
    expect((await status(r.store))[0]).toMatchObject({docs: 30, delta: 3, fresh: true})
    expect(paths(await search(r.store, 'changed', {scopes: ['org']}))).toEqual(['org/m3.md'])
    expect(paths(await search(r.store, 'alpha', {scopes: ['org'], limit: 100}))).not.toContain('org/m4.md')
  })
})

describe('the warm engine moved forward in memory', () => {
  it('answers as a fresh index after every commit of adds, edits and deletes', async () => {
    const r = repo()
    const rand = prng(21)
    const live: string[] = []
    const add = () => {
      const rel = `org/w${Math.floor(rand() * 1e9)}.md`
      r.put(rel, {title: VOCAB[Math.floor(rand() * VOCAB.length)], body: randomBody(rand)})
      live.push(rel)
    }
    for (let i = 0; i < 30; i++) add()
    r.commit()
    const warm = new WarmEngine(r.store)
    try {
      for (let round = 0; round < 4; round++) {
        for (const q of QUERIES) await warm.search(q, {scopes: ['org'], limit: 50})
        r.put(live[round], {title: 'edited', body: randomBody(rand)})
        r.remove(live.splice(live.length - 1, 1)[0])
        add()
        r.commit(`round ${round}`)
        const got: SearchHit[][] = []
        for (const q of QUERIES) got.push(await warm.search(q, {scopes: ['org'], limit: 50}))
        // against a from-scratch index; the warm engine's files are put back for the next round
        const kept = `${r.store.abs(INDEX_DIR)}.kept`
        renameSync(r.store.abs(INDEX_DIR), kept)
        expect(got).toEqual(await allResults(r, ['org']))
        rmSync(r.store.abs(INDEX_DIR), {recursive: true})
        renameSync(kept, r.store.abs(INDEX_DIR))
      }
    } finally {
      warm.close()
    }
  }, 60_000)
})

describe('a delta file written by something else', () => {
  it('that parses but holds no valid document is dropped with a warning, and the answers are a rebuild', async () => {
    const r = repo()
    for (let i = 0; i < 10; i++) r.put(`org/m${i}.md`, {body: `alpha ${i}\n`})
    r.commit()
    await refresh(r.store, ['org'])
    r.put('org/new.md', {body: 'alpha brandnew\n'})
    r.commit()
    await refresh(r.store, ['org'])
    const expected = paths(await search(r.store, 'alpha', {scopes: ['org'], limit: 50}))
    const delta = JSON.parse(sealForTests.open(readFileSync(deltaFile(r, 'org'), 'utf8')))
    delta.changes[0].doc.body = 42
    writeFileSync(deltaFile(r, 'org'), sealForTests.delta(JSON.stringify(delta)))
    const warnings: string[] = []
    expect(paths(await search(r.store, 'alpha', {scopes: ['org'], limit: 50, onWarning: (m) => warnings.push(m)}))).toEqual(expected)
    expect(warnings.join('\n')).toMatch(/delta for org is unreadable/)
  })
})

describe('index files sealed with the key in engram\'s private folder', () => {
  // what an agent that can write the store, but not read engram's private folder, can plant
  async function withDelta(): Promise<{r: TestRepo; expected: string[]}> {
    const r = repo()
    for (let i = 0; i < 10; i++) r.put(`org/m${i}.md`, {body: `alpha ${i}\n`})
    r.commit()
    await refresh(r.store, ['org'])
    r.put('org/target.md', {title: 'Payments', body: 'alpha wire transfers need approval by two people\n'})
    r.commit()
    await refresh(r.store, ['org'])
    const expected = paths(await search(r.store, 'approval', {scopes: ['org']}))
    expect(expected).toEqual(['org/target.md'])
    return {r, expected}
  }
  const emptied = (r: TestRepo) => {
    // the real delta's tree, build and blob, and an empty document for the path
    const delta = JSON.parse(sealForTests.open(readFileSync(deltaFile(r, 'org'), 'utf8')))
    for (const c of delta.changes) if (c.doc) Object.assign(c.doc, {title: '', body: '', tags: []})
    return JSON.stringify(delta)
  }

  it('a delta that empties a memory\'s document is not read, by a search or by a warm engine, and is written again', async () => {
    const {r, expected} = await withDelta()
    const bad = emptied(r)
    for (const planted of [bad, `0000\n${bad}`, `${'a'.repeat(64)}\n${bad}`]) {
      writeFileSync(deltaFile(r, 'org'), planted)
      const warnings: string[] = []
      expect(paths(await search(r.store, 'approval', {scopes: ['org'], onWarning: (m) => warnings.push(m)}))).toEqual(expected)
      expect(warnings.join('\n')).toMatch(/delta for org is not sealed by this machine's engram/)
      expect(readFileSync(deltaFile(r, 'org'), 'utf8')).not.toBe(planted)
      writeFileSync(deltaFile(r, 'org'), planted)
      const warm = new WarmEngine(r.store)
      try {
        expect(paths(await warm.search('approval', {scopes: ['org']}))).toEqual(expected)
        rmSync(deltaFile(r, 'org'), {force: true})
        expect(paths(await warm.search('approval', {scopes: ['org']}))).toEqual(expected)
      } finally {
        warm.close()
      }
    }
    // the same planted document, sealed with the key, is read: the seal is what refuses it
    writeFileSync(deltaFile(r, 'org'), sealForTests.delta(bad))
    expect(paths(await search(r.store, 'approval', {scopes: ['org']}))).toEqual([])
  })

  it('an index whose JSON is not what its sealed first line names is rebuilt', async () => {
    const r = repo()
    for (let i = 0; i < 10; i++) r.put(`org/m${i}.md`, {body: `alpha ${i}\n`})
    r.put('org/target.md', {title: 'Payments', body: 'wire transfers need approval\n'})
    r.commit()
    expect(paths(await search(r.store, 'approval', {scopes: ['org']}))).toEqual(['org/target.md'])
    const file = shardFile(r, 'org')
    const text = readFileSync(file, 'utf8')
    const nl = text.indexOf('\n')
    // the same index less the memory: a rebuild of a store without it, under the real first line
    const ms = MiniSearch.loadJSON(text.slice(nl + 1), {fields: ['title', 'body', 'tags'], storeFields: ['path']})
    const without = JSON.parse(text.slice(nl + 1))
    const id = Object.entries(without.documentIds).find(([, p]) => p === 'target.md')![0]
    expect(ms.documentCount).toBe(11)
    delete without.documentIds[id]
    delete without.storedFields[id]
    delete without.fieldLength[id]
    without.documentCount -= 1
    writeFileSync(file, `${text.slice(0, nl)}\n${JSON.stringify(without)}`)
    const warnings: string[] = []
    expect(paths(await search(r.store, 'approval', {scopes: ['org'], onWarning: (m) => warnings.push(m)}))).toEqual(['org/target.md'])
    expect(warnings.join('\n')).toMatch(/search index for org is unreadable \(its contents are not what its sealed first line names\); rebuilding it/)
  })

  it('an index whose first line is not sealed with this machine\'s key is rebuilt: a forged seal, another ENGRAM_CONFIG_DIR', async () => {
    const r = repo()
    for (let i = 0; i < 10; i++) r.put(`org/m${i}.md`, {body: `alpha ${i}\n`})
    r.commit()
    const expected = paths(await search(r.store, 'alpha', {scopes: ['org'], limit: 50}))
    const file = shardFile(r, 'org')
    const text = readFileSync(file, 'utf8')
    const nl = text.indexOf('\n')
    const line = JSON.parse(text.slice(0, nl))
    line.seal = 'b'.repeat(64)
    line.docs = 3
    writeFileSync(file, `${JSON.stringify(line)}\n${text.slice(nl + 1)}`)
    const warnings: string[] = []
    expect(paths(await search(r.store, 'alpha', {scopes: ['org'], limit: 50, onWarning: (m) => warnings.push(m)}))).toEqual(expected)
    expect(warnings.join('\n')).toMatch(/search index for org is not sealed by this machine's engram .*rebuilding it/)
    expect((await status(r.store))[0]).toMatchObject({docs: 10, fresh: true})
    const saved = process.env.ENGRAM_CONFIG_DIR
    process.env.ENGRAM_CONFIG_DIR = `${r.top}.other-config`
    try {
      const other: string[] = []
      expect(paths(await search(r.store, 'alpha', {scopes: ['org'], limit: 50, onWarning: (m) => other.push(m)}))).toEqual(expected)
      expect(other.join('\n')).toMatch(/not sealed by this machine's engram \(written by something else, or under another ENGRAM_CONFIG_DIR\)/)
    } finally {
      process.env.ENGRAM_CONFIG_DIR = saved
      rmSync(`${r.top}.other-config`, {recursive: true, force: true})
    }
  })

  it('a record of scope trees that is not sealed is not used', async () => {
    const r = repo()
    r.put('org/a.md', {body: 'alpha first\n'})
    r.commit()
    const old = r.git('rev-parse', 'HEAD:org').trim()
    await search(r.store, 'alpha', {scopes: ['org']})
    r.put('org/b.md', {body: 'alpha second brandnew\n'})
    r.commit()
    const head = r.git('rev-parse', 'HEAD').trim()
    // HEAD's trees said to be the old tree: a search would answer from the old index
    const record = JSON.stringify({head, prefix: r.store.prefix, trees: {org: old}})
    const treesFile = r.store.abs(`${INDEX_DIR}/trees`)
    writeFileSync(treesFile, record)
    expect(paths(await search(r.store, 'brandnew', {scopes: ['org']}))).toEqual(['org/b.md'])
    // the check is the seal's: the same record sealed is taken at its word
    writeFileSync(treesFile, sealForTests.trees(record))
    const w = new WarmEngine(r.store)
    try {
      expect(paths(await w.search('brandnew', {scopes: ['org']}))).toEqual([])
    } finally {
      w.close()
    }
  })
})

describe('a memory whose blob git does not have, or has altered', () => {
  const looseObject = (r: TestRepo, blob: string) => r.store.abs(`.git/objects/${blob.slice(0, 2)}/${blob.slice(2)}`)

  it('fails the search with the blob named, writes no index without it, and is found again once the object is back', async () => {
    const r = repo()
    for (let i = 0; i < 5; i++) r.put(`org/m${i}.md`, {body: `alpha ${i}\n`})
    r.put('org/target.md', {body: 'alpha zeppelin renewal in March\n'})
    r.commit()
    // read from git for a first build, then for the delta of a commit after the index was built
    for (const [stage, path] of [['build', 'target.md'], ['delta', 'later.md']] as const) {
      if (stage === 'delta') {
        await refresh(r.store, ['org'])
        r.put(`org/${path}`, {body: 'alpha zeppelin renewal moved to May\n'})
        r.commit('later')
      }
      const blob = r.git('rev-parse', `HEAD:org/${path}`).trim()
      const file = looseObject(r, blob)
      const saved = readFileSync(file)
      rmSync(file)
      try {
        for (let k = 0; k < 2; k++) {
          const err = await search(r.store, 'zeppelin', {scopes: ['org']}).then(() => undefined, (e: unknown) => e)
          expect(isEngramError(err), stage).toBe(true)
          expect((err as Error).message).toMatch(new RegExp(`the blob ${blob.slice(0, 12)} of org: ${path} is missing`))
        }
      } finally {
        writeFileSync(file, saved)
      }
      expect(paths(await search(r.store, 'zeppelin', {scopes: ['org']})).sort(), stage).toEqual(stage === 'build' ? ['org/target.md'] : ['org/later.md', 'org/target.md'])
    }
  })

  it('is not indexed from a loose object whose content is another text under the same id', async () => {
    const r = repo()
    r.put('org/target.md', {body: 'alpha zeppelin renewal in March\n'})
    r.put('org/other.md', {body: 'alpha quokka\n'})
    r.commit()
    const blob = r.git('rev-parse', 'HEAD:org/target.md').trim()
    const other = r.git('rev-parse', 'HEAD:org/other.md').trim()
    // the other memory's object, compressed as git wrote it, in the target's file
    const file = looseObject(r, blob)
    const saved = readFileSync(file)
    writeFileSync(file, readFileSync(looseObject(r, other)))
    try {
      expect(r.git('cat-file', 'blob', blob)).toContain('quokka')
      const err = await search(r.store, 'zeppelin', {scopes: ['org']}).then(() => undefined, (e: unknown) => e)
      expect((err as Error).message).toMatch(/is not what its id names/)
    } finally {
      writeFileSync(file, saved)
    }
    expect(paths(await search(r.store, 'zeppelin', {scopes: ['org']}))).toEqual(['org/target.md'])
  })
})
