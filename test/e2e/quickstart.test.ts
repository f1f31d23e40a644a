/**
 * The README's Quick start, run literally (issue #16): the block as it stands in README.md,
 * line by line in one bash, in a fresh home folder, each line's exit code checked (0, or
 * the `exit N` its comment announces). The ids and digest come from the previous command's
 * output through the block's own `jq` lines: an unmarked placeholder (`7f3k`, `9c1e…`)
 * fails as an unknown id, an unset variable fails under `set -u`.
 *
 * Only the install lines (`npm ci`, `npm link`) are not run: the built CLI is put on PATH
 * as `engram` instead, which is what `npm link` does. `engram init` asks its passphrase at
 * the terminal; here ENGRAM_PASSPHRASE_FILE answers it (README "Keys").
 */
import {spawnSync} from 'node:child_process'
import {chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, describe, expect, it} from 'vitest'

import {BIN, sandbox, tempDir} from '../helpers/cli.js'

const README = readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8')

/** The first ```sh block after a heading ("## Quick start", "### Sync: …"). */
function blockAfter(readme: string, heading: string): string[] {
  const at = readme.indexOf(`\n${heading}`)
  const m = at < 0 ? null : /^```sh\n([\s\S]*?)^```$/m.exec(readme.slice(at))
  if (!m) throw new Error(`README.md has no \`\`\`sh block under "${heading}"`)
  return m[1].split('\n')
}
const quickStart = (readme: string) => blockAfter(readme, '## Quick start')

/** A block as one bash script that checks each line's exit code (0, or the `exit N` its comment announces). */
function checkedScript(lines: string[]): string {
  const script = ['set -u -o pipefail']
  lines.forEach((line, i) => {
    const expected = /#.*\bexit (\d)\b/.exec(line)?.[1] ?? '0'
    script.push(line)
    script.push(`__rc=$?; if [ "$__rc" != "${expected}" ]; then echo "QUICKSTART step ${i} exited $__rc, expected ${expected}" >&2; exit 99; fi`)
  })
  return script.join('\n')
}

// the block uses jq, as the README says; a machine without it cannot follow it either
describe.skipIf(spawnSync('jq', ['--version']).status !== 0)('README Quick start', () => {
  const home = tempDir('engram-home-')
  const checkout = tempDir('engram-checkout-')
  afterAll(() => {
    rmSync(home, {recursive: true, force: true})
    rmSync(checkout, {recursive: true, force: true})
  })

  it('runs as written: every line exits as its comment says', () => {
    const lines = quickStart(README)
    const run = lines.filter((l) => l.trim() !== '' && !/^npm (ci|link)\b/.test(l))
    expect(run.length).toBeGreaterThan(15)
    const script = checkedScript(run)
    const bin = join(home, '.bin')
    mkdirSync(bin)
    writeFileSync(join(bin, 'engram'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`)
    chmodSync(join(bin, 'engram'), 0o755)
    const sb = sandbox()
    // started where a newcomer stands: a checkout of engram (a git repository), which the block must leave alone
    spawnSync('git', ['init', '-q'], {cwd: checkout})
    const r = spawnSync('bash', ['-c', script], {
      cwd: checkout,
      env: {...sb.env, HOME: home, PATH: `${bin}:${sb.env.PATH}`},
      input: '',
      encoding: 'utf8',
      timeout: 280_000,
    })
    const step = /QUICKSTART step (\d+)/.exec(r.stderr)?.[1]
    expect(r.status, `${step === undefined ? '' : `failed at: ${run[Number(step)]}\n`}${r.stderr}\n${r.stdout.slice(-3000)}`).toBe(0)
    expect(existsSync(join(checkout, '.engram')), 'the Quick start made a store in the folder it started in').toBe(false)
    expect(existsSync(join(home, 'memory', '.engram'))).toBe(true)
    // what each step is there to show
    expect(r.stdout).toMatch(/^accepted [0-9a-z]+: create tenant:acme\/billing\.md v1, signed by owner/m)
    expect(r.stdout).toMatch(/^rejected [0-9a-z]+: tenant:acme\/payment\.md$/m)
    expect(r.stdout).toMatch(/<engram-[0-9a-f]+ scope="tenant:acme" path="billing\.md"[^>]*>\nAcme renews in March\n<\/engram-/)
    expect(r.stdout).toContain('"path": "billing.md"')
    expect(r.stdout).toMatch(/ok: 1 curated file\(s\) verified\n$/)
    expect(r.stderr).toContain('Scope org is read-only for agents.')
    expect(r.stderr).toContain('may not read scope tenant:globex')
  }, 300_000)

  /** A README block under `heading`, line by line in one bash, in a fresh home with the built CLI as `engram`; its output, once every line exited as announced. */
  function runBlock(heading: string, opts: {ownTmp?: boolean} = {}): string {
    const dir = tempDir('engram-home-')
    const lines = blockAfter(README, heading).filter((l) => l.trim() !== '')
    const bin = join(dir, '.bin')
    mkdirSync(bin)
    writeFileSync(join(bin, 'engram'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`)
    chmodSync(join(bin, 'engram'), 0o755)
    const sb = sandbox()
    const r = spawnSync('bash', ['-c', checkedScript(lines)], {
      cwd: dir,
      env: {...sb.env, HOME: dir, PATH: `${bin}:${sb.env.PATH}`, ...(opts.ownTmp ? {TMPDIR: dir} : {})},
      input: '',
      encoding: 'utf8',
      timeout: 280_000,
    })
    const step = /QUICKSTART step (\d+)/.exec(r.stderr)?.[1]
    expect(r.status, `${step === undefined ? '' : `failed at: ${lines[Number(step)]}\n`}${r.stderr}\n${r.stdout.slice(-3000)}`).toBe(0)
    rmSync(dir, {recursive: true, force: true})
    return r.stdout
  }

  it('the "What the user typed" block runs as written: the user\'s own values pass clean, one nobody typed is named', () => {
    // mktemp's folders go inside the home the block runs in, removed with it
    const out = runBlock('#### What the user typed', {ownTmp: true})
    expect(out).toBe('["pending",["sensitive"]]\norigin: direct_chat, but the user typed none of "billing@acme-payments.example" in this session\n')
  }, 300_000)

  it('the "Other harnesses" block runs as written: the prompt fed by `session prompt` attests its values, one it did not hold is named', () => {
    const out = runBlock('#### Other harnesses: `session prompt`', {ownTmp: true})
    expect(out).toMatch(/^session s-[0-9a-z]+: recorded a prompt stating 2 values\npending\norigin: direct_chat, but the user typed none of "billing@acme-payments.example" in this session\n$/)
  }, 300_000)

  it('the "Store identity" block runs as written: two stores of one owner key, the other\'s signed config not in force', () => {
    const out = runBlock('### Store identity', {ownTmp: true})
    expect(out).toMatch(/^identity: [0-9a-f]{32} \(pinned on this machine\)\nCONFIG NOT SIGNED: \.engram\/config\.yml is not in force \(config\.sig was signed for store [0-9a-f]{32}, not this one \([0-9a-f]{32}\)\); in force: commit [0-9a-f]+ \(serial 1\)\n$/)
  }, 300_000)

  it('the Sync block runs as written: two hosts, one remote, a proposal written on A accepted on B and served on A', () => {
    const out = runBlock('### Sync: many hosts, one memory')
    expect(out).toMatch(/Acme renews in March/)
    expect(out).toMatch(/^accepted [0-9a-z]+: create tenant:acme\/billing\.md v1/m)
    expect(out).toMatch(/ok: 1 curated file\(s\) verified\n$/)
  }, 300_000)
})
