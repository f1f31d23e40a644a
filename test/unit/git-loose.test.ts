import {execFileSync} from 'node:child_process'
import {chmodSync, mkdirSync, readdirSync, rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {commitChanges} from '../../src/core/git/commit.js'
import {Store} from '../../src/core/store/store.js'
import {changesSince, identName, looseCommit, readLoose, treeWithChanges, writeLooseBlob, writeLooseCommit} from '../../src/core/git/loose.js'
import {gitBlobHash} from '../../src/core/memory/hash.js'
import {tempDir} from '../helpers/cli.js'
import {fc, runs} from './properties-seed.js'

const ENV = {...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t', GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1'}

function repo(): {dir: string; git: (...args: string[]) => string} {
  const dir = tempDir('engram-loose-')
  const git = (...args: string[]) => execFileSync('git', args, {cwd: dir, env: ENV, encoding: 'utf8'})
  git('init', '-q')
  return {dir, git}
}

const PATHS = ['a.md', '.engram/config.yml', '.engram/config.sig', '.engram/sessions/s-1.json', '.engram/sessions/s-2.json', 'run/s-1/deep/n.md']

// Loose objects read in-process (src/core/git/loose.ts) must say exactly what git says,
// or say nothing: a wrong answer would let a changed config or session record go unseen.
describe('git loose objects, read in-process', () => {
  it('changesSince lists what `git log base..head -- path` lists, for any sequence of commits', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.tuple(fc.constantFrom(...PATHS), fc.oneof(fc.constant(null), fc.constantFrom('x', 'y', 'z'))), {minLength: 1, maxLength: 3}), {minLength: 2, maxLength: 9}),
        fc.nat(8),
        (steps, baseAt) => {
          const {dir, git} = repo()
          try {
            const commits: string[] = []
            for (const step of steps) {
              for (const [p, content] of step) {
                if (content === null) rmSync(join(dir, p), {force: true})
                else {
                  mkdirSync(join(dir, p, '..'), {recursive: true})
                  writeFileSync(join(dir, p), content)
                }
              }
              git('add', '-A')
              git('commit', '-q', '--allow-empty', '-m', 'step')
              commits.push(git('rev-parse', 'HEAD').trim())
            }
            const head = commits[commits.length - 1]
            const base = commits[Math.min(baseAt, commits.length - 1)]
            for (const paths of [...PATHS.map((p) => [p]), ['.engram/config.yml', '.engram/config.sig'], ['no/such/file']]) {
              const want = git('log', '--format=%H', `${base}..${head}`, '--', ...paths).split('\n').filter(Boolean)
              expect(changesSince(dir, head, base, paths), paths.join(' ')).toEqual(want)
            }
          } finally {
            rmSync(dir, {recursive: true, force: true})
          }
        },
      ),
      {numRuns: runs(25)},
    )
  })

  it('says nothing across a merge, a packed object, a base not met, or past its step limit', () => {
    const {dir, git} = repo()
    const commit = (file: string, text: string) => {
      writeFileSync(join(dir, file), text)
      git('add', '-A')
      git('commit', '-q', '-m', text)
      return git('rev-parse', 'HEAD').trim()
    }
    const root = commit('a.md', 'one')
    const second = commit('a.md', 'two')
    git('checkout', '-q', '-b', 'side', root)
    const side = commit('b.md', 'side')
    git('checkout', '-q', '-')
    git('merge', '-q', '--no-edit', 'side')
    const merge = git('rev-parse', 'HEAD').trim()
    const after = commit('a.md', 'three')
    expect(changesSince(dir, after, merge, ['a.md'])).toEqual([after])
    expect(changesSince(dir, after, second, ['a.md'])).toBeUndefined() // the merge is in the way
    expect(changesSince(dir, second, side, ['a.md'])).toBeUndefined() // base is not an ancestor: the root is met first
    expect(changesSince(dir, after, merge, ['a.md'], 0)).toBeUndefined()
    git('repack', '-a', '-d', '-q')
    expect(looseCommit(dir, after)).toBeUndefined()
    expect(changesSince(dir, after, merge, ['a.md'])).toBeUndefined()
  })

  it('never takes a planted file for an object: the bytes must hash to the name', () => {
    const {dir, git} = repo()
    writeFileSync(join(dir, 'a.md'), 'real\n')
    git('add', '-A')
    git('commit', '-q', '-m', 'real')
    const head = git('rev-parse', 'HEAD').trim()
    expect(looseCommit(dir, head)?.parents).toEqual([])
    // another commit's bytes put where this one lives
    writeFileSync(join(dir, 'a.md'), 'other\n')
    git('add', '-A')
    git('commit', '-q', '-m', 'other')
    const other = git('rev-parse', 'HEAD').trim()
    const file = join(dir, '.git', 'objects', head.slice(0, 2), head.slice(2))
    chmodSync(file, 0o644)
    writeFileSync(file, execFileSync('cat', [join(dir, '.git', 'objects', other.slice(0, 2), other.slice(2))]))
    expect(readLoose(dir, head)).toBeUndefined()
    expect(looseCommit(dir, head)).toBeUndefined()
  })

  it('writes blobs git reads back byte for byte, and fsck finds them sound', () => {
    const {dir, git} = repo()
    git('commit', '-q', '--allow-empty', '-m', 'base')
    const contents = [Buffer.from('hello\n'), Buffer.alloc(0), Buffer.from([0, 255, 10, 13]), Buffer.from('é'.repeat(50_000))]
    for (const c of contents) {
      const id = gitBlobHash(c)
      expect(writeLooseBlob(dir, id, c)).toBe(true)
      expect(writeLooseBlob(dir, id, c)).toBe(true) // already there: left alone
      expect(execFileSync('git', ['cat-file', 'blob', id], {cwd: dir, env: ENV}).equals(c)).toBe(true)
      expect(readLoose(dir, id)?.body.equals(c)).toBe(true)
    }
    const unreachable = git('fsck', '--strict', '--no-progress', '--unreachable').split('\n').filter(Boolean)
    expect(unreachable.sort()).toEqual(contents.map((c) => `unreachable blob ${gitBlobHash(c)}`).sort())
    expect(git('fsck', '--strict', '--no-progress', '--no-dangling').trim()).toBe('')
    // no temporary file left beside them
    for (const d of readdirSync(join(dir, '.git', 'objects'))) {
      if (/^[0-9a-f]{2}$/.test(d)) expect(readdirSync(join(dir, '.git', 'objects', d)).filter((f) => f.startsWith('tmp_'))).toEqual([])
    }
    // a damaged or planted file where a blob goes is replaced by the blob itself
    const victim = Buffer.from('the real memory\n')
    const vid = gitBlobHash(victim)
    mkdirSync(join(dir, '.git', 'objects', vid.slice(0, 2)), {recursive: true})
    writeFileSync(join(dir, '.git', 'objects', vid.slice(0, 2), vid.slice(2)), 'garbage')
    expect(writeLooseBlob(dir, vid, victim)).toBe(true)
    expect(execFileSync('git', ['cat-file', 'blob', vid], {cwd: dir, env: ENV}).equals(victim)).toBe(true)
    // a linked worktree's store: not written here (git writes them)
    const wt = join(tempDir('engram-loose-wt-'), 'wt')
    git('worktree', 'add', '-q', wt)
    expect(writeLooseBlob(wt, gitBlobHash('x'), Buffer.from('x'))).toBe(false)
  })

  it('a commit packs the loose objects once there are many, keeping every object, even one no ref names', async () => {
    const {dir, git} = repo()
    mkdirSync(join(dir, '.engram'))
    writeFileSync(join(dir, '.engram', 'config.yml'), 'version: 1\n')
    git('add', '-A')
    git('commit', '-q', '-m', 'init')
    // 1,500 objects no ref names, as a fetch or a killed commit leaves them
    const files = Array.from({length: 1500}, (_, i) => {
      const f = join(dir, `planted-${i}`)
      writeFileSync(f, `planted ${i}\n`)
      return f
    })
    const ids = execFileSync('git', ['hash-object', '-w', '--stdin-paths'], {cwd: dir, env: ENV, input: files.join('\n'), encoding: 'utf8'}).trim().split('\n')
    for (const f of files) rmSync(f)
    const loose = () => Number(/^count: (\d+)$/m.exec(git('count-objects', '-v'))![1])
    expect(loose()).toBeGreaterThanOrEqual(1500)
    const store = await Store.open(dir)
    const commit = await commitChanges(store, {subject: 'a memory', changes: [{path: 'a.md', content: 'a memory\n'}]})
    expect(commit).toMatch(/^[0-9a-f]{40}$/)
    expect(loose()).toBeLessThan(50)
    const missing = execFileSync('git', ['cat-file', '--batch-check'], {cwd: dir, env: ENV, input: `${ids.join('\n')}\n`, encoding: 'utf8'}).split('\n').filter((l) => l.endsWith('missing'))
    expect(missing).toEqual([])
    expect(git('fsck', '--strict', '--no-progress', '--no-dangling').trim()).toBe('')
    expect(git('show', 'HEAD:a.md')).toBe('a memory\n')
  })

  it('builds the tree git builds from HEAD\'s and a set of changes, or leaves it to git', () => {
    const NAMES = ['a.md', 'b.md', 'dir/a.md', 'dir/sub/x.md', 'dir.md', 'dir-x/y.md', 'é/ü.md', '.engram/proposals/p1.md', '.engram/proposals/p2.md', 'z']
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...NAMES), {maxLength: 6}),
        fc.array(fc.tuple(fc.constantFrom(...NAMES, 'new/deep/file.md', 'dir/sub'), fc.oneof(fc.constant(null), fc.constantFrom('1', '2'))), {minLength: 1, maxLength: 5}),
        (start, changes) => {
          const {dir, git} = repo()
          try {
            for (const p of new Set(start)) {
              mkdirSync(join(dir, p, '..'), {recursive: true})
              writeFileSync(join(dir, p), `start ${p}\n`)
            }
            git('add', '-A')
            git('commit', '-q', '--allow-empty', '-m', 'start')
            const base = git('rev-parse', 'HEAD^{tree}').trim()
            const last = new Map<string, string | null>()
            for (const [p, c] of changes) last.set(p, c === null ? null : execFileSync('git', ['hash-object', '-w', '--stdin'], {cwd: dir, env: ENV, input: `${p} ${c}\n`, encoding: 'utf8'}).trim())
            const list = [...last].map(([path, blob]) => ({path, blob}))
            const ours = treeWithChanges(dir, base, list)
            // git's way: HEAD's tree in a private index, the changes, write-tree
            const index = join(dir, '.git', 'test-index')
            const ienv = {...ENV, GIT_INDEX_FILE: index}
            execFileSync('git', ['read-tree', base], {cwd: dir, env: ienv})
            const info = list.map((c) => `${c.blob === null ? `0 ${'0'.repeat(40)}` : `100644 ${c.blob}`}\t${c.path}`).join('\0')
            let theirs: string | undefined
            try {
              execFileSync('git', ['update-index', '-z', '--index-info'], {cwd: dir, env: ienv, input: `${info}\0`, stdio: 'pipe'})
              theirs = execFileSync('git', ['write-tree'], {cwd: dir, env: ienv, encoding: 'utf8', stdio: 'pipe'}).trim()
            } catch {
              theirs = undefined // git refuses it too (a file where a folder is)
            }
            rmSync(index, {force: true})
            // where both answer, the same tree; where this one leaves it to git, git decides
            if (ours !== undefined) expect(ours).toBe(theirs)
            if (ours !== undefined) expect(git('fsck', '--strict', '--no-progress', '--no-dangling').trim()).toBe('')
            // a file set where a folder is, or under a file, is always left to git
            const files = [...new Set(start)]
            const conflict = list.some((c) => files.some((p) => p.startsWith(`${c.path}/`)) || (c.blob !== null && files.some((p) => c.path.startsWith(`${p}/`))))
            if (conflict) expect(ours).toBeUndefined()
            else expect(ours, JSON.stringify({start, list})).toBeDefined()
          } finally {
            rmSync(dir, {recursive: true, force: true})
          }
        },
      ),
      {numRuns: runs(40)},
    )
  })

  it('writes the commit `git commit-tree` writes for the same tree, parents, people, date and message', () => {
    const {dir, git} = repo()
    writeFileSync(join(dir, 'a.md'), 'a\n')
    git('add', '-A')
    git('commit', '-q', '-m', 'first')
    const parent = git('rev-parse', 'HEAD').trim()
    const tree = git('rev-parse', 'HEAD^{tree}').trim()
    const author = identName(git('var', 'GIT_AUTHOR_IDENT').trim())!
    expect(author).toBe('t <t@t>')
    const message = 'Write run:s-1/a.md\n\nbody é\n\nEngram-Operation: write\n'
    const now = new Date('2026-06-01T12:34:56Z')
    const ours = writeLooseCommit(dir, {tree, parents: [parent], author, committer: author, message}, now)!
    const header = readLoose(dir, ours)!.body.toString('utf8')
    const date = /^author t <t@t> (\d+ [+-]\d{4})$/m.exec(header)![1]
    expect(date.split(' ')[0]).toBe(String(now.getTime() / 1000))
    const theirs = execFileSync('git', ['commit-tree', tree, '-p', parent, '-F', '-'], {cwd: dir, env: {...ENV, GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date}, input: message, encoding: 'utf8'}).trim()
    expect(ours).toBe(theirs)
    expect(identName('evil\nname <x@y> 1 +0000')).toBeUndefined()
    expect(identName('root <root@vm.(none)> 1796176877 +0000')).toBeUndefined() // git made it up; commit-tree refuses it
    expect(identName('Name <x@y>')).toBeUndefined()
  })

  it('leaves to git a tree with an entry mode git would spell otherwise, and a repository of another object format', () => {
    const {dir, git} = repo()
    const blob = execFileSync('git', ['hash-object', '-w', '--stdin'], {cwd: dir, env: ENV, input: 'x\n', encoding: 'utf8'}).trim()
    const sub = execFileSync('git', ['mktree'], {cwd: dir, env: ENV, input: `100644 blob ${blob}\tf\n`, encoding: 'utf8'}).trim()
    // "040000 a" sorts after "a.b" as a folder; read as a file it would sort before it
    const body = Buffer.concat([Buffer.from('100644 a.b\0'), Buffer.from(blob, 'hex'), Buffer.from('040000 a\0'), Buffer.from(sub, 'hex')])
    const odd = execFileSync('git', ['hash-object', '-w', '-t', 'tree', '--literally', '--stdin'], {cwd: dir, env: ENV, input: body, encoding: 'utf8'}).trim()
    expect(treeWithChanges(dir, odd, [{path: 'zz', blob}])).toBeUndefined()
    const sha256 = tempDir('engram-loose-256-')
    execFileSync('git', ['init', '-q', '--object-format=sha256'], {cwd: sha256, env: ENV})
    expect(writeLooseBlob(sha256, gitBlobHash('x'), Buffer.from('x'))).toBe(false)
    expect(treeWithChanges(sha256, undefined, [{path: 'a.md', blob}])).toBeUndefined()
  })
})
