import {execFileSync} from 'node:child_process'
import {existsSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {blobBytes, gitRead, gitWrite, revParse} from '../../src/core/git/git.js'
import {tempDir} from '../helpers/cli.js'

/** A repository with one commit holding files whose names git could read as options. */
function repo(message = 'files named like options'): string {
  const dir = tempDir('engram-gitlayer-')
  const git = (...args: string[]) => execFileSync('git', args, {cwd: dir, env: {...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t'}, encoding: 'utf8'})
  git('init', '-q')
  writeFileSync(join(dir, '--output=leak'), 'a\n')
  writeFileSync(join(dir, '-p'), 'b\n')
  git('add', '--', '--output=leak', '-p')
  git('commit', '-q', '-m', message)
  return dir
}

async function minMs(n: number, f: () => Promise<unknown>): Promise<number> {
  let best = Infinity
  for (let i = 0; i < n; i++) {
    const t0 = performance.now()
    await f()
    best = Math.min(best, performance.now() - t0)
  }
  return best
}

// The git layer (src/core/git/git.ts) runs git through simple-git; these are the ways it
// must differ from simple-git's defaults.
describe('the git layer', () => {
  it('does not wait after a command that prints nothing', async () => {
    const dir = repo()
    const printing = await minMs(8, () => gitRead(dir, ['rev-parse', 'HEAD']))
    const silent = await minMs(8, () => gitRead(dir, ['log', '-1', '--format=%H', '--', 'no/such/path']))
    expect(await gitRead(dir, ['log', '-1', '--format=%H', '--', 'no/such/path'])).toBe('')
    // simple-git on its own adds a 50 ms timer after such a command
    expect(silent).toBeLessThan(printing + 30)
  })

  it('treats every non-zero exit as a failure, also one with nothing on stderr', async () => {
    const dir = repo()
    await expect(gitRead(dir, ['rev-parse', '--verify', '-q', 'refs/heads/no-such-branch'])).rejects.toThrow(/git rev-parse failed/)
    const head = (await gitRead(dir, ['rev-parse', 'HEAD'])).trim()
    await expect(gitRead(dir, ['merge-base', '--is-ancestor', head, head])).resolves.toBe('')
    expect(await gitRead(dir, ['rev-parse', '--verify', '-q', 'no-such'], {allowFail: true})).toBe('')
  })

  it('never reads a path or revision starting with "-" as an option', async () => {
    const dir = repo()
    const head = (await gitRead(dir, ['rev-parse', 'HEAD'])).trim()
    expect((await gitRead(dir, ['log', '--format=%H', '--', '--output=leak'])).trim()).toBe(head)
    expect((await gitRead(dir, ['ls-tree', '-z', '--name-only', 'HEAD', '--', '-p'])).split('\0')).toContain('-p')
    expect(await revParse(dir, '--output=x')).toBeUndefined()
    expect(await revParse(dir, '-p')).toBeUndefined()
    expect(existsSync(join(dir, 'x'))).toBe(false)
    expect((await revParse(dir, 'HEAD:-p'))?.length).toBe(40)
  })

  it('runs with the scrubbed environment: GIT_DIR from the caller is ignored, editor and pager variables are dropped', async () => {
    const dir = repo()
    const other = repo('another repository')
    const saved = {...process.env}
    Object.assign(process.env, {GIT_DIR: join(other, '.git'), EDITOR: 'touch /tmp/engram-editor-ran', PAGER: 'touch /tmp/engram-pager-ran', GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'core.hooksPath', GIT_CONFIG_VALUE_0: '/tmp'})
    try {
      const head = (await gitRead(dir, ['rev-parse', 'HEAD'])).trim()
      expect(head).toBe(execFileSync('git', ['rev-parse', 'HEAD'], {cwd: dir, env: saved, encoding: 'utf8'}).trim())
      expect(head).not.toBe(execFileSync('git', ['rev-parse', 'HEAD'], {cwd: other, env: saved, encoding: 'utf8'}).trim())
    } finally {
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k]
      Object.assign(process.env, saved)
    }
  })

  it('feeds stdin to the calls that need it and reads blobs byte for byte', async () => {
    const dir = repo()
    const bytes = Buffer.from([0, 1, 2, 255, 10, 13, 10])
    writeFileSync(join(dir, 'blob.bin'), bytes)
    const id = (await gitWrite(dir, ['hash-object', '-w', '--no-filters', '--stdin-paths'], `${join(dir, 'blob.bin')}\n`)).trim()
    expect(id).toMatch(/^[0-9a-f]{40}$/)
    expect((await blobBytes(dir, id)).equals(bytes)).toBe(true)
  })

  it('says git is missing when no git is on PATH', async () => {
    const dir = tempDir('engram-gitlayer-nogit-')
    const path = process.env.PATH
    process.env.PATH = tempDir('engram-empty-path-')
    try {
      await expect(gitRead(dir, ['rev-parse', 'HEAD'])).rejects.toThrow(/git is required/)
    } finally {
      process.env.PATH = path
    }
  })
})
