import {createHash} from 'node:crypto'
import {lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {fc, SEED} from '../unit/properties-seed.js'
import {git, initWithSession, sandbox, tempDir, type Sandbox} from '../helpers/cli.js'

/**
 * A fuzz run of the write and review commands through the built CLI: random bytes,
 * arguments, flags, stdin and session. Seeded (ENGRAM_FUZZ_SEED), a bounded number of
 * runs (ENGRAM_FUZZ_CLI_RUNS). Every run must end with a documented exit code (STANDARD
 * §5; 1 means "unexpected", a bug), no stack trace, nothing written outside the store,
 * and a store left exactly as it was by every refused command.
 */
// 50 runs take about 90 s on a loaded 2-core machine (each spawns node and git)
const RUNS = Number(process.env.ENGRAM_FUZZ_CLI_RUNS ?? 50)
// the documented exit codes (README "Exit codes"): 8 is a write kept but quarantined
const EXPECTED_CODES = new Set([0, 2, 3, 4, 5, 6, 7, 8])

/** Every file under `dir` with a hash of its bytes (a link by its target): a snapshot to compare. */
function snapshot(dir: string, skip: (rel: string) => boolean = () => false): Record<string, string> {
  const out: Record<string, string> = {}
  const walk = (rel: string) => {
    for (const name of readdirSync(join(dir, rel))) {
      const r = rel ? `${rel}/${name}` : name
      if (skip(r)) continue
      const st = lstatSync(join(dir, r))
      if (st.isSymbolicLink()) out[r] = `link:${readlinkSync(join(dir, r))}`
      else if (st.isDirectory()) walk(r)
      else out[r] = `${st.mode}:${createHash('sha256').update(readFileSync(join(dir, r))).digest('hex')}`
    }
  }
  walk('')
  return out
}

describe('fuzz: the CLI write and review commands', () => {
  let sb: Sandbox
  let session: string
  let proposal: {id: string; digest: string}
  let sibling: string
  const findings: string[] = []
  const codes: Record<number, number> = {}

  beforeAll(() => {
    sb = sandbox()
    session = initWithSession(sb, 'tenant:acme')
    const w = sb.run(['write', 'notes/a.md', '--scope', 'tenant:acme', '--json'], {input: 'Acme renews in March\n', env: {ENGRAM_SESSION: session}})
    if (w.json?.status !== 'pending') throw new Error(`setup write: ${w.stdout}${w.stderr}`)
    proposal = {id: w.json.proposal, digest: w.json.digest}
    // a folder beside the store that nothing may touch, holding a file an argument may name
    sibling = tempDir('engram-fuzz-sibling-')
    mkdirSync(join(sibling, 'notes'))
    writeFileSync(join(sibling, 'notes', 'a.md'), 'outside the store\n')
  })

  afterAll(() => {
    // which exits the runs reached: a run that only ever meets usage errors tests little
    console.log(`fuzz-cli seed ${SEED}: exit codes ${JSON.stringify(codes)}`)
    if (findings.length > 0) console.error(`fuzz findings (seed ${SEED}):\n${findings.join('\n')}`)
  })

  it(`${RUNS} seeded runs: documented exit codes, no stack trace, no write outside the store, refusals change nothing`, () => {
    // arguments an attacker would try, and random bytes (argv cannot carry NUL)
    const randomBytes = fc.uint8Array({maxLength: 24}).map((b) => Buffer.from(b).toString('latin1').replace(/\0/g, ''))
    const arg = fc.oneof(
      randomBytes,
      fc.string({unit: 'binary', maxLength: 30}).map((s) => s.replace(/\0/g, '')),
      fc.constantFrom(
        'notes/a.md', 'x.md', '../x.md', '../../etc/passwd.md', '/etc/x.md', 'a//b.md', '.git/config.md', 'a/./b.md', 'C:\\x.md', '%2e%2e/x.md', 'a\u202eb.md', 'a\nb.md',
        'org', 'tenant:acme', 'tenant:globex', 'run:x', 'tenant:../x', 'project:', 'run:' + 'a'.repeat(70),
        '-', '--', '--json', '--help', '-h', '--base', '--file', '--scope', '--digest', '--reason', '--key', '--origin', '--tags', '--title', '--base-blob', '--session', '--nope',
        'owner', 'dream', 'system', 'email', 'none', '0'.repeat(40), 'deadbeefdeadbeef', '', ' ', '\u0007', '\u001b[31m', '$(id)', '`id`', ';rm -rf ~', '*', '~', '%s%n',
      ),
    )
    const dynamic = fc.constantFrom('<proposal>', '<proposal-prefix>', '<digest>', '<digest-prefix>', '<sibling-file>', '<sibling-dir>', '<config-dir>', '<store-file>', '<session>')
    const command = fc.constantFrom(['write'], ['review', 'list'], ['review', 'show'], ['review', 'accept'], ['review', 'reject'], ['review'])
    // well-formed commands with fuzzed values reach past flag parsing; raw ones test the parser
    const value = fc.oneof(arg, dynamic)
    const opt = (flag: string, v: fc.Arbitrary<string> = value) => fc.option(v.map((x) => [flag, x]), {nil: undefined, freq: 2})
    const path = fc.oneof(value, fc.constantFrom('notes/a.md', 'notes/b.md', 'x.md'))
    const scope = fc.oneof(value, fc.constantFrom('tenant:acme', 'run:<session>', 'org', 'tenant:globex'))
    const shaped = fc.oneof(
      fc.tuple(path, scope, opt('--origin'), opt('--tags'), opt('--title'), opt('--base-blob'), opt('--file'), fc.boolean()).map(([p, sc, ...rest]) => {
        const json = rest.pop() as boolean
        return ['write', p, '--scope', sc, ...(rest as (string[] | undefined)[]).flatMap((o) => o ?? []), ...(json ? ['--json'] : [])]
      }),
      fc.tuple(fc.oneof(value, fc.constant('<proposal>'), fc.constant('<proposal-prefix>')), fc.oneof(value, fc.constant('<digest>'), fc.constant('<digest-prefix>')), opt('--key')).map(([id, d, k]) => ['review', 'accept', id, '--digest', d, ...(k ?? [])]),
      fc.tuple(fc.oneof(value, fc.constant('<proposal>')), value, opt('--key')).map(([id, r, k]) => ['review', 'reject', id, '--reason', r, ...(k ?? [])]),
      fc.tuple(fc.oneof(value, fc.constant('<proposal>')), fc.boolean()).map(([id, j]) => ['review', 'show', id, ...(j ? ['--json'] : [])]),
      fc.tuple(opt('--scope', scope), fc.boolean()).map(([sc, j]) => ['review', 'list', ...(sc ?? []), ...(j ? ['--json'] : [])]),
    )
    const raw = fc.tuple(command, fc.array(fc.oneof({weight: 3, arbitrary: arg}, {weight: 1, arbitrary: dynamic}), {maxLength: 8})).map(([c, a]) => [...c, ...a])
    const run = fc.record({
      argv: fc.oneof({weight: 3, arbitrary: shaped}, {weight: 1, arbitrary: raw}),
      stdin: fc.oneof(fc.constant(''), randomBytes, fc.uint8Array({maxLength: 4096}).map((b) => Buffer.from(b).toString('latin1')), fc.constantFrom('---js\nprocess.exit(9)\n---\nx', '---\na: &a [*a]\n---\nx', 'token ghp_' + 'A1b'.repeat(12))),
      session: fc.constantFrom('valid', 'none', 'garbage', 'other'),
    })
    const cases = fc.sample(run, {seed: SEED, numRuns: RUNS})
    const resolve = (a: string): string =>
      ({
        '<proposal>': proposal.id, '<proposal-prefix>': proposal.id.slice(0, 4), '<digest>': proposal.digest, '<digest-prefix>': proposal.digest.slice(0, 16),
        '<sibling-file>': join(sibling, 'notes', 'a.md'), '<sibling-dir>': sibling, '<config-dir>': sb.configDir, '<store-file>': join(sb.dir, '.engram', 'config.yml'), '<session>': session,
      })[a] ?? a

    // keys and pinned trust roots; the policy cache and the state file may be rewritten
    const keyFiles = () => snapshot(sb.configDir, (rel) => rel.startsWith('cache') || rel.startsWith('state'))
    const keysBefore = keyFiles()
    const siblingBefore = snapshot(sibling)
    const start = Date.now()
    // the store as it is; taken again only after a command that succeeded (and may change it)
    const take = () => ({head: git(sb.dir, 'rev-parse', 'HEAD').trim(), status: git(sb.dir, 'status', '--porcelain', '--untracked-files=all'), files: snapshot(sb.dir, (r) => r === '.git')})
    let before = take()
    for (const [i, c] of cases.entries()) {
      const argv = c.argv.map((a) => resolve(a).replace('<session>', session))
      const env: NodeJS.ProcessEnv = {ENGRAM_SESSION: {valid: session, none: '', garbage: 'zz-not-a-session', other: 'run-0000'}[c.session]}
      const r = sb.run(argv, {input: Buffer.from(c.stdin, 'latin1'), env})
      const where = `run ${i} (seed ${SEED}): engram ${JSON.stringify(argv)} session=${c.session} stdin=${JSON.stringify(c.stdin.slice(0, 60))} -> exit ${r.code}\n${(r.stderr + r.stdout).slice(0, 400)}`
      const out = r.stdout + r.stderr
      codes[r.code] = (codes[r.code] ?? 0) + 1
      if (!EXPECTED_CODES.has(r.code)) findings.push(`undocumented exit code: ${where}`)
      if (/^\s+at /m.test(out)) findings.push(`stack trace: ${where}`)
      if (/unexpected error/i.test(out)) findings.push(`unexpected error: ${where}`)
      if (r.code === 0 && argv[0] === 'review' && (argv[1] === 'accept' || argv[1] === 'reject') && !sb.run(['review', 'show', proposal.id]).code) {
        // still there: nothing consumed it
      } else if (r.code === 0 && argv[0] === 'review' && (argv[1] === 'accept' || argv[1] === 'reject')) {
        // the proposal was consumed: queue another, so later runs can still reach it
        const w = sb.run(['write', 'notes/a.md', '--scope', 'tenant:acme', '--json'], {input: `Acme renews in month ${i}\n`, env: {ENGRAM_SESSION: session}})
        if (w.json?.status === 'pending') proposal = {id: w.json.proposal, digest: w.json.digest}
      }
      if (r.code === 0) before = take()
      else {
        const after = take()
        if (after.head !== before.head) findings.push(`refused command moved HEAD: ${where}`)
        if (after.status !== before.status) findings.push(`refused command changed git status: ${where}`)
        expect.soft(after.files, `store files after a refusal: ${where}`).toEqual(before.files)
      }
      expect.soft(snapshot(sibling), `sibling folder: ${where}`).toEqual(siblingBefore)
      if (findings.length > 0) break
    }
    expect(findings).toEqual([])
    // the owner's keys are never written by these commands
    expect(keyFiles()).toEqual(keysBefore)
    // a bound on the whole run, generous: a hung command would take the spawn timeout (60 s)
    expect(Date.now() - start).toBeLessThan(RUNS * 8000)
  }, RUNS * 9000 + 60_000)
})
