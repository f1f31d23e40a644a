import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {createServer, Server} from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {pinRoot, publicKeyPath, publicKeyRecord, revocationPath, revocationRecord} from '../../src/core/trust/keys.js'
import {manifestEntry, manifestPath, nextManifest, readManifest, serializeManifest, signManifest} from '../../src/core/trust/manifest.js'
import {MemoryFile, serializeMemory} from '../../src/core/memory/memory.js'
import {findNeighbours, neighboursFor, warmNeighbours} from '../../src/core/write/neighbours.js'
import {hasNeighbourAnalysis} from '../../src/core/write/vote/semantic.js'
import {gitBlobHash} from '../../src/core/memory/hash.js'
import {ensurePrivateFolder, socketPath} from '../../src/core/store/private.js'
import {askServer, startServer} from '../../src/core/serve/server.js'
import {searchMemories} from '../../src/core/serve/search.js'
import {SessionRecord, startSession} from '../../src/core/session/sessions.js'
import {generateKeyPair, KeyPair, signMemory} from '../../src/core/trust/sign.js'
import {TestRepo} from './index-helpers.js'
import {readHead, rebuild, sealForTests, WarmEngine} from '../../src/core/index/index.js'
import {WarmServing} from '../../src/core/trust/serving.js'

let r: TestRepo
let tmp: string
let alice: KeyPair
let bob: KeyPair
let server: Server | undefined
const savedConfig = process.env.ENGRAM_CONFIG_DIR

beforeEach(() => {
  tmp = mkdtempSync(join(tmpdir(), 'engram-warm-'))
  process.env.ENGRAM_CONFIG_DIR = join(tmp, 'config')
  r = new TestRepo()
  alice = generateKeyPair('alice')
  bob = generateKeyPair('bob')
  r.write(publicKeyPath('alice'), publicKeyRecord(alice, 'owner', alice))
  r.commit('owner key')
  // as `engram init` does: the owner key is this store's root on this machine (R19)
  pinRoot(r.store, alice)
  r.write(publicKeyPath('bob'), publicKeyRecord(bob, 'owner', alice))
  r.commit('second owner')
})
afterEach(async () => {
  if (server) await new Promise((resolve) => server!.close(resolve))
  server = undefined
  r.cleanup()
  if (savedConfig === undefined) delete process.env.ENGRAM_CONFIG_DIR
  else process.env.ENGRAM_CONFIG_DIR = savedConfig
  rmSync(tmp, {recursive: true, force: true})
})

const memory = (scope: string, id: string, body: string): MemoryFile => ({
  frontmatter: {
    id, title: id, scope, tags: [], author: 'alice', source_session: null, origin: 'owner', tainted: false, taint_reasons: [],
    created: '2025-01-01T00:00:00.000Z', updated: '2025-01-01T00:00:00.000Z', version: 1, proposal: null, reviewed_by: 'alice',
    digest: null, signature: null,
  },
  body,
})

/** Write signed memory files (by `signer`) and re-sign the scope's manifest (by alice) to list them. */
function putSigned(scope: string, files: Record<string, string>, signer: KeyPair = bob): void {
  const dir = scope.replace(':', '/')
  const upsert = Object.entries(files).map(([name, body]) => {
    const rel = `${dir}/${name}`
    const text = serializeMemory(signMemory(signer, rel, memory(scope, name.replace(/\W/g, ''), body)))
    r.write(rel, text)
    return manifestEntry(rel, text)
  })
  r.write(manifestPath(scope), serializeManifest(signManifest(alice, nextManifest(readManifest(r.store, scope), scope, {upsert}))))
}

// the server answers proven sessions only: one session per scope searched, started once per test
const searchers = new Map<string, {id: string; token: string}>()
beforeEach(() => searchers.clear())

async function warmSearch(query: string, scope = 'project:web'): Promise<string[]> {
  if (!searchers.has(scope)) searchers.set(scope, await startSession(r.store, {agent: 'searcher', assigned: scope}))
  const s = searchers.get(scope)!
  const res = await askServer(r.store, {op: 'search', query, scope, limit: 10, session: s.id, token: s.token}, 20_000)
  if (!res?.ok) throw new Error(`no answer: ${JSON.stringify(res)}`)
  return res.hits.map((h) => h.path)
}

describe('the warm server keeps nothing past a change', () => {
  it('sees a commit made after a warm search, additions and deletions', async () => {
    putSigned('project:web', {'deploy.md': 'We deploy to staging first.\n'})
    r.commit('memory')
    server = await startServer(r.store)
    expect(await warmSearch('deploy')).toEqual(['deploy.md'])
    expect(await warmSearch('rollback')).toEqual([])

    putSigned('project:web', {'rollback.md': 'A rollback needs the previous image tag.\n'})
    r.commit('another memory')
    expect(await warmSearch('rollback')).toEqual(['rollback.md'])

    r.remove('project/web/deploy.md')
    r.commit('forget')
    expect(await warmSearch('deploy')).toEqual([])
  })

  it('searches, with a warm engine and a gate of one commit, the indexes of that commit, not of a later HEAD', async () => {
    putSigned('project:web', {'deploy.md': 'We deploy the zorblat build to staging first.\n'})
    r.commit('memory')
    const before = await readHead(r.store.top)
    const engine = new WarmEngine(r.store)
    try {
      const serving = new WarmServing(r.store)
      expect((await searchMemories(r.store, undefined, 'zorblat', {engine, gate: await serving.open(before), head: before})).hits.map((h) => h.path)).toEqual(['deploy.md'])
      putSigned('project:web', {'rollback.md': 'A zorblat rollback needs the previous image tag.\n'})
      r.commit('another memory')
      // the call's gate and HEAD were read before the commit: the index it searches is of that commit too
      expect((await searchMemories(r.store, undefined, 'zorblat', {engine, gate: await serving.open(before), head: before})).hits.map((h) => h.path)).toEqual(['deploy.md'])
      const now = await readHead(r.store.top)
      expect((await searchMemories(r.store, undefined, 'zorblat', {engine, gate: await serving.open(now), head: now})).hits.map((h) => h.path).sort()).toEqual(['deploy.md', 'rollback.md'])
    } finally {
      engine.close()
    }
  })

  it("stops serving a revoked key's files at once, committed or not", async () => {
    putSigned('project:web', {'deploy.md': 'We deploy to staging first.\n'})
    putSigned('project:web', {'owner.md': 'The owner deploys on Fridays.\n'}, alice)
    r.commit('memory')
    server = await startServer(r.store)
    expect((await warmSearch('deploy')).sort()).toEqual(['deploy.md', 'owner.md'])

    // a revocation only in the work tree: the key material changed, HEAD did not
    r.write(revocationPath('bob'), revocationRecord(bob, alice, {reason: 'lost laptop'}))
    expect(await warmSearch('deploy')).toEqual(['owner.md'])
    r.commit('revoke bob')
    expect(await warmSearch('deploy')).toEqual(['owner.md'])
  })

  it('stops serving a file when the manifest in the work tree no longer lists it', async () => {
    putSigned('project:web', {'deploy.md': 'We deploy to staging first.\n'})
    r.commit('memory')
    // past the window in which a manifest just written is re-read on every request
    await new Promise((resolve) => setTimeout(resolve, 250))
    server = await startServer(r.store)
    expect(await warmSearch('deploy')).toEqual(['deploy.md'])
    const m = readManifest(r.store, 'project:web')!
    r.write(manifestPath('project:web'), serializeManifest(signManifest(alice, nextManifest(m, 'project:web', {remove: ['project/web/deploy.md']}))))
    expect(await warmSearch('deploy')).toEqual([])
  })

  it('does not serve a hand edit of a served file', async () => {
    putSigned('project:web', {'deploy.md': 'We deploy to staging first.\n'})
    r.commit('memory')
    server = await startServer(r.store)
    expect(await warmSearch('deploy')).toEqual(['deploy.md'])
    r.write('project/web/deploy.md', r.store.readText('project/web/deploy.md')!.replace('staging', 'production'))
    expect(await warmSearch('deploy')).toEqual([])
  })
})

describe('neighbours', () => {
  const session: SessionRecord = {
    id: 's-test0001', agent: 'agent', assigned: 'project:web', reads: [], tainted: false, taint_reasons: [], created: '', updated: '',
  }

  it('finds verified memory of readable scopes by the rare words of a long text, exactly', async () => {
    putSigned('project:web', {
      'deploy.md': 'The deploy goes to the zorblat cluster every morning.\n',
      'lunch.md': 'The team eats lunch every morning at the usual place.\n',
    })
    putSigned('project:web', {'planted.md': 'The zorblat cluster deploy is manual.\n'}, generateKeyPair('mallory'))
    putSigned('tenant:other', {'secret.md': 'The zorblat cluster belongs to another tenant.\n'})
    r.commit('memory')
    const text = 'Every morning the team does things. Actually the zorblat cluster deploy happens at noon instead.'
    const found = await findNeighbours(r.store, session, text, 8)
    // the planted file (untrusted signer) and the other tenant's are never evidence
    expect(found.map((n) => `${n.scope}/${n.path}`)).toEqual(['project:web/deploy.md', 'project:web/lunch.md'])
    // exact words only: a prefix of the rare word finds nothing
    expect(await findNeighbours(r.store, session, 'zorbl', 8)).toEqual([])
  })

  it('compare the text of the file, never the body a planted index stores beside its path and blob (warm engine)', async () => {
    putSigned('project:web', {'deploy.md': 'The deploy goes to the zorblat cluster every morning.\n'})
    r.commit('memory')
    const s = await startSession(r.store, {agent: 'agent', assigned: 'project:web'})
    await rebuild(r.store)
    // whoever can write .engram/index/ keeps the real path and blob id and swaps the stored text
    const file = r.store.abs('.engram/index/project.web.index')
    const text = readFileSync(file, 'utf8')
    const nl = text.indexOf('\n')
    const ms = JSON.parse(text.slice(nl + 1))
    for (const stored of Object.values(ms.storedFields) as {title: string; body: string}[]) {
      stored.title = 'Forged title'
      stored.body = 'The zorblat cluster deploy happens at noon.'
    }
    // sealed: even one who holds the index key (cooperative mode) does not choose the text compared
    writeFileSync(file, sealForTests.index(text.slice(0, nl), JSON.stringify(ms)))
    const engine = new WarmEngine(r.store)
    try {
      const gate = await new WarmServing(r.store).open(await readHead(r.store.top))
      const found = await findNeighbours(r.store, s, 'Actually the zorblat cluster deploy happens at noon instead.', 8, {engine, gate})
      expect(found).toHaveLength(1)
      expect(found[0]).toMatchObject({path: 'deploy.md', body: 'The deploy goes to the zorblat cluster every morning.\n'})
      expect(found[0].title).not.toBe('Forged title')
    } finally {
      engine.close()
    }
  })

  it('are what the write path finds in-process, never from another tenant, and a later commit is seen', async () => {
    putSigned('project:web', {'deploy.md': 'The deploy goes to the zorblat cluster every morning.\n'})
    putSigned('tenant:other', {'secret.md': 'The zorblat cluster belongs to another tenant.\n'})
    r.commit('memory')
    const s = await startSession(r.store, {agent: 'agent', assigned: 'project:web'})
    const text = 'Actually the zorblat cluster deploy happens at noon instead.'
    const local = await findNeighbours(r.store, s, text, 8)
    expect(local.map((n) => n.path)).toEqual(['deploy.md'])
    expect(await neighboursFor(r.store, s, 'project:web', 'x.md', text, 8)).toEqual(local)
    // a commit after the first answer (a new memory) is seen by the next one
    putSigned('project:web', {'zorblat.md': 'The zorblat cluster was renamed.\n'})
    r.commit('more')
    const again = await neighboursFor(r.store, s, 'project:web', 'x.md', text, 8)
    expect(again.map((n) => n.path).sort()).toEqual(['deploy.md', 'zorblat.md'])
  })

  it('ignore an answer on the socket that is not the files on disk of readable scopes', async () => {
    putSigned('project:web', {'deploy.md': 'The deploy goes to the zorblat cluster every morning.\n'})
    putSigned('tenant:other', {'secret.md': 'The zorblat cluster belongs to another tenant.\n'})
    r.commit('memory')
    const s: SessionRecord = {...session, id: 's-fake0001'}
    const text = 'Actually the zorblat cluster deploy happens at noon instead.'
    const local = await findNeighbours(r.store, s, text, 8)
    expect(local.map((n) => n.path)).toEqual(['deploy.md'])
    const answers = [
      [{scope: 'project:web', path: 'deploy.md', title: 'deploymd', body: 'The deploy is done by hand now.\n', score: 9}],
      [{scope: 'tenant:other', path: 'secret.md', title: 'secretmd', body: 'The zorblat cluster belongs to another tenant.\n', score: 9}],
      [{scope: 'project:web', path: '../../tenant/other/secret.md', title: 'secretmd', body: 'The zorblat cluster belongs to another tenant.\n', score: 9}],
    ]
    for (const neighbours of answers) {
      // something else listening on the store's socket
      server = createServer((c) => c.on('data', () => c.end(`${JSON.stringify({ok: true, neighbours})}\n`)))
      const sock = socketPath(r.store.root)
      ensurePrivateFolder(sock.dir, true)
      await new Promise<void>((resolve) => server!.listen(sock.path, resolve))
      expect(await neighboursFor(r.store, s, 'project:web', 'x.md', text, 8)).toEqual(local)
      await new Promise((resolve) => server!.close(resolve))
      server = undefined
    }
  })
})

describe("a long-lived process's warm-up of the vote's neighbours", () => {
  const blobOf = (rel: string) => gitBlobHash(r.store.readText(rel)!)

  it('serves and analyses each curated memory the session may read, never another tenant\'s, a planted file or an edited one', async () => {
    putSigned('project:web', {'deploy.md': 'The warmup deploy goes to the zorblat cluster.\n', 'lunch.md': 'The warmup lunch is at noon.\n'})
    putSigned('tenant:other', {'secret.md': 'The warmup secret of another tenant.\n'})
    r.commit('memory')
    const untrusted = generateKeyPair('mallory')
    r.write('project/web/planted.md', serializeMemory(signMemory(untrusted, 'project/web/planted.md', memory('project:web', 'planted', 'The warmup planted text.\n'))))
    r.commit('planted')
    const s = await startSession(r.store, {agent: 'agent', assigned: 'project:web'})
    const signedLunch = blobOf('project/web/lunch.md')
    r.write('project/web/lunch.md', r.store.readText('project/web/lunch.md')!.replace('noon', 'one'))
    const engine = new WarmEngine(r.store)
    const serving = new WarmServing(r.store)
    let gates = 0
    try {
      const n = await warmNeighbours(s, {engine, gate: async () => (gates++, serving.open(await readHead(r.store.top)))}, {sliceMs: 0})
      expect(n).toBe(1)
      expect(hasNeighbourAnalysis(blobOf('project/web/deploy.md'))).toBe(true)
      // one memory a slice when a slice is shorter than one, each slice with the gate of HEAD then
      expect(gates).toBe(3)
      for (const rel of ['tenant/other/secret.md', 'project/web/planted.md', 'project/web/lunch.md']) expect(hasNeighbourAnalysis(blobOf(rel)), rel).toBe(false)
      expect(hasNeighbourAnalysis(signedLunch)).toBe(false)
    } finally {
      engine.close()
    }
  })

  it('stops when told, between slices, or at its bound', async () => {
    const files: Record<string, string> = {}
    for (let i = 0; i < 6; i++) files[`m${i}.md`] = `The warmup bound note ${i} of ${'many '.repeat(i + 1)}words.\n`
    putSigned('project:web', files)
    r.commit('memory')
    const s = await startSession(r.store, {agent: 'agent', assigned: 'project:web'})
    const engine = new WarmEngine(r.store)
    const serving = new WarmServing(r.store)
    const gate = async () => serving.open(await readHead(r.store.top))
    try {
      expect(await warmNeighbours(s, {engine, gate}, {max: 2})).toBe(2)
      expect([0, 1, 2, 3, 4, 5].map((i) => hasNeighbourAnalysis(blobOf(`project/web/m${i}.md`)))).toEqual([true, true, false, false, false, false])
      let slices = 0
      expect(await warmNeighbours(s, {engine, gate: async () => (slices++, gate())}, {sliceMs: 0, stop: () => slices >= 3})).toBe(3)
      expect(hasNeighbourAnalysis(blobOf('project/web/m2.md'))).toBe(true)
      expect(hasNeighbourAnalysis(blobOf('project/web/m5.md'))).toBe(false)
    } finally {
      engine.close()
    }
  })
})

describe("a warm lookup whose loaded index lacks a signed memory", () => {
  it('fails, naming the memory, when a commit drops it from HEAD or commits other words under its path; and looks up again once HEAD holds it as signed', async () => {
    putSigned('project:web', {'deploy.md': 'The deploy goes to the zorblat cluster every morning.\n', 'lunch.md': 'The canteen opens early.\n'})
    r.commit('memory')
    const s = await startSession(r.store, {agent: 'agent', assigned: 'project:web'})
    const engine = new WarmEngine(r.store)
    const serving = new WarmServing(r.store)
    const lookup = async () => findNeighbours(r.store, s, 'Actually the zorblat cluster deploy happens at noon instead.', 8, {engine, gate: await serving.open(await readHead(r.store.top))})
    try {
      expect((await lookup()).map((n) => n.path)).toEqual(['deploy.md'])
      const signed = r.store.readText('project/web/deploy.md')!
      // dropped from HEAD's tree, the file left in the work tree (still served)
      r.git('rm', '-q', '--cached', 'project/web/deploy.md')
      r.git('commit', '-q', '-m', 'tidy')
      await expect(lookup()).rejects.toThrow(/HEAD's tree does not hold 1 signed memory file\(s\) of project:web as signed \(project\/web\/deploy\.md\)/)
      // other words committed under its path, the signed file put back in the work tree
      r.write('project/web/deploy.md', signed.replace('zorblat cluster', 'blue pool'))
      r.commit('other words')
      r.write('project/web/deploy.md', signed)
      await expect(lookup()).rejects.toThrow(/does not hold 1 signed memory/)
      r.commit('put back')
      expect((await lookup()).map((n) => n.path)).toEqual(['deploy.md'])
      // the whole scope folder dropped from HEAD: no index at all is no cover either
      r.git('rm', '-q', '-r', '--cached', 'project/web')
      r.git('commit', '-q', '-m', 'no scope')
      await expect(lookup()).rejects.toThrow(/does not hold 2 signed memory file\(s\) of project:web/)
      r.commit('put back')
      expect((await lookup()).map((n) => n.path)).toEqual(['deploy.md'])
      // a one-shot lookup loads no index to compare: it nominates as before
      expect((await findNeighbours(r.store, s, 'zorblat', 8)).map((n) => n.path)).toEqual(['deploy.md'])
    } finally {
      engine.close()
    }
  })

  it('fails at its own commit while a lookup at another commit moves the shared index: the lookup searches and checks one index, never one moved under it', async () => {
    putSigned('project:web', {'deploy.md': 'The deploy goes to the zorblat cluster every morning.\n', 'lunch.md': 'The canteen opens early.\n'})
    r.commit('memory')
    const s = await startSession(r.store, {agent: 'agent', assigned: 'project:web'})
    const engine = new WarmEngine(r.store)
    const text = 'Actually the zorblat cluster deploy happens at noon instead.'
    try {
      // call B read HEAD (and opened its gate) here; then the agent dropped deploy.md from HEAD's tree
      const signedHead = await readHead(r.store.top)
      const gateB = await new WarmServing(r.store).open(signedHead)
      r.git('rm', '-q', '--cached', 'project/web/deploy.md')
      r.git('commit', '-q', '-m', 'tidy')
      const dropped = await readHead(r.store.top)
      const gateA = await new WarmServing(r.store).open(dropped)
      // the engine holds the index of the commit without deploy.md, as after an earlier search
      expect(await engine.search('zorblat', {scopes: ['project:web'], head: dropped})).toEqual([])
      // call A's coverage check of project:web reads its signed manifest only once call B, at the other commit, is done
      let bDone!: () => void
      const bFinished = new Promise<void>((resolve) => (bDone = resolve))
      const manifest = gateA.signedManifest.bind(gateA)
      gateA.signedManifest = async (scope) => {
        if (scope === 'project:web') await bFinished
        return manifest(scope)
      }
      const a = findNeighbours(r.store, s, text, 8, {engine, gate: gateA, head: dropped})
      a.catch(() => {})
      const b = findNeighbours(r.store, s, text, 8, {engine, gate: gateB, head: signedHead}).finally(() => bDone())
      expect((await b).map((n) => n.path)).toEqual(['deploy.md'])
      // A searched an index without deploy.md: its check is of that index, not of the one B moved back to the signed tree
      await expect(a).rejects.toThrow(/does not hold 1 signed memory file\(s\) of project:web as signed \(project\/web\/deploy\.md\)/)
      // and each commit's next lookup still sees that commit
      await expect(findNeighbours(r.store, s, text, 8, {engine, gate: gateA, head: dropped})).rejects.toThrow(/does not hold 1 signed memory/)
      expect((await findNeighbours(r.store, s, text, 8, {engine, gate: gateB, head: signedHead})).map((n) => n.path)).toEqual(['deploy.md'])
    } finally {
      engine.close()
    }
  })
})
