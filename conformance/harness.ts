/**
 * The conformance harness: drives only the CLI binary under test (ENGRAM_BIN, default
 * this repository's bin/run.js) against fresh temporary stores. Everything a test
 * observes comes from the binary's stdout, stderr and exit code, or from the git
 * repository and files it leaves behind — never from engram's own modules.
 */
import {execFileSync, spawn, spawnSync} from 'node:child_process'
import {appendFileSync, mkdtempSync, readFileSync, readdirSync, realpathSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join, relative} from 'node:path'
import {fileURLToPath} from 'node:url'
import {expect} from 'vitest'

export const BIN = process.env.ENGRAM_BIN ?? fileURLToPath(new URL('../bin/run.js', import.meta.url))

/** A .js entry point runs under this Node; anything else is executed directly. */
export function argv(args: string[]): [string, string[]] {
  return BIN.endsWith('.js') ? [process.execPath, [BIN, ...args]] : [BIN, args]
}

/**
 * With ENGRAM_TEST_SPAWN_LOG=<file>, every run of the CLI appends a line there: wall time in
 * ms, the test file, the arguments. Most of the suite's time is these runs; the log shows
 * which tests make many, or slow, ones (README "Development").
 */
export function logSpawn(startedMs: number, args: string[]): void {
  const file = process.env.ENGRAM_TEST_SPAWN_LOG
  if (!file) return
  const test = expect.getState().testPath
  appendFileSync(file, `${Date.now() - startedMs}\t${test ? relative(process.cwd(), test) : '?'}\t${JSON.stringify(args)}\n`)
}

export interface Run {
  args: string[]
  code: number
  stdout: string
  stderr: string
  /** stdout parsed as JSON, when it is JSON */
  json: any
}

export interface RunOptions {
  input?: string | Buffer
  /** run as this agent session (sets ENGRAM_SESSION) */
  session?: string
  env?: NodeJS.ProcessEnv
  cwd?: string
}

export function tempDir(prefix = 'engram-conf-'): string {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)))
}

/** The passphrase of every store's owner key (R20: keys are encrypted at rest). */
export const PASSPHRASE = 'conformance passphrase'

/**
 * Whether a variable of the test process stays out of the CLI's environment: engram's and
 * git's own (they could point the CLI or git elsewhere), and NODE_ENV, which the test
 * runner sets to "test" and under which oclif loads TypeScript at every start to look for
 * the sources (about half of each run's CPU time, and not the CLI its users run).
 */
export function notForTheCli(name: string): boolean {
  return name.startsWith('ENGRAM_') || name.startsWith('GIT_') || name === 'NODE_ENV'
}

/**
 * The environment with nothing inherited that could point the CLI or git elsewhere. With
 * a key folder, the owner's passphrase is in a 0600 file there, named by
 * ENGRAM_PASSPHRASE_FILE, as a scripted owner keeps it (R20).
 */
function cleanEnv(configDir: string, withPassphrase = false): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (notForTheCli(k)) continue
    env[k] = v
  }
  return {
    ...env,
    ENGRAM_CONFIG_DIR: configDir,
    ...(withPassphrase ? {ENGRAM_PASSPHRASE_FILE: passphraseFileIn(configDir), ENGRAM_INSECURE_TEST_KDF: '1'} : {}),
    NO_COLOR: '1',
    GIT_AUTHOR_NAME: 'Conformance',
    GIT_AUTHOR_EMAIL: 'conformance@example.com',
    GIT_COMMITTER_NAME: 'Conformance',
    GIT_COMMITTER_EMAIL: 'conformance@example.com',
  }
}

function passphraseFileIn(configDir: string): string {
  const file = join(configDir, 'passphrase')
  writeFileSync(file, `${PASSPHRASE}\n`, {mode: 0o600})
  return file
}

const parse = (s: string) => {
  try {
    return JSON.parse(s)
  } catch {
    return undefined
  }
}

/** One store in its own folder, with its own key folder and a transcript of every output. */
export class Store {
  readonly dir = tempDir()
  readonly configDir = tempDir('engram-conf-keys-')
  readonly env = cleanEnv(this.configDir, true)
  /** every stdout and stderr this store's commands printed, for leak checks */
  readonly transcript: string[] = []

  run(args: string[], opts: RunOptions = {}): Run {
    const [cmd, full] = argv(args)
    const env = {...this.env, ...(opts.session ? {ENGRAM_SESSION: opts.session} : {}), ...opts.env}
    const started = Date.now()
    const r = spawnSync(cmd, full, {cwd: opts.cwd ?? this.dir, env, input: opts.input ?? '', encoding: 'utf8', timeout: 60_000, maxBuffer: 64 * 1024 * 1024})
    logSpawn(started, args)
    this.transcript.push(r.stdout ?? '', r.stderr ?? '')
    return {args, code: r.status ?? -1, stdout: r.stdout ?? '', stderr: r.stderr ?? '', json: parse(r.stdout ?? '')}
  }

  /** The same, asynchronously (for races). */
  runAsync(args: string[], opts: RunOptions = {}): Promise<Run> {
    const [cmd, full] = argv(args)
    const env = {...this.env, ...(opts.session ? {ENGRAM_SESSION: opts.session} : {}), ...opts.env}
    const started = Date.now()
    return new Promise((resolve) => {
      const child = spawn(cmd, full, {cwd: opts.cwd ?? this.dir, env})
      let stdout = ''
      let stderr = ''
      child.stdout.on('data', (d) => (stdout += d))
      child.stderr.on('data', (d) => (stderr += d))
      child.stdin.end(opts.input ?? '')
      child.on('close', (code) => {
        logSpawn(started, args)
        this.transcript.push(stdout, stderr)
        resolve({args, code: code ?? -1, stdout, stderr, json: parse(stdout)})
      })
    })
  }

  /** Run and insist on exit 0; returns the parsed --json output. */
  ok(args: string[], opts: RunOptions = {}): any {
    const r = this.run([...args, '--json'], opts)
    if (r.code !== 0) throw new Error(`engram ${args.join(' ')} exited ${r.code}: ${r.stderr}${r.stdout}`)
    return r.json
  }

  git(...args: string[]): string {
    return execFileSync('git', args, {cwd: this.dir, env: this.env, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024})
  }

  /** Commit whatever is in the work tree, as an attacker with a shell would. */
  gitCommitAll(message: string): void {
    this.git('add', '-A')
    this.git('commit', '-q', '--allow-empty', '-m', message)
  }

  commitCount(): number {
    return Number(this.git('rev-list', '--count', 'HEAD').trim())
  }

  /** The work tree's state: `git status` including untracked and ignored files. */
  state(): string {
    return `${this.commitCount()}\n${this.git('status', '--porcelain', '--untracked-files=all', '--ignored')}`
  }

  /** The content of every object in the repository, loose or packed, reachable or not. */
  allObjects(): Buffer {
    return execFileSync('git', ['cat-file', '--batch-all-objects', '--batch', '--unordered'], {cwd: this.dir, env: this.env, maxBuffer: 512 * 1024 * 1024})
  }

  /** Every file under the store folder (including .git and ignored derived files), as bytes. */
  allFiles(): Buffer {
    const parts: Buffer[] = []
    const walk = (d: string) => {
      for (const name of readdirSync(d)) {
        const p = join(d, name)
        const st = statSync(p, {throwIfNoEntry: false})
        if (!st) continue
        if (st.isDirectory()) walk(p)
        else if (st.isFile()) parts.push(Buffer.from(p), readFileSync(p))
      }
    }
    walk(this.dir)
    return Buffer.concat(parts)
  }

  read(rel: string): string {
    return readFileSync(join(this.dir, rel), 'utf8')
  }

  write(rel: string, text: string | Buffer): void {
    writeFileSync(join(this.dir, rel), text)
  }

  path(rel: string): string {
    return join(this.dir, rel)
  }
}

/** A fresh store with its first owner key. */
export function newStore(): Store {
  const s = new Store()
  s.ok(['init'])
  return s
}

/**
 * A second store of the same owner on the same machine: a folder of its own, this store's
 * key folder and environment (so `init` reuses the owner key, as the README allows).
 */
export function siblingStore(of: Store): Store {
  const s = Object.create(Store.prototype) as Store
  Object.assign(s, {dir: tempDir(), configDir: of.configDir, env: of.env, transcript: []})
  s.ok(['init'])
  return s
}

/**
 * The owner sets the store's policy: writes config.yml and signs it (`config sign` shows the
 * change and its digest, `config sign --digest` signs exactly those bytes and commits them).
 */
export function configure(store: Store, text: string): void {
  store.write('.engram/config.yml', text)
  const shown = store.ok(['config', 'sign'])
  store.ok(['config', 'sign', '--digest', shown.digest])
}

/** A session as the harness starts it (never from inside a session). */
export function startSession(store: Store, assigned: string, opts: {agent?: string; tainted?: boolean; reason?: string} = {}): string {
  const args = ['session', 'start', '--agent', opts.agent ?? 'agent-a', '--assigned', assigned]
  if (opts.tainted) args.push('--tainted')
  if (opts.reason) args.push('--reason', opts.reason)
  return store.ok(args).id as string
}

/** An agent write; returns the run (callers assert on its code and JSON). */
export function write(store: Store, session: string, scope: string, path: string, text: string | Buffer, extra: string[] = []): Run {
  return store.run(['write', path, '--scope', scope, ...extra, '--json'], {session, input: text})
}

/** The digest the owner reviews, as `review show` reports it. */
export function reviewedDigest(store: Store, id: string): string {
  return store.ok(['review', 'show', id]).digest as string
}

/** Propose through an agent session and accept as the owner: a curated, signed memory. */
export function curate(store: Store, session: string, scope: string, path: string, text: string): {proposal: string; digest: string} {
  const w = write(store, session, scope, path, text)
  if (w.code !== 0 || w.json?.status !== 'pending') throw new Error(`expected a pending proposal, got ${w.code}: ${w.stdout}${w.stderr}`)
  const digest = reviewedDigest(store, w.json.proposal)
  store.ok(['review', 'accept', w.json.proposal, '--digest', digest])
  return {proposal: w.json.proposal, digest}
}

/** The stored entry a write produced: `review show` for a proposal, `quarantine show` for a quarantined write. */
export function showEntry(store: Store, w: {status: string; proposal: string}): any {
  return store.ok([w.status === 'quarantined' ? 'quarantine' : 'review', 'show', w.proposal])
}

const known = new Map<string, boolean>()

/** Whether the binary offers a command (its --help exits 0). */
export function has(...command: string[]): boolean {
  const key = command.join(' ')
  if (!known.has(key)) {
    const [cmd, full] = argv([...command, '--help'])
    const r = spawnSync(cmd, full, {env: cleanEnv(tmpdir()), encoding: 'utf8', timeout: 30_000})
    known.set(key, r.status === 0)
  }
  return known.get(key)!
}

/** A word no store holds unless a test planted it. */
export function uniqueWord(prefix: string): string {
  return `${prefix}${Math.random().toString(36).slice(2, 10)}`
}

// ---------------------------------------------------------------- dreaming (C28)

const FIXTURES = fileURLToPath(new URL('../test/fixtures/transcripts/', import.meta.url))

/** The recorded Claude Code transcripts of test/fixtures/transcripts in a fresh folder, with `secret` where they hold {{SECRET}}. */
export function transcriptsWith(secret: string): string {
  const dir = tempDir('engram-transcripts-')
  for (const f of readdirSync(FIXTURES)) writeFileSync(join(dir, f), readFileSync(join(FIXTURES, f), 'utf8').replaceAll('{{SECRET}}', secret))
  return dir
}

/** A dreamer key made and trusted as README "Dreaming" says. */
export function trustDreamer(store: Store, name = 'nightly'): void {
  const pub = join(store.configDir, `${name}.pub`)
  store.ok(['keys', 'generate', name, '--out', pub])
  store.ok(['keys', 'trust', pub, '--role', 'dreamer', '--key', 'owner'])
}
