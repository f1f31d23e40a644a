/**
 * Kill campaigns for R24 (C24 and test/e2e/crash.test.ts): the real CLI is SIGKILLed
 * (with the git processes it started: the whole process group) after a random delay
 * inside the window of a write, an accept or an index rebuild, on a few stores reused
 * across kills. After each kill the next command must simply work; at intervals and at
 * the end nothing acknowledged (exit 0 seen) may be missing, `engram verify` and `git
 * fsck` must be clean, and the work tree and git's index must equal HEAD (nothing served
 * or queued that is not committed). Seeded, so a failure can be replayed (C24_SEED).
 */
import {spawn} from 'node:child_process'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {argv, newStore, Run, startSession, Store} from './harness.js'

/** mulberry32: small, seeded, good enough to spread kill points */
export function rng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export interface Outcome extends Run {
  killed: boolean
  ms: number
}

/** Run the CLI; SIGKILL its process group after `killAfterMs` unless it ended first. */
export function runKilled(store: Store, args: string[], opts: {session?: string; input?: string; killAfterMs?: number}): Promise<Outcome> {
  const [cmd, full] = argv(args)
  const env = {...store.env, ...(opts.session ? {ENGRAM_SESSION: opts.session} : {})}
  const started = Date.now()
  return new Promise((resolve) => {
    const child = spawn(cmd, full, {cwd: store.dir, env, detached: true})
    let stdout = ''
    let stderr = ''
    let killed = false
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.stdin.on('error', () => {})
    child.stdin.end(opts.input ?? '')
    const timer = opts.killAfterMs === undefined ? undefined : setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL')
        killed = true
      } catch {
        // already gone
      }
    }, opts.killAfterMs)
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer)
      let json
      try {
        json = JSON.parse(stdout)
      } catch {
        json = undefined
      }
      // a kill that came after the process had already exited did not interrupt anything
      resolve({args, code: code ?? -1, stdout, stderr, json, killed: killed && signal === 'SIGKILL', ms: Date.now() - started})
    })
  })
}

type Op = 'propose' | 'run' | 'accept' | 'index'

interface Lane {
  store: Store
  session: string
  /** acknowledged proposals not yet acknowledged as accepted */
  pending: {id: string; digest: string; path: string; killedAccept?: boolean}[]
  /** acknowledged curated paths (accepted) and run: paths (committed) */
  curated: Set<string>
  run: Set<string>
  /** recent whole-run times per operation (ms): the kill window follows the machine's load */
  took: Record<Op, number[]>
  n: number
  /** operations run by the campaign (every fifth is not killed) */
  ops: number
  /** writes by the current session: a new one every 10 keeps under the vote's burst limits */
  writes: number
  sessions: number
}

export interface CampaignReport {
  kills: number
  acknowledged: number
  failures: string[]
  checks: number
  seconds: number
}

const SCOPE = 'tenant:acme'

async function op(lane: Lane, kind: Op, killAfterMs: number | undefined): Promise<Outcome & {kind: Op}> {
  const i = lane.n++
  if ((kind === 'propose' || kind === 'run') && lane.writes++ >= 10) {
    const r = await runKilled(lane.store, ['session', 'start', '--agent', `agent-${lane.sessions++}`, '--assigned', SCOPE, '--json'], {})
    if (r.code !== 0) throw new Error(`session start failed: ${r.stderr}`)
    lane.session = r.json.id
    lane.writes = 1
  }
  const s = lane.session
  if (kind === 'accept' && lane.pending.length > 0) {
    const p = lane.pending[0]
    const r = await runKilled(lane.store, ['review', 'accept', p.id, '--digest', p.digest, '--json'], {killAfterMs})
    // exit 4: an earlier, killed accept of it had landed: it must be served now
    if (r.code === 0 || r.code === 4) {
      lane.pending.shift()
      lane.curated.add(p.path)
    }
    if (r.killed) p.killedAccept = true
    return {...r, kind}
  }
  if (kind === 'index') return {...(await runKilled(lane.store, ['index', 'rebuild', '--json'], {killAfterMs})), kind}
  if (kind === 'run') {
    const path = `r${i}.md`
    const r = await runKilled(lane.store, ['write', path, '--scope', `run:${s}`, '--file', content(lane, i, `scratch note ${i} about deploy windows\n`), '--json'], {session: s, killAfterMs})
    if (r.code === 0) lane.run.add(`run:${s}/${path}`)
    return {...r, kind}
  }
  const path = `p${i}.md`
  const r = await runKilled(lane.store, ['write', path, '--scope', SCOPE, '--file', content(lane, i, `billing fact ${i}: invoices go out on day ${i % 28}\n`), '--json'], {session: s, killAfterMs})
  if (r.code === 0 && r.json?.status === 'pending') lane.pending.push({id: r.json.proposal, digest: r.json.digest, path})
  return {...r, kind: 'propose'}
}

/**
 * The write's text in a file outside the store: a process reading a pipe it was started
 * with can find it empty for a moment (EAGAIN), which is not what these tests are about.
 */
function content(lane: Lane, i: number, text: string): string {
  const file = join(lane.store.configDir, `content-${i}.md`)
  writeFileSync(file, text)
  return file
}

/** Everything R24 promises, checked through the CLI and git only. */
async function check(lane: Lane, failures: string[], where: string): Promise<void> {
  const st = lane.store
  const fail = (m: string) => failures.push(`${where}: ${m}`)
  const v = await runKilled(st, ['verify', '--json'], {})
  if (v.code !== 0) fail(`verify exited ${v.code}: ${v.stdout.slice(0, 400)}${v.stderr.slice(0, 400)}`)
  const fsck = await runGit(st, ['fsck', '--no-progress'])
  if (fsck.code !== 0) fail(`git fsck exited ${fsck.code}: ${fsck.out.slice(0, 400)}`)
  const status = await runGit(st, ['status', '--porcelain', '--untracked-files=all'])
  if (status.out.trim() !== '') fail(`work tree or index differs from HEAD:\n${status.out.slice(0, 600)}`)
  const list = await runKilled(st, ['list', '--json'], {})
  const served = new Set<string>((list.json?.items ?? []).map((m: {scope: string; path: string}) => `${m.scope}/${m.path}`))
  if (list.code !== 0) fail(`list exited ${list.code}`)
  for (const p of lane.curated) if (!served.has(`${SCOPE}/${p}`)) fail(`acknowledged accept of ${p} is not served`)
  for (const p of lane.run) if (!served.has(p)) fail(`acknowledged run: write ${p} is not served`)
  const queue = await runKilled(st, ['review', 'list', '--json'], {})
  const queued = new Set<string>((queue.json?.items ?? []).map((q: {id: string}) => q.id))
  // a proposal whose accept was killed is queued (not landed) or served (landed), never neither
  for (const p of lane.pending) {
    if (!queued.has(p.id) && !(p.killedAccept && served.has(`${SCOPE}/${p.path}`))) fail(`acknowledged proposal ${p.id} is neither queued nor accepted`)
    if (queued.has(p.id) && served.has(`${SCOPE}/${p.path}`)) fail(`proposal ${p.id} is both queued and accepted`)
  }
}

function runGit(store: Store, args: string[]): Promise<{code: number; out: string}> {
  return new Promise((resolve) => {
    const child = spawn('git', args, {cwd: store.dir, env: store.env})
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (out += d))
    child.on('close', (code) => resolve({code: code ?? -1, out}))
  })
}

async function newLane(): Promise<Lane> {
  const store = newStore()
  const session = startSession(store, SCOPE)
  const lane: Lane = {store, session, pending: [], curated: new Set(), run: new Set(), took: {propose: [], accept: [], run: [], index: []}, n: 0, ops: 0, writes: 0, sessions: 0}
  // measure each operation's window first: a whole run, unkilled
  for (const kind of ['propose', 'accept', 'run', 'index'] as Op[]) {
    const r = await op(lane, kind, undefined)
    if (r.code !== 0) throw new Error(`${kind} failed before any kill: ${r.stderr}${r.stdout}`)
    lane.took[kind].push(r.ms)
  }
  return lane
}

/**
 * Where to kill: between half and 105 % of the operation's recent median run time. The
 * first half is mostly Node's and oclif's startup; the change itself (vote, signing,
 * objects, branch, work tree, index) happens in the second.
 */
function killPoint(lane: Lane, kind: Op, random: () => number): number {
  const t = [...lane.took[kind]].sort((a, b) => a - b)
  const median = t[t.length >> 1]
  return median * (0.5 + random() * 0.55)
}

/**
 * `lanes` stores side by side, until `kills` kills have landed in total (a kill that came
 * after the process had exited does not count). `checkEvery`: kills between full checks.
 */
export async function killCampaign(opts: {lanes: number; kills: number; seed: number; checkEvery: number; maxSeconds: number; onProgress?: (m: string) => void}): Promise<CampaignReport> {
  const started = Date.now()
  const random = rng(opts.seed)
  const lanes = await Promise.all(Array.from({length: opts.lanes}, () => newLane()))
  const report: CampaignReport = {kills: 0, acknowledged: 0, failures: [], checks: 0, seconds: 0}
  const perLane = Math.ceil(opts.kills / opts.lanes)
  await Promise.all(lanes.map(async (lane, li) => {
    let kills = 0
    let sinceCheck = 0
    while (kills < perLane && (Date.now() - started) / 1000 < opts.maxSeconds) {
      const x = random()
      const kind: Op = lane.pending.length > 0 && x < 0.35 ? 'accept' : x < 0.65 ? 'propose' : x < 0.85 ? 'run' : 'index'
      // every fifth operation runs to its end, so each campaign has acknowledged work to
      // lose (a random kill point can fall after the end, but how often depends on load)
      const spared = ++lane.ops % 5 === 0
      const r = await op(lane, kind, spared ? undefined : killPoint(lane, kind, random))
      if (!r.killed && r.code === 0) lane.took[r.kind].splice(0, lane.took[r.kind].length - 4, r.ms)
      opts.onProgress?.(`lane ${li} ${r.kind} ${r.killed ? 'killed' : `exit ${r.code}`} after ${r.ms} ms`)
      if (r.killed) {
        kills++
        sinceCheck++
      } else if (r.code === 0 || (r.kind === 'accept' && r.code === 4)) {
        report.acknowledged++
      } else {
        // not killed, yet it failed: the previous kill left something behind
        report.failures.push(`lane ${li}: ${r.kind} after a kill exited ${r.code}: ${r.stderr.slice(0, 400)}${r.stdout.slice(0, 200)}`)
      }
      if (sinceCheck >= opts.checkEvery) {
        sinceCheck = 0
        report.checks++
        await check(lane, report.failures, `lane ${li} after ${kills} kills`)
      }
    }
    report.kills += kills
    report.checks++
    await check(lane, report.failures, `lane ${li} at the end`)
  }))
  report.seconds = (Date.now() - started) / 1000
  return report
}
