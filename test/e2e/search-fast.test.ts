import {spawn, spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {BIN, curate, initWithSession, Sandbox, sandbox, twoTenants} from '../helpers/cli.js'

const TRACE = fileURLToPath(new URL('../fixtures/trace-imports.mjs', import.meta.url))
const FAST = fileURLToPath(new URL('../../dist/fast/', import.meta.url))

/**
 * `engram search` has two entries: the fast path in bin/run.js (no oclif) and the oclif
 * command. Whatever the command line, a user must not be able to tell them apart except
 * by speed: same stdout, stderr and exit code. Skipped against another implementation.
 */
describe.skipIf(process.env.ENGRAM_BIN)('search: the fast entry and the oclif command agree', () => {
  let sb: Sandbox
  let acme: string
  let globex: string
  beforeAll(() => {
    sb = sandbox()
    ;({acme, globex} = twoTenants(sb))
    curate(sb, acme, 'tenant:acme', 'deploy.md', 'Deploys go to host deploy-3.acme.internal through the blue pipeline.')
    curate(sb, acme, 'tenant:acme', 'runbooks/pager.md', '# Pager rota\n\nThe deploy pager rotates weekly; 100% of "quoted" text \\ stays as is.')
    curate(sb, globex, 'tenant:globex', 'secret.md', 'Globex codename zanzibarquux launches in June.')
  })
  afterAll(() => rmSync(sb.dir, {recursive: true, force: true}))

  /** Run both ways; returns the fast run after checking the oclif run matches it. */
  function both(args: string[], env: NodeJS.ProcessEnv = {}) {
    const fast = sb.run(args, {env})
    const slow = sb.run(args, {env: {...env, ENGRAM_NO_FAST: '1'}})
    // (a warning oclif prints under a test runner's NODE_ENV names the process id)
    const pid = (s: string) => s.replace(/\(node:\d+\)/g, '(node:PID)')
    expect({code: fast.code, stdout: fast.stdout, stderr: pid(fast.stderr)}, args.join(' ')).toEqual({code: slow.code, stdout: slow.stdout, stderr: pid(slow.stderr)})
    return fast
  }

  const owner = {}
  const session = () => ({ENGRAM_SESSION: acme})
  it.each([
    ['plain', ['search', 'deploy'], owner],
    ['json', ['search', 'deploy', '--json'], owner],
    ['flags first, limit', ['search', '--json', '--limit', '1', 'deploy'], owner],
    ['--flag=value forms', ['search', 'pager', '--limit=2', '--scope=tenant:acme'], owner],
    ['no hits', ['search', 'nothingmatcheshere'], owner],
    ['no hits, json', ['search', 'nothingmatcheshere', '--json'], owner],
    ['quoted and required words', ['search', '"deploy pager" +rotates -blue', '--json'], owner],
    ['several words are one query', ['search', 'deploy', 'pager', '--json'], owner],
    ['-word after a word (oclif only)', ['search', 'deploy', '-blue', '--json'], owner],
    ['words after --', ['search', '--json', '--', '-blue', 'deploy'], owner],
  ])('succeeds the same way: %s', (_name, args) => {
    const r = both(args as string[])
    expect(r.code).toBe(0)
  })

  it('answers the same for an agent session, by env or by flag', () => {
    expect(new Set(both(['search', 'zanzibarquux deploy', '--json'], session()).json.hits.map((h: any) => h.scope))).toEqual(new Set(['tenant:acme']))
    expect(both(['search', 'deploy', '--session', acme]).code).toBe(0)
  })

  it.each([
    ['another tenant', ['search', 'x', '--scope', 'tenant:globex'], 3],
    ['another tenant, json', ['search', 'x', '--scope', 'tenant:globex', '--json'], 3],
    ['no query', ['search'], 2],
    ['limit 0', ['search', 'a', '--limit', '0'], 2],
    ['limit not a number', ['search', 'a', '--limit', 'many'], 2],
    ['limit too large', ['search', 'a', '--limit', '1001'], 2],
    ['unknown flag', ['search', 'a', '--bogus'], 2],
    ['flag twice', ['search', 'a', '--scope', 'org', '--scope', 'tenant:acme'], 2],
    ['bad scope', ['search', 'a', '--scope', 'tenant:../x'], 2],
    ['unclosed quote', ['search', '"deploy'], 2],
    ['too long', ['search', 'x'.repeat(10_001)], 2],
    ['malformed session id', ['search', 'a', '--session', 'no such'], 2],
    ['unknown session', ['search', 'a', '--session', 's-7f3kq2ab'], 4],
    ['no store', ['search', 'a', '--base', '/'], 4],
  ])('fails the same way: %s', (_name, args, code) => {
    const r = both(args as string[], args.includes('--session') ? {} : session())
    expect(r.code).toBe(code)
    expect(r.stderr + r.stdout).not.toMatch(/\n\s+at /) // no stack trace
  })

  it('reads with a broken config.yml (search uses no setting from it); other commands ignore it, warning, and `config sign` refuses it', () => {
    const file = join(sb.dir, '.engram/config.yml')
    const original = readFileSync(file, 'utf8')
    try {
      writeFileSync(file, 'vote: [unclosed\n')
      expect(both(['search', 'deploy', '--json']).json.hits.length).toBeGreaterThan(0)
      const st = sb.run(['status', '--json'])
      expect(st.code).toBe(0)
      expect(st.stderr).toMatch(/config\.yml is not in force: .*config\.yml is malformed/)
      expect(st.json.config.state).toBe('unsigned')
      const signed = sb.run(['config', 'sign', '--json'])
      expect(signed.code).toBe(2)
      expect(signed.json.error.message).toMatch(/config\.yml is malformed/)
    } finally {
      writeFileSync(file, original)
    }
  })

  it('starts from the code cache the build made, takes the key folder\'s own first, and shrugs off a damaged one', () => {
    both(['search', 'deploy'])
    const dir = join(sb.configDir, 'cache', 'v8')
    // V8 took the build's cache (dist/fast/search-….bin): nothing compiled anew, nothing saved
    const seeds = readdirSync(FAST).filter((f) => f.startsWith('search-') && f.endsWith('.bin'))
    expect(seeds).toHaveLength(1)
    expect(existsSync(dir) ? readdirSync(dir).filter((f) => f.startsWith('search-')) : []).toEqual([])
    // a damaged cache of the same name in the key folder is read first, rejected by V8,
    // compiled afresh and written again
    mkdirSync(dir, {recursive: true, mode: 0o700})
    const garbage = Buffer.alloc(4096, 7)
    writeFileSync(join(dir, seeds[0]), garbage, {mode: 0o600})
    expect(both(['search', 'deploy', '--json']).json.hits).toHaveLength(2)
    expect(readFileSync(join(dir, seeds[0])).equals(garbage)).toBe(false)
    expect(statSync(dir).mode & 0o077).toBe(0)
  })

  it('exits quietly, like oclif, when the reader of its output goes away', async () => {
    for (const env of [{}, {ENGRAM_NO_FAST: '1'}]) {
      const r = await new Promise<{code: number | null; stderr: string}>((resolve) => {
        const child = spawn(process.execPath, [BIN, 'search', 'deploy', '--json'], {cwd: sb.dir, env: {...sb.env, ...env}, stdio: ['ignore', 'pipe', 'pipe']})
        child.stdout.destroy() // the reader is gone before anything is written
        let stderr = ''
        child.stderr.on('data', (d: Buffer) => (stderr += d))
        child.on('close', (code) => resolve({code, stderr}))
      })
      expect(r, JSON.stringify(env)).toEqual({code: 0, stderr: ''})
    }
  })

  it('gives the same help', () => {
    expect(both(['search', '--help']).stdout).toContain('--limit')
  })

  it('skips oclif on the plain path; everything else goes to the oclif command (in the whole CLI\'s bundle, or oclif\'s own entry)', () => {
    const trace = join(sb.configDir, 'imports.txt')
    const run = (args: string[], env: NodeJS.ProcessEnv = {}) => {
      rmSync(trace, {force: true})
      const r = spawnSync(process.execPath, ['--import', TRACE, BIN, ...args], {cwd: sb.dir, env: {...sb.env, ...env, TRACE_IMPORTS: trace}, encoding: 'utf8'})
      expect(r.status, r.stderr).toBe(args.includes('--bogus') ? 2 : 0)
      return existsSync(trace) ? readFileSync(trace, 'utf8').split('\n') : []
    }
    const plain = run(['search', 'deploy', '--json'])
    expect(plain).toContain('vm:search.cjs')
    expect(plain).not.toContain('vm:cli.cjs')
    expect(plain).not.toContain('@oclif/core')
    // a flag the fast entry does not know: the oclif command, from the whole CLI's bundle
    expect(run(['search', 'deploy', '--bogus'])).toEqual(expect.arrayContaining(['vm:search.cjs', 'vm:cli.cjs']))
    const slow = run(['search', 'deploy'], {ENGRAM_NO_FAST: '1'})
    expect(slow).toContain('@oclif/core')
    expect(slow.filter((l) => l.startsWith('vm:'))).toEqual([])
    expect(run(['list', '--json'])).toContain('vm:cli.cjs')
  })

  it('serves from a manifest in another valid JSON layout (no line lookup), and not from a forged one', () => {
    const file = join(sb.dir, '.engram/manifests/tenant_acme.json')
    const original = readFileSync(file, 'utf8')
    try {
      // the same signed content, laid out differently: still verifies, found by parsing
      writeFileSync(file, JSON.stringify(JSON.parse(original)))
      expect(both(['search', 'deploy', '--json']).json.hits.map((h: any) => h.path).sort()).toEqual(['deploy.md', 'runbooks/pager.md'])
      // one entry's blob id changed in the line layout: the signature fails, nothing served
      const m = JSON.parse(original)
      const forged = original.replace(m.entries[0].blob, '0'.repeat(40))
      writeFileSync(file, forged)
      expect(both(['search', 'deploy', '--json']).json.hits).toEqual([])
    } finally {
      writeFileSync(file, original)
    }
    expect(both(['search', 'deploy', '--json']).json.hits).toHaveLength(2)
  })
})

describe('search: what a fresh process caches never outlives trust', () => {
  it('stops serving a scope whose cached, verified manifest was signed by a key revoked since', () => {
    const sb = sandbox()
    try {
      const acme = initWithSession(sb, 'tenant:acme')
      curate(sb, acme, 'tenant:acme', 'owner-made.md', 'The owner wrote this about the blue pipeline.')
      // a second owner, bob, accepts the next write: the manifest is now signed by bob
      const bobDir = join(sb.configDir, 'bob-home')
      const bobPub = join(sb.configDir, 'bob.pub')
      expect(sb.run(['keys', 'generate', 'bob', '--out', bobPub], {env: {ENGRAM_CONFIG_DIR: bobDir}}).code).toBe(0)
      expect(sb.run(['keys', 'trust', bobPub, '--role', 'owner']).code).toBe(0)
      const w = sb.run(['write', 'bob-made.md', '--scope', 'tenant:acme', '--json'], {input: 'Bob wrote this about the blue pipeline.', env: {ENGRAM_SESSION: acme}})
      // bob's machine pins the store's root first (R19), as a clone would
      const fp = sb.run(['keys', 'list', '--json']).json.items.find((k: any) => k.root).fingerprint
      expect(sb.run(['keys', 'trust', '--root', fp], {env: {ENGRAM_CONFIG_DIR: bobDir}}).code).toBe(0)
      const bobAccept = sb.run(['review', 'accept', w.json.proposal, '--digest', w.json.digest, '--json'], {env: {ENGRAM_CONFIG_DIR: bobDir, ENGRAM_KEY: join(bobDir, 'keys', 'bob.key')}})
      expect(bobAccept.code, bobAccept.stderr).toBe(0)
      const before = sb.run(['search', 'blue pipeline', '--json'])
      expect(before.json.hits.map((h: any) => h.path).sort()).toEqual(['bob-made.md', 'owner-made.md'])
      expect(existsSync(join(sb.configDir, 'cache', 'manifests'))).toBe(true)
      expect(sb.run(['keys', 'revoke', 'bob', '--reason', 'lost laptop']).code).toBe(0)
      // the owner's own file is unchanged, but the manifest that lists it is bob's
      for (const env of [{}, {ENGRAM_NO_FAST: '1'}]) expect(sb.run(['search', 'blue pipeline', '--json'], {env}).json.hits).toEqual([])
      // everything engram keeps beside the keys is the user's alone
      const walk = (dir: string): string[] => readdirSync(dir, {withFileTypes: true}).flatMap((d) => (d.isDirectory() ? [join(dir, d.name), ...walk(join(dir, d.name))] : [join(dir, d.name)]))
      const kept = walk(sb.configDir).filter((f) => !f.startsWith(bobDir) && !f.endsWith('bob.pub'))
      expect(kept.some((f) => f.includes('/trust/store-'))).toBe(true)
      for (const f of kept) expect([f, statSync(f).mode & 0o077]).toEqual([f, 0])
    } finally {
      rmSync(sb.dir, {recursive: true, force: true})
    }
  })
})
