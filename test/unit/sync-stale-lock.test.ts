/**
 * A ref lock a killed push left in a remote on this machine is removed once stale (README "Sync"),
 * and nothing else: not a lock outside the remote's refs, not one a symlink in the remote points
 * elsewhere (an agent that can write the remote must not get a way to delete a lock of another
 * repository), not a young one that a push still holds (waited for, then kept while it changes).
 */
import {mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync, existsSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'

import {clearStaleRefLock} from '../../src/core/sync/transport.js'

const dir = mkdtempSync(join(tmpdir(), 'engram-lock-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))
const said = (p: string) => `remote: error: cannot lock ref 'refs/heads/main': Unable to create '${p}': File exists.`
const old = (p: string) => {
  writeFileSync(p, 'a killed push\n')
  const t = new Date(Date.now() - 60_000)
  utimesSync(p, t, t)
}

describe('clearing a stale ref lock in a remote on this machine', () => {
  it('removes a stale lock under the remote refs, and nothing the message names elsewhere', async () => {
    const repo = join(dir, 'a.git')
    mkdirSync(join(repo, 'refs', 'heads'), {recursive: true})
    const lock = join(repo, 'refs', 'heads', 'main.lock')
    old(lock)
    const outside = join(dir, 'config.lock')
    old(outside)
    await clearStaleRefLock(repo, said(outside))
    expect(existsSync(outside)).toBe(true)
    await clearStaleRefLock(`file://${repo}`, said(lock))
    expect(existsSync(lock)).toBe(false)
  })

  it('leaves a lock that a symlink in the remote points outside it', async () => {
    const repo = join(dir, 'b.git')
    const elsewhere = join(dir, 'other-repo', 'refs', 'heads')
    mkdirSync(join(repo, 'refs'), {recursive: true})
    mkdirSync(elsewhere, {recursive: true})
    symlinkSync(elsewhere, join(repo, 'refs', 'heads'))
    old(join(elsewhere, 'main.lock'))
    await clearStaleRefLock(repo, said(join(repo, 'refs', 'heads', 'main.lock')))
    expect(existsSync(join(elsewhere, 'main.lock'))).toBe(true)
    // nor a lock that is itself a link
    const target = join(dir, 'target.lock')
    old(target)
    mkdirSync(join(dir, 'c.git', 'refs', 'heads'), {recursive: true})
    symlinkSync(target, join(dir, 'c.git', 'refs', 'heads', 'main.lock'))
    await clearStaleRefLock(join(dir, 'c.git'), said(join(dir, 'c.git', 'refs', 'heads', 'main.lock')))
    expect(existsSync(target)).toBe(true)
  })
})
