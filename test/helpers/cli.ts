import {execFileSync, spawnSync, SpawnSyncReturns} from 'node:child_process'
import {mkdtempSync, realpathSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'

import {logSpawn, notForTheCli} from '../../conformance/harness.js'

/** The CLI under test: ENGRAM_BIN (another implementation) or our built bin/run.js. */
export const BIN = process.env.ENGRAM_BIN ?? fileURLToPath(new URL('../../bin/run.js', import.meta.url))

export interface RunResult {
  code: number
  stdout: string
  stderr: string
  /** stdout parsed as JSON when it is JSON */
  json: any
}

export interface Sandbox {
  /** a fresh folder for the store */
  dir: string
  /** ENGRAM_CONFIG_DIR for private keys */
  configDir: string
  env: NodeJS.ProcessEnv
  run(args: string[], opts?: {input?: string | Buffer; env?: NodeJS.ProcessEnv; cwd?: string; timeout?: number}): RunResult
}

/** A finished CLI run as tests read it: exit code, output, and stdout parsed when it is JSON. */
export function runResult(r: SpawnSyncReturns<string>): RunResult {
  let json: any
  try {
    json = JSON.parse(r.stdout)
  } catch {
    json = undefined
  }
  return {code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr, json}
}

export function tempDir(prefix = 'engram-test-'): string {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)))
}

/** The passphrase every sandbox's owner keys are encrypted with (see sandbox()). */
export const PASSPHRASE = 'correct horse battery staple'

/**
 * A sandbox: temp store folder, temp key folder, a clean environment (no inherited session,
 * base or git vars, no NODE_ENV: see notForTheCli). Owner keys are encrypted: the passphrase is in a 0600 file in the key
 * folder, named by ENGRAM_PASSPHRASE_FILE, as a scripted owner would keep it.
 */
export function sandbox(): Sandbox {
  const dir = tempDir()
  const configDir = tempDir('engram-keys-')
  const passphraseFile = join(configDir, 'passphrase')
  writeFileSync(passphraseFile, `${PASSPHRASE}\n`, {mode: 0o600})
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (notForTheCli(k)) continue
    env[k] = v
  }
  Object.assign(env, {ENGRAM_CONFIG_DIR: configDir, ENGRAM_PASSPHRASE_FILE: passphraseFile, ENGRAM_INSECURE_TEST_KDF: '1', NO_COLOR: '1', GIT_AUTHOR_NAME: 'Test', GIT_AUTHOR_EMAIL: 'test@example.com', GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 'test@example.com'})
  const sb: Sandbox = {
    dir,
    configDir,
    env,
    run(args, opts = {}) {
      const started = Date.now()
      const r: SpawnSyncReturns<string> = spawnSync(process.execPath, [BIN, ...args], {
        cwd: opts.cwd ?? dir,
        env: {...env, ...opts.env},
        input: opts.input ?? '',
        encoding: 'utf8',
        timeout: opts.timeout ?? 60_000,
      })
      logSpawn(started, args)
      return runResult(r)
    },
  }
  return sb
}

/** init a store in a sandbox and start a session; returns the session id. */
export function initWithSession(sb: Sandbox, assigned = 'tenant:acme', agent = 'claude-code', extra: string[] = []): string {
  const init = sb.run(['init', '--json'])
  if (init.code !== 0) throw new Error(`init failed: ${init.stderr}${init.stdout}`)
  const s = sb.run(['session', 'start', '--agent', agent, '--assigned', assigned, '--json', ...extra])
  if (s.code !== 0) throw new Error(`session start failed: ${s.stderr}${s.stdout}`)
  return s.json.id as string
}

/** Propose through an agent session and accept as the owner: curated, signed memory. */
export function curate(sb: Sandbox, session: string, scope: string, path: string, text: string): void {
  const w = sb.run(['write', path, '--scope', scope, '--json'], {input: text, env: {ENGRAM_SESSION: session}})
  if (w.json?.status !== 'pending') throw new Error(`expected pending, got ${w.stdout}${w.stderr}`)
  const a = sb.run(['review', 'accept', w.json.proposal, '--digest', w.json.digest, '--json'])
  if (a.code !== 0) throw new Error(`accept failed: ${a.stdout}${a.stderr}`)
}

/** init, then a session for tenant:acme and one (another agent's) for tenant:globex. */
export function twoTenants(sb: Sandbox): {acme: string; globex: string} {
  const acme = initWithSession(sb, 'tenant:acme')
  const globex = sb.run(['session', 'start', '--agent', 'other', '--assigned', 'tenant:globex', '--json']).json.id as string
  return {acme, globex}
}

/**
 * The owner sets the store's policy: writes config.yml (when given) and signs it with
 * `engram config sign` (shown, then signed by its digest, then committed).
 */
export function signConfig(sb: Sandbox, text?: string): void {
  if (text !== undefined) writeFileSync(join(sb.dir, '.engram', 'config.yml'), text)
  const shown = sb.run(['config', 'sign', '--json'])
  if (shown.code !== 0) throw new Error(`config sign failed: ${shown.stderr}${shown.stdout}`)
  const signed = sb.run(['config', 'sign', '--digest', shown.json.digest, '--json'])
  if (signed.code !== 0) throw new Error(`config sign --digest failed: ${signed.stderr}${signed.stdout}`)
}

/**
 * The git identity every test uses: tests never rely on ~/.gitconfig, since a fresh CI
 * machine (or `HOME=$(mktemp -d)`) has none and `git commit` would refuse.
 */
export const TEST_GIT_IDENTITY = {
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 'test@example.com',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 'test@example.com',
} as const

/** The environment for a test's own git commands: the caller's, plus the test identity. */
export function testGitEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {...process.env, ...TEST_GIT_IDENTITY, ...extra}
}

/** Run git in `dir` as the test identity; returns stdout. */
export function git(dir: string, ...args: string[]): string {
  return execFileSync('git', args, {cwd: dir, encoding: 'utf8', env: testGitEnv(), maxBuffer: 256 * 1024 * 1024})
}
