/**
 * `engram verify` end to end: every curated file, manifest and key checked; each problem
 * named with its kind and path; exit 7 when any; limited to the scopes a session reads.
 */
import {execFileSync} from 'node:child_process'
import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'

import {curate, initWithSession, Sandbox, sandbox, testGitEnv} from '../helpers/cli.js'

const git = (dir: string, ...args: string[]) => execFileSync('git', args, {cwd: dir, env: testGitEnv(), encoding: 'utf8'})

describe('verify', () => {
  it('names a signed memory HEAD does not hold (a commit removed it behind the owner\'s back), which search and the vote would miss', () => {
    const sb = sandbox()
    const s = initWithSession(sb, 'tenant:acme')
    curate(sb, s, 'tenant:acme', 'db.md', 'The staging database listens on port 5432.\n')
    curate(sb, s, 'tenant:acme', 'cache.md', 'The staging cache is flushed nightly.\n')
    expect(sb.run(['verify', '--json']).code).toBe(0)
    // the file stays in the work tree, signed and listed; only HEAD's tree loses it
    git(sb.dir, 'rm', '-q', '--cached', 'tenant/acme/db.md')
    git(sb.dir, 'commit', '-q', '-m', 'tidy')
    const r = sb.run(['verify', '--json'])
    expect(r.code).toBe(7)
    expect(r.json.items).toEqual([expect.objectContaining({kind: 'not-in-head', scope: 'tenant:acme', path: 'tenant/acme/db.md'})])
    expect(r.json.items[0].detail).toMatch(/HEAD's tree holds no such file/)
    expect(r.json.error).toMatchObject({code: 'verification', exitCode: 7, message: "1 signed memory file(s) of 2 checked are not in HEAD's tree; search and the vote on a write do not see them."})
    expect(r.json.error.nextStep).toMatch(/git log -- <path>.*commit the signed files back/)
    // a session of another tenant is told nothing of it
    const g = sb.run(['session', 'start', '--agent', 'other', '--assigned', 'tenant:globex', '--json']).json.id
    const other = sb.run(['verify', '--json'], {env: {ENGRAM_SESSION: g}})
    expect(other.code).toBe(0)
    expect(other.stdout).not.toContain('db.md')
    git(sb.dir, 'add', 'tenant/acme/db.md')
    git(sb.dir, 'commit', '-q', '-m', 'put back')
    expect(sb.run(['verify', '--json']).code).toBe(0)
  })

  it('passes an empty store: exit 0, the list envelope with no items, "ok" on stdout', () => {
    const sb = sandbox()
    initWithSession(sb)
    const r = sb.run(['verify', '--json'])
    expect(r.code).toBe(0)
    expect(r.json).toEqual({items: [], total: 0, checked: 0})
    const human = sb.run(['verify'])
    expect(human.code).toBe(0)
    // the verdict is the result: stdout, where `engram verify | tee log` keeps it
    expect(human.stdout).toBe('ok: 0 curated file(s) verified\n')
    expect(human.stderr).toBe('')
  })

  describe('over two tenants', () => {
    let sb: Sandbox
    let acme: string
    const globexFile = 'tenant/globex/billing.md'

    /** an agent write to its assigned scope, accepted by the owner */
    function curate(session: string, scope: string, path: string, text: string) {
      const w = sb.run(['write', path, '--scope', scope, '--json'], {env: {ENGRAM_SESSION: session}, input: `${text}\n`})
      if (w.json?.status !== 'pending') throw new Error(`expected a pending proposal, got ${w.code}: ${w.stderr}${w.stdout}`)
      const a = sb.run(['review', 'accept', w.json.proposal, '--digest', w.json.digest, '--json'])
      if (a.code !== 0) throw new Error(`accept failed: ${a.stderr}${a.stdout}`)
    }

    beforeAll(() => {
      sb = sandbox()
      acme = initWithSession(sb, 'tenant:acme')
      const globex = sb.run(['session', 'start', '--agent', 'claude-code', '--assigned', 'tenant:globex', '--json']).json.id
      curate(acme, 'tenant:acme', 'billing.md', 'Acme renews its contract in March.')
      curate(globex, 'tenant:globex', 'billing.md', 'Globex pays by card.')
      // globex's file is edited by hand afterwards
      const abs = join(sb.dir, globexFile)
      writeFileSync(abs, readFileSync(abs, 'utf8').replace('by card.', 'by wire to IBAN X.'))
    })

    it('names each problem with kind, path and detail, exit 7; the JSON keeps the success shape and adds the error', () => {
      const r = sb.run(['verify', '--json'])
      expect(r.code).toBe(7)
      expect(Object.keys(r.json)).toEqual(['items', 'total', 'checked', 'error'])
      expect(r.json.error).toMatchObject({code: 'verification', exitCode: 7, message: '1 problem(s) in 2 curated file(s) checked; files with problems are not served.'})
      expect(r.json.error.data).toBeUndefined()
      expect(r.json.checked).toBe(2)
      expect(r.json.total).toBe(1)
      expect(r.json.items).toEqual([
        {kind: 'bad-signature', scope: 'tenant:globex', path: globexFile, detail: expect.stringMatching(/does not match this content at this path/)},
      ])
      const human = sb.run(['verify'])
      expect(human.code).toBe(7)
      expect(human.stdout).toMatch(new RegExp(`^bad-signature\\t${globexFile}\\t.+$`, 'm'))
      expect(human.stderr).toMatch(/1 problem\(s\) in 2 curated file\(s\)/)
    })

    it('--scope checks one scope', () => {
      expect(sb.run(['verify', '--scope', 'tenant:acme', '--json']).json).toEqual({items: [], total: 0, checked: 1})
      expect(sb.run(['verify', '--scope', 'tenant:globex', '--json']).code).toBe(7)
      expect(sb.run(['verify', '--scope', 'Tenant:../x', '--json']).code).toBe(2)
    })

    it('inside a session only the scopes it may read are checked, and other tenants are never named', () => {
      const env = {ENGRAM_SESSION: acme}
      const r = sb.run(['verify', '--json'], {env})
      expect(r.code).toBe(0)
      expect(r.json).toEqual({items: [], total: 0, checked: 1})
      const other = sb.run(['verify', '--scope', 'tenant:globex', '--json'], {env})
      expect(other.code).toBe(3)
      expect(other.stdout + other.stderr).not.toContain(globexFile)
    })

    it('a clean checkout verifies again', () => {
      git(sb.dir, 'checkout', '-q', '--', globexFile)
      expect(sb.run(['verify', '--json']).json).toEqual({items: [], total: 0, checked: 2})
    })
  })
})
