// Helpers for scripts/bench.mjs: statistics, timing child processes, generated stores,
// the warm server's socket, the vote pipeline and the SQLite FTS5 baseline. Nothing here
// is part of engram itself; it drives the built CLI (bin/run.js) and dist/.
import {execFileSync, spawn, spawnSync} from 'node:child_process'
import {createHash, randomBytes} from 'node:crypto'
import {cpSync, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync} from 'node:fs'
import {createConnection} from 'node:net'
import {dirname, join, resolve} from 'node:path'
import {performance} from 'node:perf_hooks'
import {fileURLToPath, pathToFileURL} from 'node:url'

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
export const BENCH = join(ROOT, '.bench')
/** The CLI the bench drives: the repository's build, or a snapshot of it (see snapshotCli). */
export let BIN = join(ROOT, 'bin', 'run.js')
export let DIST = join(ROOT, 'dist')
/** One owner key for every generated store, kept out of the user's ~/.config/engram. */
export const CONFIG_DIR = join(BENCH, 'config')
// the in-process parts (warm engine, vote, neighbour lookup) read the same pins and keys as the CLI children
process.env.ENGRAM_CONFIG_DIR = CONFIG_DIR

export const dist = (rel) => import(pathToFileURL(join(DIST, rel)).href)

/** Drive the built CLI at `dir` (a snapshot made by snapshotCli in the parent bench process). */
export function useDist(dir) {
  DIST = dir
  BIN = join(dir, '..', 'bin', 'run.js')
}

/**
 * Copy the built CLI (dist/, bin/, the oclif manifest, package.json; node_modules linked)
 * to .bench/cli and drive that copy, so that a `npm run build` elsewhere in the checkout
 * during a 15-minute run cannot swap or delete the code under measurement.
 */
export function snapshotCli() {
  const snap = join(BENCH, 'cli')
  rmSync(snap, {recursive: true, force: true})
  mkdirSync(snap, {recursive: true})
  for (const f of ['dist', 'bin', 'oclif.manifest.json', 'package.json']) cpSync(join(ROOT, f), join(snap, f), {recursive: true})
  symlinkSync(join(ROOT, 'node_modules'), join(snap, 'node_modules'), 'dir')
  BIN = join(snap, 'bin', 'run.js')
  DIST = join(snap, 'dist')
  return snap
}

/**
 * The environment of every child: the bench's config folder, no session or store from
 * the caller's shell, and no NODE_EXTRA_CA_CERTS (this sandbox sets it and it adds
 * ~50 ms to every Node start; a user's machine does not have it — the floor with and
 * without it is printed beside the results).
 */
export function childEnv(extra = {}) {
  const env = {...process.env, ENGRAM_CONFIG_DIR: CONFIG_DIR, ENGRAM_PASSPHRASE_FILE: benchPassphraseFile(), ...extra}
  for (const k of ['ENGRAM_SESSION', 'ENGRAM_BASE', 'ENGRAM_KEY', 'NODE_EXTRA_CA_CERTS', 'NODE_OPTIONS']) if (!(k in extra)) delete env[k]
  return env
}

/**
 * The bench's owner key is encrypted like any other (README: unlocking in scripts): its
 * passphrase is a random line in a 0600 file in the bench's own config folder.
 */
function benchPassphraseFile() {
  const file = join(CONFIG_DIR, 'passphrase')
  if (!existsSync(file)) {
    mkdirSync(CONFIG_DIR, {recursive: true, mode: 0o700})
    writeFileSync(file, `${randomBytes(24).toString('base64')}\n`, {mode: 0o600})
  }
  return file
}

// ---------------------------------------------------------------- statistics

export function quantile(sorted, q) {
  if (sorted.length === 0) return NaN
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))
  return sorted[i]
}

/** median (p50), p95, min, max, n of a list of numbers */
export function stats(values) {
  const s = [...values].sort((a, b) => a - b)
  const mid = s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
  return {p50: mid, p95: quantile(s, 0.95), min: s[0], max: s[s.length - 1], n: s.length}
}

export function fmtMs(ms) {
  if (!Number.isFinite(ms)) return '–'
  const a = Math.abs(ms)
  if (a >= 1000) return `${(ms / 1000).toFixed(2)} s`
  if (a >= 100) return `${ms.toFixed(0)} ms`
  if (a >= 10) return `${ms.toFixed(1)} ms`
  return `${ms.toFixed(2)} ms`
}

export function fmtBytes(n) {
  if (n >= 1 << 30) return `${(n / (1 << 30)).toFixed(2)} GiB`
  if (n >= 1 << 20) return `${(n / (1 << 20)).toFixed(1)} MiB`
  if (n >= 1 << 10) return `${(n / (1 << 10)).toFixed(0)} KiB`
  return `${n} B`
}

/** "p50 (min–max, n=7)" */
export function fmtStat(s, fmt = fmtMs) {
  return `${fmt(s.p50)} (${fmt(s.min)}–${fmt(s.max)}, n=${s.n})`
}

// ---------------------------------------------------------------- processes

/** Wall time of one child process, in ms; throws on a non-zero exit unless allowed. */
export function timed(cmd, args, {env = childEnv(), cwd = ROOT, input, allowExit = [0]} = {}) {
  const t0 = performance.now()
  const r = spawnSync(cmd, args, {env, cwd, input, encoding: 'utf8', maxBuffer: 1 << 28})
  const ms = performance.now() - t0
  if (r.error) throw r.error
  if (!allowExit.includes(r.status)) {
    throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${(r.stderr || r.stdout).slice(0, 2000)}`)
  }
  return {ms, stdout: r.stdout, stderr: r.stderr, status: r.status}
}

/** Wall time and peak resident memory (GNU time's %M, KiB) of one child. */
export function timedRss(cmd, args, opts = {}) {
  const out = join(BENCH, `time-${process.pid}.txt`)
  const r = timed('/usr/bin/time', ['-f', '%M', '-o', out, cmd, ...args], opts)
  const kib = Number(readFileSync(out, 'utf8').trim().split('\n').pop())
  rmSync(out, {force: true})
  return {...r, rssBytes: kib * 1024}
}

export const hasTimeV = () => existsSync('/usr/bin/time')

export function which(cmd) {
  const r = spawnSync('sh', ['-c', `command -v ${cmd}`], {encoding: 'utf8'})
  return r.status === 0 ? r.stdout.trim() : undefined
}

export function engram(args, opts = {}) {
  return timed(process.execPath, [BIN, ...args], opts)
}

// ---------------------------------------------------------------- stores

/**
 * Forget what this machine remembers about a store at `dir` (the highest manifest serials
 * seen, the verified-signature cache: both kept in the config folder, keyed by the store's
 * path). A store generated or cloned anew at a path the bench used before is a new store;
 * without this its serial 1 manifest would rightly be refused as a rollback.
 */
export function forgetStoreState(dir) {
  let root
  try {
    root = realpathSync(dir)
  } catch {
    root = resolve(dir)
  }
  const key = `${createHash('sha256').update(root).digest('hex').slice(0, 16)}.json`
  for (const sub of ['state', join('cache', 'verified')]) rmSync(join(CONFIG_DIR, sub, key), {force: true})
}

const GEN = join(ROOT, 'scripts', 'gen-store.mjs')

/**
 * A generated, signed store under .bench/stores/<name>, reused when the parameters and
 * the generator are unchanged (a `.params.json` beside it records both). `setup(dir)` runs
 * once after generation (e.g. to start a session) and its result is kept in the params.
 */
export async function ensureStore(name, spec, setup, log) {
  const dir = join(BENCH, 'stores', name)
  const paramsFile = join(BENCH, 'stores', `${name}.params.json`)
  const genSha = createHash('sha256').update(readFileSync(GEN)).digest('hex').slice(0, 16)
  const want = {...spec, sign: true, generator: genSha}
  if (existsSync(paramsFile) && existsSync(join(dir, '.engram'))) {
    const had = JSON.parse(readFileSync(paramsFile, 'utf8'))
    if (JSON.stringify(had.params) === JSON.stringify(want)) {
      log(`reusing store ${name} (${spec.memories} memories, ${spec.layout})`)
      return {dir, extra: had.extra, generatedMs: had.generatedMs, reused: true}
    }
  }
  forgetStoreState(dir)
  rmSync(dir, {recursive: true, force: true})
  rmSync(paramsFile, {force: true})
  mkdirSync(dirname(dir), {recursive: true})
  log(`generating store ${name}: ${spec.memories} memories, ${spec.layout} layout, signed …`)
  const args = [GEN, dir, '--memories', String(spec.memories), '--layout', spec.layout, '--seed', String(spec.seed), '--sign', '--dist', DIST]
  if (spec.scope) args.push('--scope', spec.scope)
  const t = timed(process.execPath, args)
  const extra = setup ? await setup(dir) : {}
  writeFileSync(paramsFile, `${JSON.stringify({params: want, extra, generatedMs: t.ms}, null, 2)}\n`)
  log(`  generated in ${fmtMs(t.ms)}`)
  return {dir, extra, generatedMs: t.ms, reused: false}
}

/** Store-relative memory files under a folder, sorted (git's view, not the index's). */
export function memoryFiles(storeDir, under = '') {
  const out = execFileSync('git', ['-C', storeDir, 'ls-files', '-z', '--', under || '.'], {encoding: 'utf8', maxBuffer: 1 << 30})
  return out.split('\0').filter((p) => p.endsWith('.md') && !p.startsWith('.engram/')).sort()
}

export function dirBytes(dir) {
  let total = 0
  if (!existsSync(dir)) return 0
  for (const e of readdirSync(dir, {withFileTypes: true})) {
    const p = join(dir, e.name)
    total += e.isDirectory() ? dirBytes(p) : statSync(p).size
  }
  return total
}

// ---------------------------------------------------------------- the warm server

/**
 * Start `engram serve` for a store and wait until its socket answers. The server answers
 * proven sessions only: a session assigned `assigned` is started for the bench, and `ask`
 * sends its id and token with every request and unwraps the server's proven reply.
 */
let auth = {}
export async function startServe(storeDir, assigned = 'org') {
  const root = realpathSync(storeDir)
  const started = JSON.parse(execFileSync(process.execPath, [BIN, 'session', 'start', '--agent', 'bench', '--assigned', assigned, '--base', root, '--json'], {env: childEnv(), encoding: 'utf8'}))
  auth = {session: started.id, token: started.token, nonce: 'bench'}
  const sock = join(CONFIG_DIR, 'private', `serve-${createHash('sha256').update(root).digest('hex').slice(0, 16)}.sock`)
  const child = spawn(process.execPath, [BIN, 'serve', '--base', storeDir], {env: childEnv(), stdio: ['ignore', 'ignore', 'pipe']})
  let err = ''
  child.stderr.on('data', (d) => (err += d))
  const t0 = performance.now()
  for (;;) {
    if (child.exitCode !== null) throw new Error(`engram serve exited ${child.exitCode}: ${err}`)
    if (existsSync(sock) && (await ask(sock, {op: 'search', query: 'warmup', limit: 1}, 60_000).catch(() => undefined))) break
    if (performance.now() - t0 > 120_000) throw new Error(`engram serve did not answer within 120 s: ${err}`)
    await new Promise((r) => setTimeout(r, 50))
  }
  return {
    child,
    sock,
    readyMs: performance.now() - t0,
    stop: () =>
      new Promise((r) => {
        if (child.exitCode !== null) return r()
        child.once('exit', () => r())
        child.kill('SIGTERM')
      }),
  }
}

/** One request on a fresh connection, as `engram search` sends it (newline-delimited JSON). */
export function ask(sock, req, timeoutMs = 10_000) {
  return new Promise((resolvePromise, reject) => {
    const s = createConnection(sock)
    let buf = ''
    const timer = setTimeout(() => {
      s.destroy()
      reject(new Error('timeout'))
    }, timeoutMs)
    s.setEncoding('utf8')
    s.once('connect', () => s.write(`${JSON.stringify({...auth, ...req})}\n`))
    s.on('data', (d) => {
      buf += d
      const nl = buf.indexOf('\n')
      if (nl >= 0) {
        clearTimeout(timer)
        s.destroy()
        try {
          resolvePromise(JSON.parse(JSON.parse(buf.slice(0, nl)).body))
        } catch (error) {
          reject(error)
        }
      }
    })
    s.once('error', (e) => {
      clearTimeout(timer)
      reject(e)
    })
  })
}

// ---------------------------------------------------------------- the vote

/**
 * The write path's checks in-process (src/core/write/write.ts): normalise, redact body and
 * title, normalise again, then runVote (flags + semantic, provenance, delivery). The
 * neighbour lookup is passed in, so that the caller chooses how the index is reached.
 */
export async function votePipeline() {
  const [{redact}, {normalise, stripInvisible}, {runVote}, {DEFAULT_CONFIG}] = await Promise.all([
    dist('core/write/redact/index.js'),
    dist('core/write/normalise.js'),
    dist('core/write/vote/index.js'),
    dist('core/store/config.js'),
  ])
  const config = {...DEFAULT_CONFIG.vote, external: []}
  // reader: a TextReader (src/core/write/vote/reading.ts), as engram mcp votes; none: all in one thread
  return async function vote(write, neighbours, reader) {
    const hidden = normalise(write.raw).hidden
    const red = redact(stripInvisible(write.raw), [])
    const title = redact(write.title, []).text
    const norm0 = normalise(red.text)
    const candidate = {
      scope: write.scope, path: write.path, operation: write.baseBody ? 'update' : 'create', title, tags: [], body: red.text,
      normalised: {...norm0, hidden: [...new Set([...hidden, ...norm0.hidden])]},
      origin: write.origin, author: 'bench-agent',
      session: {id: 's-bench0001', agent: 'bench-agent', tainted: false, taint_reasons: []},
      redactions: red.redactions, bodyBytes: Buffer.byteLength(red.text), maxBodyBytes: DEFAULT_CONFIG.max_body_bytes,
      baseBody: write.baseBody,
    }
    return runVote(candidate, {neighbours, recentWrites: {session: 0, author: 0}, config, ...(reader ? {reader} : {})})
  }
}

/** A TextReader as engram mcp starts one (src/mcp/server.ts), once its worker is ready. */
export async function startedReader() {
  const {TextReader} = await dist('core/write/vote/reading.js')
  const reader = new TextReader()
  for (let i = 0; i < 200 && !reader.running; i++) await new Promise((resolve) => setTimeout(resolve, 10))
  if (!reader.running) throw new Error('the vote bench could not start the reader thread (dist/core/write/vote/reading-worker.js)')
  return reader
}

/**
 * Neighbours exactly as src/core/write/neighbours.ts finds them (findNeighbours: the write's
 * rarest words over the scope's index, each hit read, parsed and passed through the
 * serving gate), with the engine and gate a warm server keeps: the index loaded once, no
 * git call per lookup while HEAD (read from .git's files) is unchanged — the vote target
 * excludes git.
 */
export async function warmNeighbourLookup(storeDir, scope) {
  const [{Store}, {WarmServing}, {WarmEngine, readHead}, {findNeighbours, warmNeighbours}] = await Promise.all([
    dist('core/store/store.js'), dist('core/trust/serving.js'), dist('core/index/index.js'), dist('core/write/neighbours.js'),
  ])
  const store = new Store(storeDir, storeDir)
  const engine = new WarmEngine(store)
  const serving = new WarmServing(store)
  const session = {id: 's-bench0001', agent: 'bench-agent', assigned: scope, reads: [], tainted: false, taint_reasons: [], created: '', updated: ''}
  const lookup = async (text, limit) => {
    const head = await readHead(store.top)
    return findNeighbours(store, session, text, limit, {engine, gate: await serving.open(head), head})
  }
  // load the index and the keyring before anything is timed
  await lookup('warm up', 1)
  // what engram mcp runs while the agent thinks (src/mcp/server.ts): every memory met once
  const warmUp = () => warmNeighbours(session, {engine, gate: async () => serving.open(await readHead(store.top))})
  return {lookup, warmUp, close: () => engine.close()}
}

// ---------------------------------------------------------------- SQLite FTS5

/**
 * better-sqlite3 is not a project dependency (it compiles for ~90 s and would slow every
 * CI install): install it on demand into .bench/node_modules. Returns the module or a note.
 */
export async function loadBetterSqlite(log) {
  const modDir = join(BENCH, 'node_modules', 'better-sqlite3')
  const tryLoad = async () => {
    try {
      const m = await import(pathToFileURL(join(modDir, 'lib', 'index.js')).href)
      const Database = m.default ?? m
      new Database(':memory:').close()
      return Database
    } catch {
      return undefined
    }
  }
  let Database = existsSync(modDir) ? await tryLoad() : undefined
  if (Database) return {Database}
  // the sqlite3 shell does the same without compiling a native module (slow on a busy machine)
  if (which('sqlite3')) return {cli: true, note: 'SQLite FTS5 through the `sqlite3` shell (better-sqlite3 is not installed in .bench): one query as a whole process; no in-process query time.'}
  log('installing better-sqlite3@12 into .bench/node_modules (compiles from source, ~90 s) …')
  mkdirSync(BENCH, {recursive: true})
  if (!existsSync(join(BENCH, 'package.json'))) writeFileSync(join(BENCH, 'package.json'), '{"private": true}\n')
  const env = {...process.env}
  // node-gyp fetches Node's headers unless told where they are; this machine has them.
  if (!env.npm_config_nodedir && existsSync(join(dirname(dirname(process.execPath)), 'include', 'node', 'node.h'))) {
    env.npm_config_nodedir = dirname(dirname(process.execPath))
  }
  const r = spawnSync('npm', ['install', '--prefix', BENCH, '--no-save', '--no-audit', '--no-fund', 'better-sqlite3@12'], {env, encoding: 'utf8', maxBuffer: 1 << 26})
  Database = r.status === 0 ? await tryLoad() : undefined
  if (Database) return {Database}
  const why = (r.stderr || r.stdout || '').trim().split('\n').slice(-3).join(' ').slice(0, 300)
  return {note: `SQLite FTS5 skipped: better-sqlite3@12 could not be installed into .bench (${why || `npm exited ${r.status}`})`}
}

/** FTS5 OR query for plain words, as the engram query is an OR of words. */
export function ftsQuery(q) {
  return q.split(/\s+/).filter(Boolean).map((w) => `"${w.replace(/"/g, '""')}"`).join(' OR ')
}

/**
 * Build an FTS5 table (porter stemming, like engram's light stemming) over the same files:
 * path, title, tags, body, with title and tags weighted in bm25() like engram's boosts.
 */
export function buildFts(Database, dbFile, storeDir, files) {
  rmSync(dbFile, {force: true})
  const db = new Database(dbFile)
  db.pragma('journal_mode = OFF')
  db.pragma('synchronous = OFF')
  db.exec("CREATE VIRTUAL TABLE docs USING fts5(path UNINDEXED, title, tags, body, tokenize = 'porter unicode61')")
  const ins = db.prepare('INSERT INTO docs (path, title, tags, body) VALUES (?, ?, ?, ?)')
  const t0 = performance.now()
  db.transaction(() => {
    for (const rel of files) {
      const r = ftsRow(storeDir, rel)
      ins.run(rel, r.title, r.tags, r.body)
    }
  })()
  db.exec("INSERT INTO docs(docs) VALUES('optimize')")
  db.close()
  return performance.now() - t0
}

/** One generated memory file as an FTS5 row: its title, tags (space-separated) and body. */
function ftsRow(storeDir, rel) {
  const text = readFileSync(join(storeDir, rel), 'utf8')
  const end = text.indexOf('\n---\n', 3)
  const fm = text.slice(4, end)
  const title = /^title: (.*)$/m.exec(fm)
  const tags = /^tags: (.*)$/m.exec(fm)
  return {title: title ? JSON.parse(title[1]) : '', tags: tags ? JSON.parse(tags[1]).join(' ') : '', body: text.slice(end + 5)}
}

export const FTS_SQL = 'SELECT path FROM docs WHERE docs MATCH ? ORDER BY bm25(docs, 0, 3, 2, 1) LIMIT 10'

const sqlText = (v) => `'${String(v).replace(/'/g, "''")}'`

/**
 * The same FTS5 table built with the `sqlite3` command-line shell (one SQL script on its
 * stdin), for a machine where better-sqlite3 is not installed: no native module to compile.
 */
export function buildFtsCli(dbFile, storeDir, files) {
  rmSync(dbFile, {force: true})
  const lines = ['PRAGMA journal_mode = OFF;', 'PRAGMA synchronous = OFF;', "CREATE VIRTUAL TABLE docs USING fts5(path UNINDEXED, title, tags, body, tokenize = 'porter unicode61');", 'BEGIN;']
  for (const rel of files) {
    const r = ftsRow(storeDir, rel)
    lines.push(`INSERT INTO docs (path, title, tags, body) VALUES (${sqlText(rel)}, ${sqlText(r.title)}, ${sqlText(r.tags)}, ${sqlText(r.body)});`)
  }
  lines.push('COMMIT;', "INSERT INTO docs(docs) VALUES('optimize');")
  const t0 = performance.now()
  execFileSync('sqlite3', [dbFile], {input: lines.join('\n'), maxBuffer: 1 << 30})
  return performance.now() - t0
}

/** One FTS5 query as a whole `sqlite3` process (the query as an SQL literal: the shell takes no parameters). */
export function ftsCliArgs(dbFile, match) {
  return ['-readonly', dbFile, FTS_SQL.replace('?', sqlText(match))]
}
