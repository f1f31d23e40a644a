/**
 * C24 — R24: every change is atomic and nothing uncommitted is served.
 *
 * 1. A smaller kill campaign (conformance/kill.ts): 30 SIGKILLs of the CLI and the git
 *    processes it started, at random points of write, accept and index rebuild; then
 *    `verify` and `git fsck` clean, work tree and index equal to HEAD, every acknowledged
 *    write and accept still there, and every next command working without repair.
 * 2. A stale lock left by a dead process, and 8 processes at once writing the same new
 *    `run:` file (`--base-blob none`) over it: if two recovered the lock together both
 *    would commit; exactly one may, the others get a conflict (their text kept).
 */
import {spawnSync} from 'node:child_process'
import {writeFileSync} from 'node:fs'
import {hostname} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {killCampaign} from './kill.js'
import {newStore, startSession} from './harness.js'

describe('C24 — every change is atomic; nothing uncommitted is served', () => {
  it('30 kills at random points of write, accept and index rebuild need no repair and lose nothing acknowledged', async () => {
    const report = await killCampaign({lanes: 2, kills: 30, seed: Number(process.env.C24_SEED ?? 24), checkEvery: 8, maxSeconds: 600})
    expect(report.failures).toEqual([])
    expect(report.kills).toBeGreaterThanOrEqual(30)
  }, 900_000)

  it('processes recovering one stale lock at once: one holder at a time', async () => {
    const store = newStore()
    const session = startSession(store, 'tenant:acme')
    for (let trial = 0; trial < 3; trial++) {
      const dead = spawnSync(process.execPath, ['-e', '']).pid
      store.write('.engram/lock', JSON.stringify({pid: dead, host: hostname(), time: new Date().toISOString(), token: `dead${trial}`}))
      const path = `race-${trial}.md`
      // the text in files, not on stdin: a pipe read at once can come up empty (EAGAIN)
      const files = Array.from({length: 8}, (_, i) => {
        const f = join(store.configDir, `w-${trial}-${i}.md`)
        writeFileSync(f, `writer ${i} of trial ${trial}\n`)
        return f
      })
      const runs = await Promise.all(files.map((f) =>
        store.runAsync(['write', path, '--scope', `run:${session}`, '--base-blob', 'none', '--file', f, '--json'], {session})))
      const committed = runs.filter((r) => r.code === 0)
      expect(committed.length, runs.map((r) => `${r.code} ${r.stderr.trim()}`).join('\n')).toBe(1)
      for (const r of runs) if (r.code !== 0) expect(r.code).toBe(5)
      // one commit added the file; the file served is the one that commit holds
      const adds = store.git('log', '--format=%H', '--diff-filter=A', '--', `run/${session}/${path}`).trim().split('\n').filter(Boolean)
      expect(adds.length).toBe(1)
      expect(store.read(`run/${session}/${path}`)).toBe(store.git('show', `HEAD:run/${session}/${path}`))
    }
    expect(store.git('status', '--porcelain', '--untracked-files=all')).toBe('')
  }, 600_000)
})
