#!/usr/bin/env node
// Sync of N new memories between two clones, timed (README "Sync: many hosts, one memory").
// Host A is a store made by `engram init`; host B a clone of it, its root pinned, synced
// once. A then gets N signed, curated memories in one commit (scripts/gen-store.mjs --sign
// --layout single: one project scope, as a bulk import), and the two sync through a local bare repository: A's `engram sync`
// pushes them, B's fetches, verifies every signature and manifest of the target commit
// from git objects, and moves. Both timed as whole processes; then B serves them (`engram
// verify` clean, `engram list` counts them).
//   npm run build && node scripts/bench-sync.mjs [--memories 1000] [--runs 3]
import {execFileSync, spawnSync} from 'node:child_process'
import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`)
  return i > 0 ? Number(process.argv[i + 1]) : dflt
}
const N = arg('memories', 1000)
const RUNS = arg('runs', 3)
const BIN = fileURLToPath(new URL('../bin/run.js', import.meta.url))
const GEN = fileURLToPath(new URL('./gen-store.mjs', import.meta.url))

function once() {
  const root = mkdtempSync(join(tmpdir(), 'engram-bench-sync-'))
  const dirs = {a: join(root, 'a'), b: join(root, 'b'), remote: join(root, 'remote.git'), ca: join(root, 'config-a'), cb: join(root, 'config-b')}
  for (const d of [dirs.a, dirs.ca, dirs.cb]) mkdirSync(d)
  writeFileSync(join(dirs.ca, 'pass'), 'bench passphrase\n', {mode: 0o600})
  const base = {...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ENGRAM_') && !k.startsWith('GIT_') && k !== 'NODE_ENV')),
    ENGRAM_INSECURE_TEST_KDF: '1', NO_COLOR: '1', GIT_AUTHOR_NAME: 'bench', GIT_AUTHOR_EMAIL: 'bench@example.com', GIT_COMMITTER_NAME: 'bench', GIT_COMMITTER_EMAIL: 'bench@example.com'}
  const envA = {...base, ENGRAM_CONFIG_DIR: dirs.ca, ENGRAM_PASSPHRASE_FILE: join(dirs.ca, 'pass')}
  const envB = {...base, ENGRAM_CONFIG_DIR: dirs.cb}
  const engram = (cwd, env, ...args) => {
    const t0 = process.hrtime.bigint()
    const r = spawnSync(process.execPath, [BIN, ...args, '--json'], {cwd, env, encoding: 'utf8', maxBuffer: 1 << 28})
    const ms = Number(process.hrtime.bigint() - t0) / 1e6
    if (r.status !== 0) throw new Error(`engram ${args.join(' ')} exited ${r.status}: ${r.stdout}${r.stderr}`)
    return {json: JSON.parse(r.stdout), ms}
  }
  const git = (cwd, ...args) => execFileSync('git', args, {cwd, env: base, encoding: 'utf8'})
  try {
    // A: a store with its owner key; the remote and B start from it
    engram(dirs.a, envA, 'init')
    git(root, 'init', '-q', '--bare', dirs.remote)
    engram(dirs.a, envA, 'sync', '--remote', dirs.remote)
    git(root, 'clone', '-q', dirs.remote, dirs.b)
    const fp = engram(dirs.a, envA, 'keys', 'list').json.items.find((k) => k.root).fingerprint
    engram(dirs.b, envB, 'keys', 'trust', '--root', fp)
    engram(dirs.b, envB, 'sync', '--remote', dirs.remote)
    // N signed memories on A in one commit, signed by A's owner key (gen-store's own store
    // of the same key, its files copied in with their manifests, signed for A's identity)
    const gen = join(root, 'gen')
    const id = engram(dirs.a, envA, 'status').json.identity.id
    execFileSync(process.execPath, [GEN, gen, '--memories', String(N), '--layout', 'single', '--sign', '--for-store', id], {env: {...envA, ENGRAM_CONFIG_DIR: dirs.ca}, stdio: 'ignore'})
    for (const sub of ['project', '.engram/manifests']) {
      try {
        execFileSync('cp', ['-r', join(gen, sub), join(dirs.a, sub.split('/').slice(0, -1).join('/') || '.')])
      } catch {
        // a layout without that folder
      }
    }
    git(dirs.a, 'add', '-A')
    git(dirs.a, '-c', 'core.hooksPath=/dev/null', 'commit', '-q', '-m', `Import ${N} memories`)
    const push = engram(dirs.a, envA, 'sync')
    const pull = engram(dirs.b, envB, 'sync')
    const verify = engram(dirs.b, envB, 'verify')
    const listed = engram(dirs.b, envB, 'list', '--limit', '1')
    return {push: push.ms, pull: pull.ms, verify: verify.json, total: listed.json.total, integrated: pull.json.integrated}
  } finally {
    rmSync(root, {recursive: true, force: true})
  }
}

const runs = []
for (let i = 0; i < RUNS; i++) {
  const r = once()
  runs.push(r)
  console.log(`run ${i + 1}: A's sync (push) ${(r.push / 1000).toFixed(2)} s, B's sync (fetch, verify, move: ${r.integrated}) ${(r.pull / 1000).toFixed(2)} s; B lists ${r.total} memories, verify problems ${r.verify.items?.length ?? '?'}`)
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const bad = runs.filter((r) => r.total !== N || (r.verify.items?.length ?? 1) !== 0).length
console.log(`median of ${RUNS}: push ${(median(runs.map((r) => r.push)) / 1000).toFixed(2)} s, pull ${(median(runs.map((r) => r.pull)) / 1000).toFixed(2)} s, both ${(median(runs.map((r) => r.push + r.pull)) / 1000).toFixed(2)} s (${N} new memories)`)
process.exit(bad === 0 ? 0 : 1)
