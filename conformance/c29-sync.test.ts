/**
 * C29 — many hosts (STANDARD R29). Hosts are clones with key folders of their own, syncing
 * through a local bare repository with the real CLI.
 * - Load: three hosts write at once (run: notes, proposals, owner accepts on two of them)
 *   with syncs in between; afterwards every acknowledged write is on every host, as
 *   committed memory or a proposal, `git fsck` and `engram verify` are clean everywhere.
 *   ENGRAM_SYNC_LOAD_WRITES sets the writes per host (default 8; `npm run load:sync`
 *   runs 100, README "Sync").
 * - Crash: `engram sync` SIGKILLed at random points (≥ 50 kills) while the other host
 *   keeps writing: the next sync simply works, nothing acknowledged is lost, no repair.
 */
import {copyFileSync, mkdirSync, readdirSync} from 'node:fs'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'

import {Run, Store, newStore, startSession, tempDir} from './harness.js'
import {rng, runKilled} from './kill.js'

const SCOPE = 'tenant:acme'
const WRITES = Number(process.env.ENGRAM_SYNC_LOAD_WRITES) || 8
const KILLS = Number(process.env.ENGRAM_SYNC_KILLS) || 50

interface Host {
  name: string
  store: Store
  session: string
  writes: number
  owner: boolean
  /** acknowledged: run: paths committed, proposal ids queued, curated paths accepted */
  run: Set<string>
  proposals: Set<string>
  /** accepted proposal id → its curated path */
  curated: Map<string, string>
}

function host(name: string, store: Store, owner: boolean): Host {
  return {name, store, owner, session: startSession(store, SCOPE, {agent: `agent-${name}`}), writes: 0, run: new Set(), proposals: new Set(), curated: new Map()}
}

function cloneHost(name: string, first: Store, remote: string, owner: boolean): Host {
  const store = new Store()
  store.git('clone', '-q', remote, '.')
  const fp = first.ok(['keys', 'list']).items.find((k: any) => k.root).fingerprint
  store.ok(['keys', 'trust', '--root', fp])
  if (owner) {
    mkdirSync(join(store.configDir, 'keys'), {recursive: true, mode: 0o700})
    for (const f of readdirSync(join(first.configDir, 'keys'))) copyFileSync(join(first.configDir, 'keys', f), join(store.configDir, 'keys', f))
  }
  store.ok(['sync', '--remote', remote])
  return host(name, store, owner)
}

/** A new session every 8 writes keeps each under the vote's burst limits. */
function sessionFor(h: Host): string {
  if (h.writes++ % 8 === 7) h.session = startSession(h.store, SCOPE, {agent: `agent-${h.name}-${h.writes}`})
  return h.session
}

async function runNote(h: Host, i: number): Promise<void> {
  const s = sessionFor(h)
  const path = `${h.name}-${i}.md`
  const r = await h.store.runAsync(['write', path, '--scope', `run:${s}`, '--json'], {session: s, input: `host ${h.name} note ${i}: the deploy window is ${i % 24}:00\n`})
  if (r.code === 0) h.run.add(`run/${s}/${path}`)
}

async function propose(h: Host, i: number): Promise<{id: string; digest: string} | undefined> {
  const s = sessionFor(h)
  const r = await h.store.runAsync(['write', `${h.name}-p${i}.md`, '--scope', SCOPE, '--json'], {session: s, input: `Host ${h.name} fact ${i}: invoices for region ${h.name}${i} go out on day ${(i % 27) + 1}.\n`})
  if (r.code === 0 && r.json?.status === 'pending') {
    h.proposals.add(r.json.proposal)
    return {id: r.json.proposal, digest: r.json.digest}
  }
  return undefined
}

async function syncRun(h: Host): Promise<Run> {
  return h.store.runAsync(['sync', '--json'], h.owner ? {} : {session: h.session})
}

async function sync(h: Host): Promise<number> {
  return (await syncRun(h)).code
}

/**
 * Sync every host in turn until all hold the same commit and every sync of a round ended with 0
 * (a few rounds at most). A sync may give up for now with a conflict (exit 5, "run `engram sync`
 * again": a push that lost a race, a lock a killed process left that is not yet stale), and the
 * next takes it up, as a user would; anything else fails at once, and so does a conflict that
 * does not pass.
 */
async function converge(hosts: Host[]): Promise<void> {
  const conflicts: string[] = []
  for (let round = 0; round < 6; round++) {
    let clean = true
    for (const h of hosts) {
      const r = await syncRun(h)
      expect([0, 5], `${h.name} sync: ${r.stderr}${r.stdout}`).toContain(r.code)
      if (r.code === 5) {
        clean = false
        conflicts.push(`round ${round}, ${h.name}: ${r.stderr.trim()}`)
      }
    }
    const heads = new Set(hosts.map((h) => h.store.git('rev-parse', 'HEAD').trim()))
    if (heads.size === 1 && clean) {
      if (conflicts.length > 0) console.log(`C29 converge: ${conflicts.length} sync(s) gave up for now and the next took it up:\n${conflicts.join('\n')}`)
      return
    }
  }
  throw new Error(`hosts did not converge${conflicts.length > 0 ? `; conflicts:\n${conflicts.join('\n')}` : ''}`)
}

function checkAll(hosts: Host[]): void {
  const all = hosts.flatMap((h) => [...h.run])
  const proposals = hosts.flatMap((h) => [...h.proposals])
  const curated = hosts.flatMap((h) => [...h.curated.values()])
  const accepted = new Set(hosts.flatMap((h) => [...h.curated.keys()]))
  for (const h of hosts) {
    const files = new Set(h.store.git('ls-tree', '-r', '--name-only', 'HEAD').split('\n'))
    for (const p of all) expect(files.has(p), `${h.name} lacks run note ${p}`).toBe(true)
    for (const id of proposals) {
      // queued, or accepted since (its memory is then curated, checked below), never gone
      expect(files.has(`.engram/proposals/${id}.md`) || accepted.has(id), `${h.name} lost proposal ${id}`).toBe(true)
    }
    for (const p of curated) expect(files.has(p), `${h.name} lacks curated ${p}`).toBe(true)
    // a sync killed after it made a commit and before the branch moved leaves that commit unreferenced (README "Crash safety"): debris for git gc, not damage
    expect(h.store.git('fsck', '--no-progress', '--strict', '--no-dangling').trim(), `${h.name} fsck`).toBe('')
    const v = h.store.run(['verify', '--json'])
    expect(v.code, `${h.name} verify: ${v.stdout}`).toBe(0)
    expect(h.store.git('status', '--porcelain', '--untracked-files=all').trim(), `${h.name} work tree`).toBe('')
  }
}

describe.skipIf(process.env.ENGRAM_BIN)('C29 many hosts', () => {
  let remote: string
  let a: Host
  let b: Host
  let c: Host

  beforeAll(() => {
    const first = newStore()
    remote = join(tempDir('engram-conf-remote-'), 'memory.git')
    first.git('init', '-q', '--bare', remote)
    a = host('a', first, true)
    first.ok(['sync', '--remote', remote])
    b = cloneHost('b', first, remote, true)
    c = cloneHost('c', first, remote, false)
  })

  it(`load: 3 hosts × ${WRITES} writes at once, syncing in between; every acknowledged write on every host, fsck and verify clean`, async () => {
    const started = Date.now()
    const lane = async (h: Host) => {
      for (let i = 0; i < WRITES; i++) {
        if (i % 3 === 2) {
          const p = await propose(h, i)
          // the owner hosts accept some of their own proposals: manifests change on two hosts at once
          if (p && h.owner && i % 6 === 5) {
            const acc = await h.store.runAsync(['review', 'accept', p.id, '--digest', p.digest, '--json'])
            if (acc.code === 0) h.curated.set(p.id, `tenant/acme/${h.name}-p${i}.md`)
          }
        } else await runNote(h, i)
        if (i % 4 === 3) {
          const code = await sync(h)
          // a lost race three hosts deep may give up for now (exit 5): the next sync takes it up
          expect([0, 5], `${h.name} sync exit`).toContain(code)
        }
      }
    }
    await Promise.all([a, b, c].map(lane))
    await converge([a, b, c])
    checkAll([a, b, c])
    const acked = [a, b, c].reduce((n, h) => n + h.run.size + h.proposals.size, 0)
    expect(acked).toBeGreaterThanOrEqual(Math.floor(WRITES * 3 * 0.9))
    console.log(`C29 load: ${acked} acknowledged writes on 3 hosts in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  })

  it(`crash: sync SIGKILLed at random points (${KILLS} kills) while the other host writes; nothing lost, no repair`, async () => {
    const random = rng(Number(process.env.C29_SEED) || 29)
    let kills = 0
    let i = 1000
    // a fast machine ends more syncs before their kill: try up to six times as often
    for (let n = 0; kills < KILLS && n < KILLS * 6; n++) {
      const h = n % 2 === 0 ? a : b
      const other = h === a ? b : a
      if (n % 3 === 0) await runNote(other, i++)
      // every fifth sync runs to its end, so there is always something synced to lose
      const killAfterMs = n % 5 === 4 ? undefined : Math.floor(random() * 700)
      const r = await runKilled(h.store, ['sync', '--json'], {killAfterMs})
      if (r.killed) kills++
      else expect([0, 5], `${h.name} sync after kills: ${r.stderr}${r.stdout}`).toContain(r.code)
    }
    expect(kills).toBeGreaterThanOrEqual(KILLS)
    await converge([a, b, c])
    checkAll([a, b, c])
  })
})
