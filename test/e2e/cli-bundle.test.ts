import {spawnSync} from 'node:child_process'
import {isAscii} from 'node:buffer'
import {existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {mayBeCommand, runBundled} from '../../src/cli/bundled.js'
import {BIN, curate, initWithSession, Sandbox, sandbox} from '../helpers/cli.js'

const TRACE = fileURLToPath(new URL('../fixtures/trace-imports.mjs', import.meta.url))

/**
 * bin/run.js runs a command line that plainly names a command from the bundle of the whole
 * CLI (src/cli/bundled.ts, dist/fast/cli.cjs); ENGRAM_NO_FAST=1 sends it through oclif's
 * own entry. Both must answer every command line alike: output, exit code. The rest of
 * the suite runs through the bundle (the default); this file holds the two side by side.
 */
describe.skipIf(process.env.ENGRAM_BIN)('the whole-CLI bundle and oclif agree', () => {
  let sb: Sandbox
  let s: string
  beforeAll(() => {
    sb = sandbox()
    s = initWithSession(sb, 'tenant:acme')
    curate(sb, s, 'tenant:acme', 'notes/build.md', 'The build cache lives on the second disk.\n')
    const w = sb.run(['write', 'notes/pending.md', '--scope', 'tenant:acme', '--json'], {input: 'The deploy window is Tuesday at noon.\n', env: {ENGRAM_SESSION: s}})
    expect(w.json?.status, w.stderr).toBe('pending')
  })
  afterAll(() => rmSync(sb.dir, {recursive: true, force: true}))

  const lines: [string, string[], NodeJS.ProcessEnv?][] = [
    ['status', ['status']],
    ['status as JSON', ['status', '--json']],
    ['the global flag first', ['--json', 'status']],
    ['the review queue', ['review', 'list']],
    ['the review queue as JSON', ['review', 'list', '--json']],
    ['a topic with a command of its own', ['review']],
    ['a subcommand misspelt', ['review', 'lst']],
    ['a topic without a command', ['keys']],
    ['keys', ['keys', 'list', '--json']],
    ['a memory', ['read', 'notes/build.md', '--scope', 'tenant:acme']],
    ['a memory that is not there', ['read', 'notes/none.md', '--scope', 'tenant:acme', '--json']],
    ['a path leaving its scope', ['read', '../x.md', '--scope', 'tenant:acme']],
    ['an unknown flag', ['status', '--bogus']],
    ['a flag without its value', ['list', '--scope']],
    ['a missing argument', ['review', 'show']],
    ['an unknown proposal', ['review', 'show', 'nosuch', '--json']],
    ['list', ['list', '--scope', 'tenant:acme', '--json']],
    ['sessions', ['session', 'list', '--json']],
    ['the config', ['config', 'show', '--json']],
    ['the index', ['index', 'status', '--json']],
    ['verify', ['verify', '--json']],
    ['inside a session', ['status', '--json'], {ENGRAM_SESSION: 'SESSION'}],
    ['an owner command inside a session', ['review', 'list'], {ENGRAM_SESSION: 'SESSION'}],
    ['version', ['version', '--json']],
    ['--version', ['--version']],
    ['help', ['help', 'status']],
    ['--help', ['status', '--help']],
    ['-h after the command', ['review', 'list', '-h']],
    ['no command', []],
    ['an unknown command', ['stauts']],
    ['a store that is not there', ['status', '--base', '/nonexistent/engram']],
  ]
  it.each(lines)('%s', (_name, args, env = {}) => {
    const e = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v === 'SESSION' ? s : v]))
    const bundled = sb.run(args, {env: e})
    const oclif = sb.run(args, {env: {...e, ENGRAM_NO_FAST: '1'}})
    expect({code: bundled.code, stdout: bundled.stdout, stderr: bundled.stderr}).toEqual({code: oclif.code, stdout: oclif.stdout, stderr: oclif.stderr})
  })

  it('a write in other languages is redacted and voted on alike: the bundles rewrite String.raw patterns in ASCII', () => {
    // engram's patterns for secrets and orders in other languages are String.raw templates
    // with non-ASCII letters; the build writes them as ASCII escapes of the same raw text
    const text = 'Das Passwort für den Tresor ist Tr0ub4dor-Zq9x. La phrase secrète du coffre : Kk2pp7Wq. Contraseña del wifi: Lm4-Qz8-Rt.\n'
    const bundled = sb.run(['write', 'notes/de-fast.md', '--scope', 'tenant:acme', '--json'], {input: text, env: {ENGRAM_SESSION: s}})
    const oclif = sb.run(['write', 'notes/de-oclif.md', '--scope', 'tenant:acme', '--json'], {input: text, env: {ENGRAM_SESSION: s, ENGRAM_NO_FAST: '1'}})
    const seen = (r: typeof bundled) => ({code: r.code, status: r.json?.status, redactions: r.json?.redactions, flags: r.json?.flags, vote: r.json?.vote?.summary})
    expect(seen(bundled), bundled.stderr).toEqual(seen(oclif))
    expect(JSON.stringify(bundled.json?.redactions ?? [])).toMatch(/password/i)
    expect(bundled.stdout).not.toContain('Tr0ub4dor')
    expect(bundled.stdout).not.toContain('Kk2pp7Wq')
    expect(bundled.stdout).not.toContain('Lm4-Qz8')
  })

  it('the bundle runs a command without importing oclif or any command module; ENGRAM_NO_FAST=1 and help go through oclif', () => {
    const trace = join(sb.configDir, 'imports.txt')
    const run = (args: string[], env: NodeJS.ProcessEnv = {}) => {
      rmSync(trace, {force: true})
      const r = spawnSync(process.execPath, ['--import', TRACE, BIN, ...args], {cwd: sb.dir, env: {...sb.env, ...env, TRACE_IMPORTS: trace}, encoding: 'utf8'})
      expect(r.status, r.stderr).toBe(0)
      return existsSync(trace) ? readFileSync(trace, 'utf8').split('\n') : []
    }
    for (const args of [['status', '--json'], ['review', 'list']]) {
      const bundled = run(args)
      expect(bundled).toContain('vm:cli.cjs')
      expect(bundled).not.toContain('@oclif/core')
    }
    const slow = run(['status', '--json'], {ENGRAM_NO_FAST: '1'})
    expect(slow).toContain('@oclif/core')
    expect(slow.filter((l) => l.startsWith('vm:'))).toEqual([])
    // help goes to oclif's own entry without compiling the bundle
    const help = run(['status', '--help'])
    expect(help).toContain('@oclif/core')
    expect(help).not.toContain('vm:cli.cjs')
  })
})

describe.skipIf(process.env.ENGRAM_BIN)('the code caches the build makes', () => {
  const FAST = fileURLToPath(new URL('../../dist/fast/', import.meta.url))
  it('each bundle is ASCII, so that bin/run.js reads it as Latin-1', () => {
    for (const name of ['cli', 'search', 'write']) expect(isAscii(readFileSync(join(FAST, `${name}.cjs`))), name).toBe(true)
  })
  it('each bundle has one, named by its Node version, size and time, and a fresh key folder starts from it', () => {
    for (const name of ['cli', 'search', 'write']) {
      const st = statSync(join(FAST, `${name}.cjs`))
      expect(readdirSync(FAST)).toContain(`${name}-${process.version}-${process.arch}-${st.size}-${Math.floor(st.mtimeMs)}.bin`)
    }
    // V8 took the build's cache: nothing was compiled anew, so nothing was saved in the key folder
    const sb = sandbox()
    try {
      expect(sb.run(['status', '--base', join(sb.dir, 'none')]).code).toBe(4)
      expect(existsSync(join(sb.configDir, 'cache', 'v8'))).toBe(false)
    } finally {
      rmSync(sb.dir, {recursive: true, force: true})
    }
  })
})

describe('mayBeCommand: what the bundle may take before reading any file', () => {
  const ids = ['status', 'review', 'review:list', 'keys:list']
  it('takes a command line whose first word begins a command id', () => {
    expect(mayBeCommand(['status'], ids)).toBe(true)
    expect(mayBeCommand(['review', 'lst'], ids)).toBe(true)
    expect(mayBeCommand(['keys', 'list', '--json'], ids)).toBe(true)
    expect(mayBeCommand(['status', '--', '--help'], ids)).toBe(true)
  })
  it('runBundled declines, before any command runs, without the manifest it was made from', async () => {
    const root = sandbox().dir
    let loaded = false
    const commands = {status: async () => ((loaded = true), {default: class {} as never})}
    expect(await runBundled(['status'], root, commands, 105_000)).toBe(false)
    writeFileSync(join(root, 'oclif.manifest.json'), '{"version":"0.0.0","commands":{}}')
    expect(await runBundled(['status'], root, commands, 105_000)).toBe(false)
    expect(loaded).toBe(false)
  })

  it('leaves help, versions, flags first and unknown words to oclif', () => {
    expect(mayBeCommand([], ids)).toBe(false)
    expect(mayBeCommand([''], ids)).toBe(false)
    expect(mayBeCommand(['--version'], ids)).toBe(false)
    expect(mayBeCommand(['status', '--help'], ids)).toBe(false)
    expect(mayBeCommand(['review', 'list', '-h'], ids)).toBe(false)
    expect(mayBeCommand(['stat'], ids)).toBe(false)
    expect(mayBeCommand(['key'], ids)).toBe(false)
    expect(mayBeCommand(['status', '-x'], ids, ['-x'])).toBe(false)
  })
})
