import {execFileSync} from 'node:child_process'
import {mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

import {readHeadFromFiles} from '../../src/core/index/head.js'
import {INDEX_DIR, rebuild, sealForTests, search, status, WarmEngine} from '../../src/core/index/index.js'
import {useTestRepos} from './index-helpers.js'

const repo = useTestRepos()
let dirs: string[] = []
afterEach(() => {
  for (const d of dirs) rmSync(d, {recursive: true, force: true})
  dirs = []
})

const head = (dir: string) => execFileSync('git', ['rev-parse', 'HEAD'], {cwd: dir, encoding: 'utf8'}).trim()

/** The path → blob id of a scope's index as the warm engine holds it at a commit (HEAD by default), held and released at once. */
async function heldBlobs(engine: WarmEngine, scope: string, at?: string): Promise<Record<string, string>> {
  const held = await engine.hold([scope], {head: at})
  try {
    return Object.fromEntries(held.indexedBlobs(scope).blobs())
  } finally {
    held.release()
  }
}

/** The path → blob id of every memory in a scope's folder at a commit, as git lists it. */
function treeBlobs(r: {git: (...args: string[]) => string}, commit: string, dir: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const line of r.git('ls-tree', '-r', commit, '--', `${dir}/`).split('\n').filter(Boolean)) {
    const [meta, path] = line.split('\t')
    if (path.endsWith('.md')) out[path.slice(dir.length + 1)] = meta.split(' ')[2]
  }
  return out
}

describe('reading HEAD without git', () => {
  it('agrees with git for a branch, packed refs, a detached HEAD and a store in a subfolder', () => {
    const r = repo('stores/team')
    expect(readHeadFromFiles(r.top)).toBeUndefined() // unborn branch: the caller asks git
    r.put('stores/team/org/a.md', {body: 'one\n'})
    r.commit()
    expect(readHeadFromFiles(r.top)).toBe(head(r.top))
    r.git('pack-refs', '--all')
    expect(readHeadFromFiles(r.top)).toBe(head(r.top))
    r.put('stores/team/org/b.md', {body: 'two\n'})
    r.commit()
    expect(readHeadFromFiles(r.top)).toBe(head(r.top))
    r.git('checkout', '-q', '--detach', 'HEAD~1')
    expect(readHeadFromFiles(r.top)).toBe(head(r.top))
  })

  it('leaves packed refs that name the branch twice to git, and an index rebuilt then holds what git\'s HEAD holds', async () => {
    const r = repo()
    r.put('org/a.md', {body: 'alpha zeppelin\n'})
    r.put('org/b.md', {body: 'alpha other\n'})
    r.commit()
    const real = head(r.top)
    // a commit of the same tree less a.md, packed as a second line for the branch (git reads that one)
    r.git('rm', '-q', '--cached', 'org/a.md')
    const forged = execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit-tree', r.git('write-tree').trim(), '-p', real, '-m', 'forged'], {cwd: r.top, encoding: 'utf8'}).trim()
    r.git('reset', '-q')
    rmSync(join(r.top, '.git/refs/heads/main'))
    writeFileSync(join(r.top, '.git/packed-refs'), `# pack-refs with: peeled fully-peeled sorted \n${real} refs/heads/main\n${forged} refs/heads/main\n`)
    expect(readHeadFromFiles(r.top)).toBeUndefined()
    await rebuild(r.store)
    // the branch put right: a.md is in HEAD, and in the index
    writeFileSync(join(r.top, '.git/packed-refs'), `${real} refs/heads/main\n`)
    expect(readHeadFromFiles(r.top)).toBe(real)
    expect((await search(r.store, 'zeppelin', {scopes: ['org']})).map((h) => h.path)).toEqual(['a.md'])
  })

  it('leaves a branch whose loose ref is a symlink to git (which reads it as a symbolic ref)', () => {
    const r = repo()
    r.put('org/a.md', {body: 'one\n'})
    r.commit()
    const real = head(r.top)
    r.git('branch', 'other')
    const ref = join(r.top, '.git/refs/heads/main')
    rmSync(ref)
    symlinkSync('refs/heads/other', ref)
    // a file at the link's literal target, which the link does not point at from here
    mkdirSync(join(r.top, '.git/refs/heads/refs/heads'), {recursive: true})
    writeFileSync(join(r.top, '.git/refs/heads/refs/heads/other'), `${'0'.repeat(40)}\n`)
    expect(readHeadFromFiles(r.top)).toBeUndefined()
    expect(head(r.top)).toBe(real)
  })

  it('follows a linked worktree to its own HEAD and the shared refs', () => {
    const r = repo()
    r.put('org/a.md', {body: 'one\n'})
    r.commit()
    const wt = join(mkdtempSync(join(tmpdir(), 'engram-wt-')), 'wt')
    dirs.push(wt, join(wt, '..'))
    r.git('worktree', 'add', '-q', '-b', 'side', wt)
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '--allow-empty', '-m', 'side'], {cwd: wt})
    expect(readHeadFromFiles(wt)).toBe(head(wt))
    expect(readHeadFromFiles(wt)).not.toBe(head(r.top))
    expect(readHeadFromFiles(r.top)).toBe(head(r.top))
  })
})

describe('the record of scope trees', () => {
  it('answers a search at an unchanged HEAD without git, and follows a new commit', async () => {
    const r = repo()
    r.put('org/a.md', {body: 'alpha beta\n'})
    r.commit()
    const opts = {scopes: ['org']}
    const first = await search(r.store, 'alpha', opts)
    const head = r.git('rev-parse', 'HEAD').trim()
    const recorded = JSON.parse(sealForTests.open(readFileSync(r.store.abs(`${INDEX_DIR}/trees`), 'utf8')))
    expect(recorded).toEqual({head, prefix: '', trees: {org: r.git('rev-parse', 'HEAD:org').trim()}})

    // with git's objects out of reach a search that needed git would find nothing
    const objects = join(r.top, '.git', 'objects')
    renameSync(objects, `${objects}.away`)
    try {
      expect(await search(r.store, 'alpha', opts)).toEqual(first)
    } finally {
      renameSync(`${objects}.away`, objects)
    }

    r.put('org/b.md', {body: 'alpha gamma\n'})
    r.commit()
    expect((await search(r.store, 'alpha', opts)).map((h) => h.path)).toEqual(['a.md', 'b.md'])
    expect(JSON.parse(sealForTests.open(readFileSync(r.store.abs(`${INDEX_DIR}/trees`), 'utf8'))).head).toBe(r.git('rev-parse', 'HEAD').trim())
  })

  it('is written by a full rebuild, so the first search after it needs no git either', async () => {
    const r = repo()
    r.put('org/a.md', {body: 'alpha beta\n'})
    r.put('project/web/b.md', {body: 'alpha gamma\n'})
    r.commit()
    await rebuild(r.store)
    const objects = join(r.top, '.git', 'objects')
    renameSync(objects, `${objects}.away`)
    try {
      expect((await search(r.store, 'alpha', {scopes: ['org', 'project:web']})).map((h) => h.path).sort()).toEqual(['a.md', 'b.md'])
    } finally {
      renameSync(`${objects}.away`, objects)
    }
  })

  it('lists the trees again when the record holds a tree git does not have', async () => {
    const r = repo()
    r.put('org/a.md', {body: 'alpha\n'})
    r.commit()
    await search(r.store, 'alpha', {scopes: ['org']})
    r.put('org/b.md', {body: 'alpha\n'})
    r.commit()
    const head = r.git('rev-parse', 'HEAD').trim()
    // sealed (a record engram wrote, of a tree since lost): unsealed, it would not be read at all
    writeFileSync(r.store.abs(`${INDEX_DIR}/trees`), sealForTests.trees(JSON.stringify({head, prefix: '', trees: {org: 'e'.repeat(40)}})))
    expect((await search(r.store, 'alpha', {scopes: ['org']})).map((h) => h.path)).toEqual(['a.md', 'b.md'])
    expect(JSON.parse(sealForTests.open(readFileSync(r.store.abs(`${INDEX_DIR}/trees`), 'utf8'))).trees.org).toBe(r.git('rev-parse', 'HEAD:org').trim())
  })
})

describe('the warm engine', () => {
  it('sees every commit made after a search, and only committed content', async () => {
    const r = repo()
    r.put('project/web/a.md', {title: 'Deploy', body: 'We deploy on Mondays.\n'})
    r.commit()
    const engine = new WarmEngine(r.store)
    try {
      const opts = {scopes: ['project:web']}
      expect((await engine.search('deploy', opts)).map((h) => h.path)).toEqual(['a.md'])
      r.put('project/web/b.md', {title: 'Rollback', body: 'A rollback needs the previous tag.\n'})
      expect(await engine.search('rollback', opts)).toEqual([]) // not committed yet
      r.commit()
      expect((await engine.search('rollback', opts)).map((h) => h.path)).toEqual(['b.md'])
      r.remove('project/web/a.md')
      r.commit()
      expect(await engine.search('deploy', opts)).toEqual([])
      // a scope that appears in a later commit is found too
      r.put('project/api/c.md', {title: 'Deploy api', body: 'The api deploys itself.\n'})
      r.commit()
      expect((await engine.search('deploy', {scopes: ['project:api', 'project:web']})).map((h) => h.path)).toEqual(['c.md'])
    } finally {
      engine.close()
    }
  })
})

describe('the warm engine under concurrent calls at two commits', () => {
  it('gives each call the index of its own commit, held unmoved until released, and moves the engine\'s index in memory again (no file read) once nothing holds it', async () => {
    const r = repo()
    r.put('org/a.md', {title: 'Alpha', body: 'The quuxcluster alpha runs nightly.\n'})
    r.put('org/b.md', {title: 'Beta', body: 'The quuxcluster beta is retired.\n'})
    r.commit()
    const c0 = head(r.top)
    r.put('org/c.md', {title: 'Gamma', body: 'The quuxcluster gamma is new.\n'})
    r.commit()
    const c1 = head(r.top)
    // the second commit drops b.md and edits a.md: a move in place removes, then adds
    r.remove('org/b.md')
    r.put('org/a.md', {title: 'Alpha', body: 'The quuxcluster alpha runs hourly now.\n'})
    r.commit()
    const c2 = head(r.top)
    const engine = new WarmEngine(r.store)
    const paths = (hits: {path: string}[]) => hits.map((h) => h.path).sort()
    try {
      expect(await heldBlobs(engine, 'org', c0)).toEqual(treeBlobs(r, c0, 'org'))
      // started together, not awaited: each call's view is its own commit's, and stays so after the other has moved the engine on
      const [h1, h2] = await Promise.all([engine.hold(['org'], {head: c1}), engine.hold(['org'], {head: c2})])
      try {
        expect(Object.fromEntries(h1.indexedBlobs('org').blobs())).toEqual(treeBlobs(r, c1, 'org'))
        expect(Object.fromEntries(h2.indexedBlobs('org').blobs())).toEqual(treeBlobs(r, c2, 'org'))
        expect(paths(h1.search('quuxcluster', {}))).toEqual(['a.md', 'b.md', 'c.md'])
        expect(paths(h2.search('quuxcluster', {}))).toEqual(['a.md', 'c.md'])
        expect(paths(h1.search('nightly', {}))).toEqual(['a.md'])
        expect(h2.search('nightly', {})).toEqual([])
        // while both are held, a call at a third commit gets that commit, and moves neither
        const h0 = await engine.hold(['org'], {head: c0})
        expect(Object.fromEntries(h0.indexedBlobs('org').blobs())).toEqual(treeBlobs(r, c0, 'org'))
        h0.release()
        expect(Object.fromEntries(h1.indexedBlobs('org').blobs())).toEqual(treeBlobs(r, c1, 'org'))
        expect(Object.fromEntries(h2.indexedBlobs('org').blobs())).toEqual(treeBlobs(r, c2, 'org'))
        expect(h1.indexedBlobs('org').key).not.toBe(h2.indexedBlobs('org').key)
      } finally {
        h1.release()
        h2.release()
      }
      // concurrent searches at the two commits, not awaited: each sees its own commit, and the index left behind is the one it is labelled with
      const [s1, s2, s0] = await Promise.all([c1, c2, c0].map((at) => engine.search('quuxcluster', {scopes: ['org'], head: at})))
      expect([paths(s1), paths(s2), paths(s0)]).toEqual([['a.md', 'b.md', 'c.md'], ['a.md', 'c.md'], ['a.md', 'b.md']])
      for (const at of [c0, c2, c1, c2]) expect(await heldBlobs(engine, 'org', at)).toEqual(treeBlobs(r, at, 'org'))
      // what it costs: with nothing held a move is made in memory, without reading the index
      // file (whose body, spoiled here, would be found unreadable and rebuilt, with a warning)
      const file = r.store.abs(`${INDEX_DIR}/org.index`)
      const text = readFileSync(file, 'utf8')
      writeFileSync(file, text.replace(/quuxcluster/g, 'spoiledword'))
      const warnings: string[] = []
      const onWarning = (m: string) => warnings.push(m)
      const at1 = await engine.hold(['org'], {head: c1, onWarning})
      try {
        expect(warnings).toEqual([])
        // held, it is not moved: the call at the other commit loads that commit's index from the files
        const at2 = await engine.hold(['org'], {head: c2, onWarning})
        expect(warnings.join('\n')).toMatch(/search index for org is unreadable/)
        expect(Object.fromEntries(at1.indexedBlobs('org').blobs())).toEqual(treeBlobs(r, c1, 'org'))
        expect(Object.fromEntries(at2.indexedBlobs('org').blobs())).toEqual(treeBlobs(r, c2, 'org'))
        at2.release()
      } finally {
        at1.release()
      }
    } finally {
      engine.close()
    }
  })
})

describe('informative queries', () => {
  it('match only the rarest words of a text, exactly, and never parse query syntax', async () => {
    const r = repo()
    r.put('org/a.md', {title: 'Cluster', body: 'The quuxcluster runs the team jobs.\n'})
    r.put('org/b.md', {title: 'Team', body: 'The team jobs run nightly for the team.\n'})
    r.put('org/c.md', {title: 'Jobs', body: 'Jobs of the team.\n'})
    r.commit()
    const opts = {scopes: ['org']}
    // "quuxcluster" is in one document, "team" and "jobs" in all: the rarest word decides
    expect((await search(r.store, 'team jobs and the quuxcluster', {...opts, informative: 1})).map((h) => h.path)).toEqual(['a.md'])
    expect((await search(r.store, 'team jobs', {...opts, informative: 5})).length).toBe(3)
    // no prefix or fuzzy expansion, and quotes or a lone minus are just text
    expect(await search(r.store, 'quuxclust', {...opts, informative: 5})).toEqual([])
    expect(await search(r.store, 'quuxclustr', {...opts, informative: 5})).toEqual([])
    expect((await search(r.store, '"quuxcluster -', {...opts, informative: 5})).map((h) => h.path)).toEqual(['a.md'])
    expect(await search(r.store, 'nothing here matches', {...opts, informative: 5})).toEqual([])
    // bodies instead of snippets, for a caller that reads the text anyway
    const [hit] = await search(r.store, 'quuxcluster', {...opts, informative: 5, bodies: true})
    expect(hit).toMatchObject({path: 'a.md', snippet: '', body: 'The quuxcluster runs the team jobs.\n'})
    expect((await search(r.store, 'quuxcluster', opts))[0].body).toBeUndefined()
  })

  it('pick the same words through a delta segment with deletions as after a rebuild', async () => {
    const r = repo()
    r.put('org/a.md', {title: 'Cluster', body: 'The quuxcluster runs the team jobs. The zebrafarm too.\n'})
    r.put('org/b.md', {title: 'Team', body: 'The team jobs run nightly. The zebrafarm feeds them.\n'})
    r.put('org/c.md', {title: 'Jobs', body: 'Jobs of the team, on the quuxcluster.\n'})
    r.commit()
    const opts = {scopes: ['org'], informative: 1}
    const text = 'quuxcluster zebrafarm'
    expect((await search(r.store, text, opts)).map((h) => h.path).sort()).toEqual(['a.md', 'c.md'])
    // a.md goes: "quuxcluster" is now in one live document, "zebrafarm" still in one
    r.remove('org/a.md')
    r.commit()
    const viaDelta = await search(r.store, text, opts)
    expect((await status(r.store)).find((s) => s.scope === 'org')?.delta).toBeGreaterThan(0)
    await rebuild(r.store)
    const rebuilt = await search(r.store, text, opts)
    expect(viaDelta).toEqual(rebuilt)
    expect(rebuilt.map((h) => h.path)).toEqual(['c.md'])
  })

  it('in a warm engine, pick by the counts of the commit searched: the counts it keeps follow every commit', async () => {
    const r = repo()
    r.put('org/a.md', {title: 'Cluster', body: 'The quuxcluster runs the team jobs.\n'})
    r.put('org/b.md', {title: 'Farm', body: 'The zebrafarm and the quuxcluster.\n'})
    r.put('org/c.md', {title: 'Farm two', body: 'The zebrafarm feeds the team.\n'})
    r.commit()
    const engine = new WarmEngine(r.store)
    try {
      const opts = {scopes: ['org'], informative: 1}
      const text = 'quuxcluster zebrafarm'
      // both words in two documents: the tie goes to the word first in order
      expect((await engine.search(text, opts)).map((h) => h.path).sort()).toEqual(['a.md', 'b.md'])
      // "quuxcluster" now in three documents: "zebrafarm" is the rarest, in a warm engine as in a fresh one
      r.put('org/c.md', {title: 'Farm two', body: 'The zebrafarm feeds the team on the quuxcluster.\n'})
      r.commit()
      const fresh = new WarmEngine(r.store)
      try {
        expect((await fresh.search(text, opts)).map((h) => h.path).sort()).toEqual(['b.md', 'c.md'])
      } finally {
        fresh.close()
      }
      expect((await engine.search(text, opts)).map((h) => h.path).sort()).toEqual(['b.md', 'c.md'])
    } finally {
      engine.close()
    }
  })

  it('in a warm engine given the commit a caller read, search the indexes at that commit', async () => {
    const r = repo()
    r.put('org/a.md', {title: 'Cluster', body: 'The quuxcluster runs the team jobs.\n'})
    r.commit()
    const before = head(r.top)
    const engine = new WarmEngine(r.store)
    try {
      const opts = {scopes: ['org']}
      expect((await engine.search('quuxcluster', opts)).map((h) => h.path)).toEqual(['a.md'])
      r.put('org/b.md', {title: 'Farm', body: 'The quuxcluster and the zebrafarm.\n'})
      r.commit()
      // the caller's gate is of the earlier commit: the search is too (b.md is not in it)
      expect((await engine.search('quuxcluster', {...opts, head: before})).map((h) => h.path)).toEqual(['a.md'])
      expect(await heldBlobs(engine, 'org', before)).not.toHaveProperty('b.md')
      // without it, HEAD as the files say now
      expect((await engine.search('quuxcluster', opts)).map((h) => h.path).sort()).toEqual(['a.md', 'b.md'])
      expect(await heldBlobs(engine, 'org')).toHaveProperty('b.md')
    } finally {
      engine.close()
    }
  })
})
