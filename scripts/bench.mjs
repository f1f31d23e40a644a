#!/usr/bin/env node
// engram's benchmark (issue 5 "Bench", and the vote overhead target of issue 4).
//
//   npm run bench                         # 1k, 10k and 100k memories (~15 min the first time)
//   npm run bench -- --sizes 1k,10k       # a subset
//   npm run bench -- --runs 9             # more runs per median (default 7; rebuild: 5, 2 at 100k)
//
// Generates signed stores under .bench/stores (reused while the generator and parameters
// are unchanged), drives the built CLI (`npm run build` first; it is built when dist/ is
// missing) and writes bench/results.md. Whole-process numbers are wall time of a fresh
// `node bin/run.js …` with the OS page cache warm (one unmeasured run first).
import {execFileSync} from 'node:child_process'
import {cpus, loadavg, totalmem, release} from 'node:os'
import {createHash} from 'node:crypto'
import {existsSync, mkdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {performance} from 'node:perf_hooks'

import {
  ask, BENCH, BIN, buildFts, DIST, buildFtsCli, childEnv, CONFIG_DIR, dirBytes, dist, engram, ensureStore, fmtBytes, fmtMs, fmtStat, forgetStoreState, FTS_SQL,
  ftsCliArgs, ftsQuery, hasTimeV, loadBetterSqlite, memoryFiles, ROOT, snapshotCli, startServe, stats, timed, timedRss, which,
} from './bench-lib.mjs'

const argv = process.argv.slice(2)
const opt = (name, dflt) => {
  const i = argv.indexOf(`--${name}`)
  return i >= 0 ? argv[i + 1] : dflt
}
const SIZES = {
  '1k': {memories: 1000, layout: 'mixed', seed: 1},
  '10k': {memories: 10000, layout: 'single', scope: 'project:big', seed: 1},
  '100k': {memories: 100000, layout: 'single', scope: 'project:big', seed: 1},
}
const sizes = opt('sizes', '1k,10k,100k').split(',').map((s) => s.trim()).filter(Boolean)
for (const s of sizes) {
  if (!SIZES[s]) {
    console.error(`unknown size ${s}; use any of ${Object.keys(SIZES).join(',')}`)
    process.exit(2)
  }
}
const RUNS = Math.max(5, Number(opt('runs', '7')))
/** cold searches are short: more runs for a steadier median (--cold-runs, for a busy machine) */
const COLD_RUNS = Math.max(3, Number(opt('cold-runs', '15')))
/** --rebuild-runs and --incr-rounds shorten the slowest parts on a busy machine */
const REBUILD_RUNS = opt('rebuild-runs') ? Math.max(1, Number(opt('rebuild-runs'))) : undefined
const INCR_ROUNDS = Math.max(1, Math.min(8, Number(opt('incr-rounds', '6'))))
// --parts rebuild,cold,baselines,coldcache,auto,warm,incr,vote,verify: run only these (for working on one)
const PARTS = new Set(opt('parts', 'rebuild,cold,baselines,coldcache,auto,warm,incr,vote,verify').split(','))
const WARM_REQUESTS = 200
/** time allowed for each warm series (engram serve; WarmEngine) before it stops early */
const WARM_BUDGET_MS = 45_000
const started = performance.now()
const log = (m) => process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${m}\n`)

// The same queries for engram and every baseline: common technical words (many hits) and
// rarer ones; plus, per store, three rare words taken from its own titles.
const QUERIES = [
  'deploy staging', 'kubernetes rollback', 'redis cache latency', 'invoice billing', 'quota limit', 'oncall runbook pager',
  'certificate rotation', 'postgres migration timeout', 'webhook retry backoff', 'terraform helm chart',
]
const COMMON_STEMS = [...new Set(readFileSync(join(ROOT, 'scripts', 'gen-store.mjs'), 'utf8').match(/'[a-z ]+'/g).join(' ').replace(/'/g, ' ').split(/\s+/))]
  .filter((w) => w.length >= 3)

function storeQueries(storeDir, files) {
  const rare = []
  for (let i = 0; rare.length < 3 && i < files.length; i += Math.max(1, Math.floor(files.length / 50))) {
    const title = /^title: (.*)$/m.exec(readFileSync(join(storeDir, files[i]), 'utf8'))
    // a made-up word, not a common word with a suffix ("queues")
    const w = title && JSON.parse(title[1]).toLowerCase().split(/[^a-z]+/)
      .find((x) => x.length >= 6 && !COMMON_STEMS.some((c) => x.startsWith(c)) && !rare.includes(x))
    if (w) rare.push(w)
  }
  return [...QUERIES, ...rare]
}

// ---------------------------------------------------------------- preflight

if (!existsSync(join(ROOT, 'dist', 'core', 'index', 'index.js')) || !existsSync(join(ROOT, 'oclif.manifest.json'))) {
  log('dist/ is missing: npm run build')
  execFileSync('npm', ['run', 'build'], {cwd: ROOT, stdio: 'inherit'})
}
snapshotCli()
const load0 = loadavg()
mkdirSync(CONFIG_DIR, {recursive: true})
const notes = []
const rg = which('rg')
if (!rg) notes.push('ripgrep skipped: `rg` is not installed (`apt-get install -y ripgrep`).')
if (!hasTimeV()) {
  console.error('/usr/bin/time is needed for peak memory (apt-get install -y time)')
  process.exit(2)
}
const sqlite = await loadBetterSqlite(log)
if (sqlite.note) notes.push(sqlite.note)
const FTS_QUERY_SCRIPT = join(BENCH, 'fts-query.mjs')
writeFileSync(
  FTS_QUERY_SCRIPT,
  `// written by scripts/bench.mjs: one FTS5 query as a whole process\nimport Database from './node_modules/better-sqlite3/lib/index.js'\n` +
    `const db = new Database(process.argv[2], {readonly: true})\nfor (const r of db.prepare(${JSON.stringify(FTS_SQL)}).all(process.argv[3])) console.log(r.path)\n`,
)

const floor = (env) => stats(Array.from({length: 7}, () => timed(process.execPath, ['-e', '0'], {env}).ms))
const machine = {
  cores: cpus().length,
  cpu: cpus()[0]?.model?.trim() ?? 'unknown',
  mem: fmtBytes(totalmem()),
  node: process.version,
  git: execFileSync('git', ['--version'], {encoding: 'utf8'}).trim().replace('git version ', ''),
  kernel: release(),
  date: new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC',
  floor: floor(childEnv()),
  floorCa: process.env.NODE_EXTRA_CA_CERTS ? floor({...childEnv(), NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS}) : undefined,
  // the CLI's own start (oclif with its manifest, no command work): the floor of every command
  cli: stats(Array.from({length: 7}, () => engram(['--version']).ms)),
}

// ---------------------------------------------------------------- per size

const results = {}
for (const size of sizes) {
  const spec = SIZES[size]
  const r = (results[size] = {spec, rows: {}})
  try {
    await benchSize(size, spec, r)
  } catch (error) {
    log(`${size}: ${error.stack ?? error}`)
    r.error = String(error.message ?? error).split('\n')[0]
    notes.push(`${size}: stopped early: ${r.error}`)
  }
}

async function benchSize(size, spec, r) {
  const store = await ensureStore(`${size}-${spec.layout}`, spec, async (dir) => {
    if (spec.layout !== 'mixed') return {}
    // an agent session: its tenant (the largest), org and every project
    const files = memoryFiles(dir)
    const perTenant = new Map()
    for (const f of files) if (f.startsWith('tenant/')) perTenant.set(f.split('/')[1], (perTenant.get(f.split('/')[1]) ?? 0) + 1)
    const tenant = [...perTenant].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0][0]
    const projects = [...new Set(files.filter((f) => f.startsWith('project/')).map((f) => f.split('/')[1]))].sort()
    const reads = ['org', ...projects.map((p) => `project:${p}`)]
    const out = engram(['session', 'start', '--base', dir, '--agent', 'bench-agent', '--assigned', `tenant:${tenant}`, ...reads.flatMap((s) => ['--reads', s]), '--json'])
    const session = JSON.parse(out.stdout).id
    return {session, sessionDirs: [`tenant/${tenant}`, 'org', ...projects.map((p) => `project/${p}`)]}
  }, log)
  r.generatedMs = store.generatedMs
  const dir = store.dir
  const scopeFolder = spec.scope ? spec.scope.replace(':', '/') : ''
  const files = memoryFiles(dir, scopeFolder)
  r.files = files.length
  r.markdownBytes = files.reduce((n, f) => n + statSync(join(dir, f)).size, 0)
  r.scopes = new Set(files.map((f) => (f.startsWith('org/') ? 'org' : f.split('/').slice(0, 2).join('/')))).size
  const queries = storeQueries(dir, files)
  r.queries = queries

  const ctx = {size, spec, dir, files, queries, store, r, scopeFolder}
  await benchRebuild(ctx)
  const cases = spec.layout === 'mixed'
    ? [
        {key: 'coldAll', label: `owner view, all ${files.length} memories`, args: [], dirs: [''], env: childEnv()},
        {key: 'coldSession', label: 'agent session', args: [], dirs: store.extra.sessionDirs, env: childEnv({ENGRAM_SESSION: store.extra.session})},
      ]
    : [{key: 'coldAll', label: `one scope (${spec.scope})`, args: ['--scope', spec.scope], dirs: [scopeFolder], env: childEnv()}]
  if (PARTS.has('cold')) benchCold(ctx, cases)
  if (PARTS.has('cold')) benchNoCaches(ctx, cases[0])
  if (PARTS.has('baselines')) benchBaselines(ctx, cases[0])
  if (PARTS.has('coldcache') && size !== '1k') benchColdCache(ctx, cases[0])
  if (PARTS.has('auto') && spec.scope) await benchAutoServe(ctx)
  if (PARTS.has('warm')) await benchWarm(ctx)
  if (size === '10k') {
    if (PARTS.has('incr')) await benchIncremental(dir, spec, r)
    if (PARTS.has('vote')) await benchVote(dir, spec, r)
    if (PARTS.has('verify')) benchVerify(dir, r)
  }
}

/**
 * `engram verify` of the whole store as a whole process (issue 3: 10,000 files in under
 * 3 s): without the verified-signature cache (removed before each run), and with it.
 */
function benchVerify(dir, r) {
  const cacheDir = join(CONFIG_DIR, 'cache', 'verified')
  const cold = []
  const warm = []
  for (let i = 0; i < 5; i++) {
    log(`verify ${i + 1}/5`)
    rmSync(cacheDir, {recursive: true, force: true})
    const c = engram(['verify', '--base', dir, '--json'], {env: childEnv()})
    if (c.status !== 0) throw new Error(`verify failed: ${c.stdout.slice(0, 300)}${c.stderr.slice(0, 300)}`)
    cold.push(c.ms)
    warm.push(engram(['verify', '--base', dir, '--json'], {env: childEnv()}).ms)
  }
  r.rows.verifyCold = stats(cold)
  r.rows.verifyWarm = stats(warm)
}

/**
 * Repeat `fn(i)` up to `n` times, but stop once `budgetMs` is spent (after at least
 * `min` runs): at 100k a warm request may cost a second, and the run must stay bounded.
 */
async function bounded(n, budgetMs, min, fn) {
  const t = []
  const t0 = performance.now()
  for (let i = 0; i < n && (i < min || performance.now() - t0 < budgetMs); i++) {
    const a = performance.now()
    await fn(i)
    t.push(performance.now() - a)
  }
  return t
}

/** Full rebuild as a whole process (`engram index rebuild`), with its peak memory. */
async function benchRebuild({size, dir, r}) {
  const runs = !PARTS.has('rebuild') ? 1 : REBUILD_RUNS ?? (size === '100k' ? 2 : 5)
  const rb = []
  for (let i = 0; i < runs; i++) {
    log(`${size}: index rebuild ${i + 1}/${runs}`)
    rb.push(timedRss(process.execPath, [BIN, 'index', 'rebuild', '--base', dir, '--json']))
  }
  if (PARTS.has('rebuild')) {
    r.rows.rebuild = stats(rb.map((x) => x.ms))
    r.rows.rebuildRss = stats(rb.map((x) => x.rssBytes))
  }
  const indexDir = join(dir, '.engram', 'index')
  r.indexBytes = dirBytes(indexDir) - (existsSync(join(indexDir, '.gitignore')) ? statSync(join(indexDir, '.gitignore')).size : 0)
}

/**
 * Cold `engram search` as a whole process; every run must be served hits. The main case
 * alternates with ripgrep over the same files and query (engram, rg, engram, rg, …), so
 * that drift in the machine's speed hits both alike; the ratio is taken run by run.
 */
function benchCold({size, dir, files, queries, r}, cases) {
  const runs = opt('cold-runs') ? COLD_RUNS : Math.max(RUNS, COLD_RUNS)
  for (const c of cases) {
    if (c.key === 'coldSession') c.memories = c.dirs.reduce((n, d) => n + files.filter((f) => f.startsWith(`${d}/`)).length, 0)
    log(`${size}: cold engram search, ${c.label}${rg && c === cases[0] ? ', paired with ripgrep' : ''}`)
    const searchOnce = (q) => {
      const t = engram(['search', q, '--base', dir, '--limit', '10', '--json', ...c.args], {env: c.env})
      return {ms: t.ms, hits: JSON.parse(t.stdout).hits.length}
    }
    const paths = c.dirs.map((d) => (d ? join(dir, d) : dir))
    const rgOnce = (q) => timed(rg, ['-il', '--glob', '*.md', ...q.split(/\s+/).flatMap((w) => ['-e', w]), '--', ...paths], {allowExit: [0, 1]}).ms
    searchOnce(queries[0])
    const out = []
    const rgMs = []
    for (let i = 0; i < runs; i++) {
      const q = queries[i % queries.length]
      out.push(searchOnce(q))
      if (rg && c === cases[0]) rgMs.push(rgOnce(q))
    }
    if (out.every((x) => x.hits === 0)) throw new Error(`engram search served no hit for any query on ${dir}: the store's memory is not served (unsigned?)`)
    r.rows[c.key] = {...stats(out.map((x) => x.ms)), label: c.label, memories: c.memories, hits: stats(out.map((x) => x.hits)).p50}
    if (rgMs.length) {
      r.rows.rgPaired = stats(rgMs)
      r.rows.rgRatio = stats(out.map((x, i) => x.ms / rgMs[i]))
    }
  }
}

/**
 * The first search on a machine that has none of engram's caches for this store (a fresh
 * clone with its index built, or after deleting the caches): each run starts without the
 * config folder's cache/ (verified manifests, root keys, V8 code) and the index's record
 * of scope trees, so it lists trees with git, reads the keyring's roots from history and
 * verifies the manifest's signature.
 */
function benchNoCaches({size, dir, queries, r}, main) {
  const runs = []
  for (let i = 0; i < 5; i++) {
    rmSync(join(CONFIG_DIR, 'cache'), {recursive: true, force: true})
    rmSync(join(dir, '.engram', 'index', 'trees'), {force: true})
    log(`${size}: search without caches, run ${i + 1}/5`)
    runs.push(engram(['search', queries[i % queries.length], '--base', dir, '--limit', '10', '--json', ...main.args], {env: main.env}).ms)
  }
  r.rows.noCaches = stats(runs)
}

/**
 * The same search and ripgrep with the store's files out of the OS page cache (evicted
 * with posix_fadvise(DONTNEED) before each run, through python3): the first search of the
 * day, or after other work pushed the store out of memory. Programs stay cached.
 */
function benchColdCache({size, dir, queries, r}, main) {
  if (!which('python3')) return notes.push('coldcache: python3 not found; page-cache runs skipped')
  const evict = () =>
    execFileSync('python3', ['-c', [
      'import os,sys',
      'for root in sys.argv[1:]:',
      '  for dp,dn,fn in os.walk(root):',
      '    for f in fn:',
      '      try:',
      '        fd=os.open(os.path.join(dp,f),os.O_RDONLY); os.posix_fadvise(fd,0,0,os.POSIX_FADV_DONTNEED); os.close(fd)',
      '      except OSError: pass',
    ].join('\n'), dir])
  const paths = main.dirs.map((d) => (d ? join(dir, d) : dir))
  const words = (q) => q.split(/\s+/).flatMap((w) => ['-e', w])
  const engramRuns = []
  const rgRuns = []
  for (let i = 0; i < 5; i++) {
    const q = queries[i % queries.length]
    log(`${size}: page cache evicted, run ${i + 1}/5`)
    evict()
    engramRuns.push(engram(['search', q, '--base', dir, '--limit', '10', '--json', ...main.args], {env: main.env}).ms)
    if (rg) {
      evict()
      rgRuns.push(timed(rg, ['-il', '--glob', '*.md', ...words(q), '--', ...paths], {allowExit: [0, 1]}).ms)
    }
  }
  r.rows.pcSearch = stats(engramRuns)
  if (rgRuns.length) r.rows.pcRg = stats(rgRuns)
}

/** grep, ripgrep and SQLite FTS5 on the files and queries of the main cold case. */
function benchBaselines({size, spec, dir, files, queries, r}, main) {
  const paths = main.dirs.map((d) => (d ? join(dir, d) : dir))
  const words = (q) => q.split(/\s+/).flatMap((w) => ['-e', w])
  const base = (mk) => {
    mk(queries[0])
    const runs = Array.from({length: RUNS}, (_, i) => {
      const t = mk(queries[i % queries.length])
      return {ms: t.ms, files: t.stdout.split('\n').filter(Boolean).length}
    })
    return {...stats(runs.map((x) => x.ms)), matched: stats(runs.map((x) => x.files)).p50}
  }
  log(`${size}: grep -ril`)
  r.rows.grep = base((q) => timed('grep', ['-ril', '--include=*.md', '--exclude-dir=.git', '--exclude-dir=.engram', ...words(q), '--', ...paths], {allowExit: [0, 1]}))
  if (rg) {
    log(`${size}: ripgrep`)
    r.rows.rg = base((q) => timed(rg, ['-il', '--glob', '*.md', ...words(q), '--', ...paths], {allowExit: [0, 1]}))
  }
  if (!sqlite.Database && !sqlite.cli) return
  const ftsFiles = spec.layout === 'mixed' ? memoryFiles(dir) : files
  if (sqlite.cli) {
    log(`${size}: SQLite FTS5 through the sqlite3 shell (build over ${ftsFiles.length} files)`)
    mkdirSync(join(BENCH, 'fts'), {recursive: true})
    const db = join(BENCH, 'fts', `${size}.db`)
    r.rows.ftsBuild = {ms: buildFtsCli(db, dir, ftsFiles)}
    r.ftsBytes = statSync(db).size
    r.rows.ftsCold = base((q) => timed('sqlite3', ftsCliArgs(db, ftsQuery(q))))
    return
  }
  log(`${size}: SQLite FTS5 (build over ${ftsFiles.length} files)`)
  mkdirSync(join(BENCH, 'fts'), {recursive: true})
  const db = join(BENCH, 'fts', `${size}.db`)
  r.rows.ftsBuild = {ms: buildFts(sqlite.Database, db, dir, ftsFiles)}
  r.ftsBytes = statSync(db).size
  r.rows.ftsCold = base((q) => timed(process.execPath, [FTS_QUERY_SCRIPT, db, ftsQuery(q)], {env: childEnv()}))
  const h = new sqlite.Database(db, {readonly: true})
  const st = h.prepare(FTS_SQL)
  for (const q of queries) st.all(ftsQuery(q))
  const t = []
  for (let i = 0; i < WARM_REQUESTS; i++) {
    const t0 = performance.now()
    st.all(ftsQuery(queries[i % queries.length]))
    t.push(performance.now() - t0)
  }
  h.close()
  r.rows.ftsWarm = stats(t)
}

/**
 * The warm path as a session meets it: no server runs; the first `engram search` of a
 * session (with its token) answers in-process and starts `engram serve` in the background
 * (the store is over the size, src/core/serve/serve-client.ts); the later searches are
 * whole processes answered by that server. The server stops itself (idle timeout, 3 s
 * here) before the next round.
 */
async function benchAutoServe({size, spec, dir, queries, r}) {
  const root = realpathSync(dir)
  const sock = join(CONFIG_DIR, 'private', `serve-${createHash('sha256').update(root).digest('hex').slice(0, 16)}.sock`)
  if (existsSync(sock)) return notes.push(`${size}: a server already listens on ${sock}; the first-search rows are not measured`)
  const first = []
  const ready = []
  const later = []
  for (let round = 0; round < 3; round++) {
    log(`${size}: first search of a session starts engram serve, round ${round + 1}/3`)
    const s = JSON.parse(engram(['session', 'start', '--base', dir, '--agent', 'bench-auto', '--assigned', spec.scope, '--json']).stdout)
    const env = childEnv({ENGRAM_SESSION: s.id, ENGRAM_SESSION_TOKEN: s.token, ENGRAM_AUTOSERVE_IDLE: '3'})
    const search = (q) => engram(['search', q, '--base', dir, '--scope', spec.scope, '--limit', '10', '--json'], {env})
    const t0 = performance.now()
    const f = search(queries[round % queries.length])
    if (JSON.parse(f.stdout).hits.length === 0) throw new Error(`the first session search served no hit: ${f.stderr.slice(0, 300)}`)
    first.push(f.ms)
    while (!existsSync(sock) && performance.now() - t0 < 120_000) await new Promise((res) => setTimeout(res, 20))
    if (!existsSync(sock)) throw new Error('the first search did not start engram serve within 120 s')
    ready.push(performance.now() - t0)
    for (let i = 0; i < 10; i++) {
      const t = search(queries[(round + i) % queries.length])
      if (!existsSync(sock)) throw new Error('engram serve went away during the later searches')
      later.push(t.ms)
    }
    const t1 = performance.now()
    while (existsSync(sock) && performance.now() - t1 < 60_000) await new Promise((res) => setTimeout(res, 100))
  }
  r.rows.autoFirst = stats(first)
  r.rows.autoReady = stats(ready)
  r.rows.autoLater = stats(later)
}

/**
 * Warm queries through `engram serve` over its socket, one connection per request; then
 * the same queries in-process through WarmEngine (the index alone, no serving gate), and
 * one `git ls-tree` (which every warm search runs to learn whether a scope moved).
 */
async function benchWarm({size, spec, dir, files, queries, r}) {
  log(`${size}: engram serve`)
  // a session reading the benched scope (the server answers sessions only)
  const server = await startServe(dir, spec.scope)
  try {
    r.rows.serveReady = {ms: server.readyMs}
    const req = (q) => ({op: 'search', query: q, limit: 10, ...(spec.scope ? {scope: spec.scope} : {})})
    await ask(server.sock, req(queries[0]), 120_000)
    let served = 0
    const t = await bounded(WARM_REQUESTS, WARM_BUDGET_MS, 20, async (i) => {
      const res = await ask(server.sock, req(queries[i % queries.length]), 120_000)
      if (!res.ok) throw new Error(`engram serve answered an error: ${JSON.stringify(res.error)}`)
      served += res.hits.length
    })
    if (served === 0) throw new Error('engram serve served no hit')
    r.rows.warm = stats(t)
  } finally {
    await server.stop()
  }
  const [{Store}, {WarmEngine}] = await Promise.all([dist('core/store/store.js'), dist('core/index/index.js')])
  const engine = new WarmEngine(new Store(dir, dir))
  const scopes = spec.scope ? [spec.scope] : [...new Set(files.map((f) => (f.startsWith('org/') ? 'org' : f.split('/').slice(0, 2).join(':'))))]
  try {
    await engine.search(queries[0], {scopes, limit: 10})
    r.rows.engine = stats(await bounded(WARM_REQUESTS, WARM_BUDGET_MS, 20, (i) => engine.search(queries[i % queries.length], {scopes, limit: 10})))
  } finally {
    engine.close()
  }
  r.rows.lsTree = stats(Array.from({length: 20}, () => timed('git', ['-C', dir, 'ls-tree', 'HEAD']).ms))
}

/**
 * Index upkeep after one accepted write, on a clone of the 10k store (the generated store
 * is never changed): a real write through the CLI (vote, proposal), `review accept`
 * (signs, re-signs the manifest, commits), then the first `engram search` after the commit
 * — which applies the change to the delta file — against the same search again.
 */
async function benchIncremental(dir, spec, r) {
  log('10k: incremental update after accepted writes (clone)')
  const clone = join(BENCH, 'tmp', 'incr-10k')
  forgetStoreState(clone)
  rmSync(clone, {recursive: true, force: true})
  mkdirSync(join(BENCH, 'tmp'), {recursive: true})
  execFileSync('git', ['clone', '-q', dir, clone])
  try {
    // a clone is a new store to this machine: its root is pinned by fingerprint, as a user does (README "Clones")
    const root = JSON.parse(engram(['keys', 'list', '--base', dir, '--json']).stdout).items.find((k) => k.root)
    if (!root) throw new Error('the generated store names no root key')
    engram(['keys', 'trust', '--root', root.fingerprint, '--base', clone])
    engram(['index', 'rebuild', '--base', clone, '--json'])
    const session = JSON.parse(engram(['session', 'start', '--base', clone, '--agent', 'bench-agent', '--assigned', spec.scope, '--json']).stdout).id
    const agent = childEnv({ENGRAM_SESSION: session})
    const [{Store}, {refresh}] = await Promise.all([dist('core/store/store.js'), dist('core/index/index.js')])
    const store = new Store(clone, clone)
    const acceptOne = (k) => {
      const word = `zorbiquant${'abcdefghijklmnop'[k]}x`
      const text = `Bench note ${k}: the ${word} batch job for the analytics warehouse now runs nightly at 02:00 UTC.\n` +
        'It exports the invoice table to the bucket and posts a summary to the data channel.\n'
      const w = JSON.parse(engram(['write', `bench/note-${k}.md`, '--base', clone, '--scope', spec.scope, '--json'], {env: agent, input: text}).stdout)
      if (w.status !== 'pending') throw new Error(`bench write ${k} was ${w.status}: ${w.vote?.summary}`)
      const a = engram(['review', 'accept', w.proposal, '--base', clone, '--digest', w.digest, '--json'])
      return {word, acceptMs: a.ms, path: `bench/note-${k}.md`}
    }
    const whole = []
    for (let k = 0; k < INCR_ROUNDS; k++) {
      const {word, acceptMs, path} = acceptOne(k)
      const search = () => engram(['search', word, '--base', clone, '--scope', spec.scope, '--limit', '10', '--json'])
      const first = search()
      if (!JSON.parse(first.stdout).hits.some((h) => h.path === path)) throw new Error(`the accepted write ${path} was not found by the next search: ${first.stdout.slice(0, 400)} ${first.stderr.slice(0, 400)}`)
      // three plain searches per write: whole-process times spread by tens of ms
      const plain = stats([search().ms, search().ms, search().ms]).p50
      whole.push({first: first.ms, plain, accept: acceptMs})
    }
    const inproc = []
    for (let k = INCR_ROUNDS; k < 2 * INCR_ROUNDS; k++) {
      acceptOne(k)
      let t0 = performance.now()
      await refresh(store, [spec.scope])
      const upd = performance.now() - t0
      t0 = performance.now()
      await refresh(store, [spec.scope])
      inproc.push({update: upd, noop: performance.now() - t0})
    }
    r.rows.incrFirst = stats(whole.map((x) => x.first))
    r.rows.incrPlain = stats(whole.map((x) => x.plain))
    r.rows.incrAdded = stats(whole.map((x) => x.first - x.plain))
    r.rows.incrAccept = stats(whole.map((x) => x.accept))
    r.rows.incrRefresh = stats(inproc.map((x) => x.update))
    r.rows.incrNoop = stats(inproc.map((x) => x.noop))
  } finally {
    forgetStoreState(clone)
    rmSync(clone, {recursive: true, force: true})
  }
}

/**
 * Vote overhead (issue 4), in a process of its own (scripts/bench-vote.mjs): `engram mcp` is
 * one, holding only its store's loaded indexes, not the heap of every series before it.
 */
async function benchVote(dir, spec, r) {
  log('10k: vote overhead (a process of its own)')
  const out = join(BENCH, 'vote-result.json')
  rmSync(out, {force: true})
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'bench-vote.mjs'), '--store', dir, '--scope', spec.scope, '--dist', DIST, '--out', out], {stdio: ['ignore', 'inherit', 'inherit'], env: {...process.env, NODE_OPTIONS: ''}})
  const got = JSON.parse(readFileSync(out, 'utf8'))
  Object.assign(r.rows, got.rows)
  for (const k of ['voteWarmServed', 'voteWarmUpMs', 'votePassed', 'voteWithNeighbours']) r[k] = got[k]
}

// ---------------------------------------------------------------- report

const totalS = (performance.now() - started) / 1000
const md = report()
process.stdout.write(md)
mkdirSync(join(ROOT, 'bench'), {recursive: true})
if (sizes.length === Object.keys(SIZES).length || argv.includes('--write')) {
  writeFileSync(join(ROOT, 'bench', 'results.md'), md)
  log('wrote bench/results.md')
} else {
  writeFileSync(join(BENCH, 'results-partial.md'), md)
  log('a partial run: wrote .bench/results-partial.md (bench/results.md is written by a run of all sizes, or with --write)')
}
log(`done in ${totalS.toFixed(0)} s`)

function report() {
  const R = (size) => results[size]?.rows ?? {}
  const cols = sizes.filter((s) => results[s])
  const cell = (size, fn) => {
    try {
      const v = fn(R(size), results[size])
      return v ?? '–'
    } catch {
      return '–'
    }
  }
  const line = (label, fn) => `| ${label} | ${cols.map((s) => cell(s, fn)).join(' | ')} |`
  const desc = (s) => {
    const x = results[s]
    if (!x?.files) return s
    return x.spec.layout === 'mixed' ? `${s}: ${x.files} memories, ${x.scopes} scopes` : `${s}: ${x.files} memories, one scope`
  }
  const p = (row) => (row ? fmtStat(row) : undefined)
  const pp = (row) => (row ? `${fmtMs(row.p50)} / ${fmtMs(row.p95)}${row.n < WARM_REQUESTS && row.n >= 20 ? ` (n=${row.n})` : ''}` : undefined)
  const out = []
  out.push('# engram benchmark results', '')
  out.push(`Produced by \`npm run bench${sizes.length === 3 ? '' : ` -- --sizes ${sizes.join(',')}`}\` (scripts/bench.mjs) in ${(totalS / 60).toFixed(1)} min.`, '')
  out.push(
    `Machine: ${machine.cores} cores (${machine.cpu}), ${machine.mem}, Linux ${machine.kernel}; Node ${machine.node}; git ${machine.git}; ${machine.date}. ` +
      `Node's own start (\`node -e 0\`): ${fmtMs(machine.floor.p50)}` +
      (machine.floorCa ? ` (${fmtMs(machine.floorCa.p50)} with this sandbox's NODE_EXTRA_CA_CERTS, which the bench removes from its children)` : '') +
      `; \`engram --version\` (the CLI's start, no command work): ${fmtMs(machine.cli.p50)}. ` +
      `Load average (1 min) at start / end: ${load0[0].toFixed(1)} / ${loadavg()[0].toFixed(1)} — other work on the machine inflates and spreads the times.`,
    '',
  )
  out.push(
    'Times are medians with (min–max, n = runs). "Whole process" is the wall time of a fresh `node bin/run.js …` with the OS page cache warm ' +
      '(one unmeasured run first). Warm queries go to `engram serve` over its socket, one connection per request as `engram search` makes them, ' +
      `up to ${WARM_REQUESTS} requests cycling over the queries (fewer when a series passes ${WARM_BUDGET_MS / 1000} s; n is shown). Every store is signed and its memory is served (each search run is checked for hits).`,
    '',
  )
  out.push(`| | ${cols.map(desc).join(' | ')} |`, `|---|${cols.map(() => '---').join('|')}|`)
  out.push(line('store generation (once, reused)', (r, x) => (x.generatedMs ? fmtMs(x.generatedMs) : undefined)))
  out.push(line('markdown on disk', (r, x) => fmtBytes(x.markdownBytes)))
  out.push(line('**full rebuild**, whole process', (r) => p(r.rebuild)))
  out.push(line('rebuild peak memory (max RSS)', (r) => r.rebuildRss && `${fmtBytes(r.rebuildRss.p50)} (max ${fmtBytes(r.rebuildRss.max)})`))
  out.push(line('index bytes', (r, x) => x.indexBytes && fmtBytes(x.indexBytes)))
  out.push(line('**cold `engram search`**, whole process', (r) => r.coldAll && `${p(r.coldAll)}; ${r.coldAll.label}`))
  out.push(line('cold `engram search`, agent session', (r) => r.coldSession && `${p(r.coldSession)}; reads ${r.coldSession.memories} memories`))
  out.push(line('ripgrep, run alternately with the cold search above (same query)', (r) => r.rgPaired && p(r.rgPaired)))
  out.push(line('cold search ÷ ripgrep, run by run', (r) => r.rgRatio && `${r.rgRatio.p50.toFixed(2)} (${r.rgRatio.min.toFixed(2)}–${r.rgRatio.max.toFixed(2)})`))
  out.push(line('cold `engram search` with none of its caches (first search on this machine)', (r) => p(r.noCaches)))
  out.push(line('ripgrep `rg -il -e w1 -e w2`, same files', (r) => r.rg && `${p(r.rg)}; ${r.rg.matched} files match`))
  out.push(line('`grep -ril -e w1 -e w2`, same files', (r) => r.grep && `${p(r.grep)}; ${r.grep.matched} files match`))
  out.push(line('SQLite FTS5: one query as a whole process', (r) => p(r.ftsCold)))
  out.push(line('SQLite FTS5: query in-process p50 / p95', (r) => pp(r.ftsWarm)))
  out.push(line('SQLite FTS5: build (in-process) / size', (r, x) => r.ftsBuild && `${fmtMs(r.ftsBuild.ms)} / ${fmtBytes(x.ftsBytes)}`))
  out.push(line('cold `engram search`, store out of the page cache', (r) => p(r.pcSearch)))
  out.push(line('ripgrep, store out of the page cache', (r) => p(r.pcRg)))
  out.push(line('**first `engram search` of a session**, whole process (answers in-process, starts `engram serve`)', (r) => p(r.autoFirst)))
  out.push(line('from that search\'s start until the server listens (indexes loaded)', (r) => p(r.autoReady)))
  out.push(line('**later searches of the session**, whole process, answered by the server', (r) => p(r.autoLater)))
  out.push(line('**warm query** (`engram serve`, socket) p50 / p95', (r) => pp(r.warm)))
  out.push(line('`engram serve` start to first answer', (r) => r.serveReady && fmtMs(r.serveReady.ms)))
  out.push(line('in-process WarmEngine.search (index only) p50 / p95', (r) => pp(r.engine)))
  out.push(line('one `git ls-tree HEAD` (what a search runs once after HEAD moves)', (r) => r.lsTree && fmtMs(r.lsTree.p50)))
  out.push('')
  const ten = R('10k')
  if (ten.incrFirst || ten.vote) {
    out.push('### At 10k memories', '')
    out.push('| | median (min–max, n) |', '|---|---|')
    if (ten.incrFirst) {
      out.push(`| \`review accept\` of one write, whole process (context) | ${p(ten.incrAccept)} |`)
      out.push(`| first \`engram search\` after the accept's commit | ${p(ten.incrFirst)} |`)
      out.push(`| the same search again (index fresh; median of 3 per write) | ${p(ten.incrPlain)} |`)
      out.push(`| whole-process difference (first − again, per write) | ${p(ten.incrAdded)} |`)
      out.push(`| **index upkeep after one accepted write**: in-process \`refresh()\` of the scope after the accept's commit (git ls-tree, diff-tree, cat-file, parse, write the delta) | ${p(ten.incrRefresh)} |`)
      out.push(`| the same \`refresh()\` with nothing to do (HEAD unmoved: the recorded scope trees, no git) | ${p(ten.incrNoop)} |`)
    }
    if (ten.verifyCold) {
      out.push(`| \`engram verify\` of the whole store, whole process, no signature cache | ${p(ten.verifyCold)} |`)
      out.push(`| the same with the verified-signature cache filled | ${p(ten.verifyWarm)} |`)
    }
    if (ten.vote) {
      const v = results['10k']
      out.push(`| **vote overhead** p50 / p95: normalise + redact + flags + semantic, provenance, delivery, learned, neighbours from the 10k scope's loaded index (no git), as \`engram mcp\` votes (the text read in its reader thread during the lookup), every neighbour met for the first time | ${pp(ten.vote)} |`)
      out.push(`| of which the neighbour lookup (the write's 12 rarest words over the loaded index, read, parse and verify 8 files) p50 / p95 | ${pp(ten.voteLookup)} |`)
      out.push(`| the rest: redaction, the comparison with the neighbours, and what the reader thread had not finished by then p50 / p95 | ${pp(ten.voteChecks)} |`)
      out.push(`| the same 600 writes again at the same HEAD, every neighbour seen once before by the process (the warm gate's verdicts and parses, the semantic analyses kept) p50 / p95 | ${pp(ten.voteAgain)} |`)
      if (ten.voteWarmed) {
        out.push(`| **after \`engram mcp\`'s warm-up** (${v.voteWarmServed} memories served and analysed in ${fmtMs(v.voteWarmUpMs)}, in slices while idle), 600 writes never voted before p50 / p95 | ${pp(ten.voteWarmed)} |`)
      }
      if (ten.voteOneThread) {
        out.push(`| the same, 600 other writes with the text read in the same thread as the lookup (no reader thread: the CPU a vote costs, and its time on one core) p50 / p95 | ${pp(ten.voteOneThread)} |`)
      }
      out.push(`| neighbour lookup as \`engram write\` wires it (one-shot: the scope's postings file, 8 files read and verified, keyring, each time) p50 / p95 | ${pp(ten.voteWired)} |`)
      out.push(`| votes that passed / had neighbours | ${(100 * v.votePassed).toFixed(0)} % / ${(100 * v.voteWithNeighbours).toFixed(0)} % |`)
    }
    out.push('')
  }
  out.push('### Targets', '')
  out.push('| target | measured | |', '|---|---|---|')
  const verdict = (ok) => (ok === undefined ? 'not measured' : ok ? 'pass' : 'FAIL')
  const t = (label, measured, ok) => out.push(`| ${label} | ${measured ?? '–'} | ${verdict(measured === undefined ? undefined : ok)} |`)
  const one = R('1k')
  const hk = R('100k')
  t(`cold search, 1k: agent session (${one.coldSession?.memories ?? '?'} memories), no server, p50 ≤ 0.2 s`, one.coldSession && fmtMs(one.coldSession.p50), one.coldSession?.p50 <= 200)
  t('first search of a 10k scope (answers, starts the server) ≤ 0.8 s', ten.autoFirst && fmtMs(ten.autoFirst.p50), ten.autoFirst?.p50 <= 800)
  t('every later search in that session ≤ 100 ms, whole process', ten.autoLater && fmtMs(ten.autoLater.p50), ten.autoLater?.p50 <= 100)
  t('every later search in that session ≤ 2 ms in the server (socket request, p50)', ten.warm && fmtMs(ten.warm.p50), ten.warm?.p50 <= 2)
  t('warm query at 100k ≤ 20 ms p50 in the server', hk.warm && fmtMs(hk.warm.p50), hk.warm?.p50 <= 20)
  t('index upkeep after one accept at 10k ≤ 100 ms, no whole-scope rewrite (in-process refresh: a delta file)', ten.incrRefresh && fmtMs(ten.incrRefresh.p50), ten.incrRefresh?.p50 <= 100)
  t('rebuild 10k ≤ 4 s', ten.rebuild && fmtMs(ten.rebuild.p50), ten.rebuild?.p50 <= 4000)
  t('rebuild 100k ≤ 60 s', hk.rebuild && fmtMs(hk.rebuild.p50), hk.rebuild?.p50 <= 60000)
  const peak = Math.max(...cols.map((s) => R(s).rebuildRss?.max ?? 0))
  t('rebuild peak memory under 2 GB', peak ? fmtBytes(peak) : undefined, peak < 2e9)
  t('vote overhead at 10k (neighbours from a loaded index) ≤ 2 ms p50, every neighbour met for the first time', ten.vote && pp(ten.vote), ten.vote?.p50 <= 2)
  t('the same, after `engram mcp`\'s warm-up (600 writes never voted before)', ten.voteWarmed && pp(ten.voteWarmed), ten.voteWarmed?.p50 <= 2)
  t('engram verify, 10k files, no signature cache: < 3 s', ten.verifyCold && fmtMs(ten.verifyCold.p50), ten.verifyCold?.p50 < 3000)
  out.push('')
  if (notes.length) out.push('Notes:', '', ...notes.map((n) => `- ${n}`), '')
  const q = results[cols[0]]?.queries
  if (q) out.push(`Queries (each an OR of its words; grep and rg get one \`-e\` per word; FTS5 gets \`"w1" OR "w2"\`): ${q.map((x) => `\`${x}\``).join(', ')} (the last three are rare words from each store's own titles).`, '')
  return `${out.join('\n')}\n`
}
