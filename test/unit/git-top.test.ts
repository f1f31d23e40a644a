import {execFileSync} from 'node:child_process'
import {copyFileSync, mkdirSync, realpathSync, rmSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'

import {firstParentFromFiles, gitTopLevel, workTreeTopFromFiles} from '../../src/core/git/git.js'
import {tempDir} from '../helpers/cli.js'

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, {cwd, encoding: 'utf8', env: {...process.env, GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@e'}}).trim()

describe('the work tree top without spawning git', () => {
  const dirs: string[] = []
  const repo = () => {
    const d = tempDir('engram-top-')
    dirs.push(d)
    git(d, 'init', '-q')
    return d
  }
  afterAll(() => dirs.forEach((d) => rmSync(d, {recursive: true, force: true})))

  it('agrees with git rev-parse in a plain repository, from any folder in it', async () => {
    const d = repo()
    const deep = join(d, 'a', 'b')
    mkdirSync(deep, {recursive: true})
    for (const dir of [d, deep]) {
      expect(workTreeTopFromFiles(dir)).toBe(realpathSync(git(dir, 'rev-parse', '--show-toplevel')))
      expect(await gitTopLevel(dir)).toBe(d)
    }
  })

  it('asks git for a linked worktree, and git finds it', async () => {
    const d = repo()
    git(d, 'commit', '-q', '--allow-empty', '-m', 'x')
    const wt = join(tempDir('engram-wt-'), 'wt')
    dirs.push(wt)
    git(d, 'worktree', 'add', '-q', wt)
    expect(workTreeTopFromFiles(wt)).toBeUndefined()
    expect(await gitTopLevel(wt)).toBe(realpathSync(wt))
  })

  it('asks git when the config moves the work tree or includes other files', async () => {
    const d = repo()
    const other = tempDir('engram-other-')
    dirs.push(other)
    git(d, 'config', 'core.worktree', other)
    expect(workTreeTopFromFiles(d)).toBeUndefined()
    expect(await gitTopLevel(d)).not.toBe(d)
    const e = repo()
    git(e, 'config', 'include.path', '/nonexistent')
    expect(workTreeTopFromFiles(e)).toBeUndefined()
    expect(await gitTopLevel(e)).toBe(e)
  })

  it('finds nothing outside a repository', async () => {
    const d = tempDir('engram-norepo-')
    dirs.push(d)
    expect(workTreeTopFromFiles(d)).toBeUndefined()
    expect(await gitTopLevel(d)).toBeUndefined()
  })
})

describe('a commit\'s first parent from its loose object', () => {
  it('agrees with git for a loose commit, and is unsure for packed, root or planted objects', () => {
    const d = tempDir('engram-parent-')
    try {
      git(d, 'init', '-q')
      git(d, 'commit', '-q', '--allow-empty', '-m', 'one')
      const root = git(d, 'rev-parse', 'HEAD')
      expect(firstParentFromFiles(d, root)).toBeUndefined()
      git(d, 'commit', '-q', '--allow-empty', '-m', 'two')
      const two = git(d, 'rev-parse', 'HEAD')
      expect(firstParentFromFiles(d, two)).toBe(root)
      // another commit's bytes under this commit's name: the hash does not match the name
      git(d, 'commit', '-q', '--allow-empty', '-m', 'three')
      const three = git(d, 'rev-parse', 'HEAD')
      const obj = (id: string) => join(d, '.git', 'objects', id.slice(0, 2), id.slice(2))
      rmSync(obj(three), {force: true})
      copyFileSync(obj(two), obj(three))
      expect(firstParentFromFiles(d, three)).toBeUndefined()
      expect(firstParentFromFiles(d, 'not-a-commit-id')).toBeUndefined()
      git(d, 'gc', '-q')
      expect(firstParentFromFiles(d, two)).toBeUndefined() // packed now: git answers instead
    } finally {
      rmSync(d, {recursive: true, force: true})
    }
  })
})
