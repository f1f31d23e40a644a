/**
 * Crash safety (issue #10 item 17, STANDARD R24) through the built CLI and real git:
 * - ≥ 100 SIGKILLs at random points of write, accept and index rebuild (conformance/kill.ts);
 * - a lone `.git/index.lock` neither blocks a commit nor leaves anything served or queued
 *   that is not committed;
 * - many processes recovering the same stale store lock at once, 60 trials: never two
 *   holders (each holder logs its entry and exit; the intervals must not overlap).
 */
import {execFileSync, spawn, spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {hostname} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'

import {killCampaign} from '../../conformance/kill.js'
import {curate, initWithSession, sandbox, tempDir} from '../helpers/cli.js'

const SEED = Number(process.env.CRASH_SEED ?? 17)

describe.skipIf(process.env.ENGRAM_BIN)('crash safety', () => {
  it('≥ 100 kills in write, accept and index rebuild: nothing acknowledged lost, verify and fsck clean, no repair', async () => {
    const report = await killCampaign({lanes: 3, kills: 102, seed: SEED, checkEvery: 12, maxSeconds: 900, onProgress: process.env.CRASH_LOG ? (m) => console.log(m) : undefined})
    console.log(`crash campaign: ${JSON.stringify(report)}`)
    expect(report.failures).toEqual([])
    expect(report.kills).toBeGreaterThanOrEqual(100)
    expect(report.acknowledged).toBeGreaterThan(10)
  }, 1_200_000)

  it('a lone .git/index.lock: the write still commits, is served, and git\'s index catches up at the next command', () => {
    const sb = sandbox()
    const session = initWithSession(sb, 'tenant:acme')
    const git = (...args: string[]) => execFileSync('git', args, {cwd: sb.dir, encoding: 'utf8', env: sb.env})
    const before = git('rev-parse', 'HEAD').trim()
    writeFileSync(join(sb.dir, '.git/index.lock'), '')
    const run = sb.run(['write', 'n.md', '--scope', `run:${session}`, '--json'], {input: 'a note\n', env: {ENGRAM_SESSION: session}})
    expect(run.code, run.stderr).toBe(0)
    expect(run.stderr).toMatch(/index\.lock/)
    const prop = sb.run(['write', 'p.md', '--scope', 'tenant:acme', '--json'], {input: 'a fact to review\n', env: {ENGRAM_SESSION: session}})
    expect(prop.code, prop.stderr).toBe(0)
    // both committed: HEAD holds exactly what is served and queued
    expect(git('rev-list', '--count', `${before}..HEAD`).trim()).toBe('2')
    expect(git('show', `HEAD~1:run/${session}/n.md`)).toContain('a note')
    expect(git('ls-tree', '-r', '--name-only', 'HEAD', '.engram/proposals/')).toContain(prop.json.proposal)
    expect(sb.run(['read', 'n.md', '--scope', `run:${session}`, '--json'], {env: {ENGRAM_SESSION: session}}).code).toBe(0)
    // the lock's owner goes away: the next command stages what engram committed
    rmSync(join(sb.dir, '.git/index.lock'))
    expect(sb.run(['review', 'list', '--json']).code).toBe(0)
    expect(git('status', '--porcelain', '--untracked-files=all')).toBe('')
  }, 300_000)

  it('an accept whose commit fails changes nothing and records no serial: the scope stays served', () => {
    const sb = sandbox()
    const session = initWithSession(sb, 'tenant:acme')
    const git = (...args: string[]) => execFileSync('git', args, {cwd: sb.dir, encoding: 'utf8', env: sb.env})
    curate(sb, session, 'tenant:acme', 'a.md', 'the first fact\n')
    const w = sb.run(['write', 'b.md', '--scope', 'tenant:acme', '--json'], {input: 'the second fact\n', env: {ENGRAM_SESSION: session}})
    expect(w.json?.status).toBe('pending')
    const before = git('rev-parse', 'HEAD').trim()
    // a live git holds the branch's ref lock: the branch cannot move
    const refLock = join(sb.dir, '.git', `${git('symbolic-ref', 'HEAD').trim()}.lock`)
    writeFileSync(refLock, `${before}\n`)
    const a = sb.run(['review', 'accept', w.json.proposal, '--digest', w.json.digest, '--json'])
    expect(a.code, a.stdout).toBe(5)
    rmSync(refLock)
    expect(git('rev-parse', 'HEAD').trim()).toBe(before)
    expect(git('status', '--porcelain', '--untracked-files=all')).toBe('')
    expect(existsSync(join(sb.dir, 'tenant/acme/b.md'))).toBe(false)
    // the serial of the manifest that was never committed was not recorded: still served, verify clean
    expect(sb.run(['read', 'a.md', '--scope', 'tenant:acme', '--json']).code).toBe(0)
    expect(sb.run(['verify', '--json']).code).toBe(0)
    const again = sb.run(['review', 'accept', w.json.proposal, '--digest', w.json.digest, '--json'])
    expect(again.code, again.stderr).toBe(0)
    expect(sb.run(['read', 'b.md', '--scope', 'tenant:acme', '--json']).code).toBe(0)
  }, 300_000)

  it('60 trials of 8 processes recovering the same stale lock at once: never two holders', async () => {
    const dir = tempDir('engram-lockrace-')
    mkdirSync(join(dir, '.engram'))
    execFileSync('git', ['init', '-q'], {cwd: dir})
    const trials = 60
    const workers = 8
    const mod = (p: string) => fileURLToPath(new URL(`../../dist/core/${p}`, import.meta.url))
    const racer = fileURLToPath(new URL('../fixtures/lock-racer.mjs', import.meta.url))
    const lockModule = process.env.LOCK_MODULE ?? mod('store/lock.js')
    const procs = Array.from({length: workers}, (_, id) =>
      new Promise<number>((resolve) => {
        const c = spawn(process.execPath, [racer, lockModule, mod('store/store.js'), dir, String(id), String(trials)], {stdio: ['ignore', 'inherit', 'inherit']})
        c.on('close', (code) => resolve(code ?? -1))
      }))
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
    for (let t = 0; t < trials; t++) {
      // a holder that died: a real pid that has exited
      const dead = spawnSync(process.execPath, ['-e', '']).pid
      writeFileSync(join(dir, '.engram/lock'), JSON.stringify({pid: dead, host: hostname(), time: new Date().toISOString(), token: `dead${t}`}))
      writeFileSync(join(dir, `go-${t}`), '')
      const deadline = Date.now() + 120_000
      while (Array.from({length: workers}, (_, id) => existsSync(join(dir, `done-${t}-${id}`))).includes(false)) {
        if (Date.now() > deadline) throw new Error(`trial ${t} did not finish`)
        await sleep(5)
      }
    }
    expect(await Promise.all(procs)).toEqual(Array(workers).fill(0))
    const lines = readFileSync(join(dir, 'holders.log'), 'utf8').trim().split('\n')
    expect(lines.length).toBe(trials * workers * 2)
    let overlaps = 0
    for (let i = 0; i < lines.length; i += 2) {
      const [b, e] = [lines[i].split(' '), lines[i + 1].split(' ')]
      if (b[0] !== 'B' || e[0] !== 'E' || b[1] !== e[1]) overlaps++
    }
    expect(overlaps, 'intervals in which two processes held the lock').toBe(0)
  }, 600_000)
})
