import {mkdirSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {git, sandbox} from '../helpers/cli.js'

/**
 * User text never reaches git in option position (README "Git"): a store in a folder
 * named like an option puts that name at the start of every path engram gives git, and a
 * revision starting with `-` is refused as a revision, never passed as an option.
 */
describe('paths and revisions starting with "-"', () => {
  it('a store in a repository folder named "-p" writes, accepts, searches, shows history and verifies', () => {
    const sb = sandbox()
    git(sb.dir, 'init', '-q')
    git(sb.dir, 'commit', '-q', '--allow-empty', '-m', 'the project')
    const store = join(sb.dir, '-p')
    mkdirSync(store)
    const run = (args: string[], opts: {input?: string; env?: NodeJS.ProcessEnv} = {}) => sb.run(args, {...opts, cwd: store})
    // sharing the project's repository, so every path engram gives git starts with "-p/"
    expect(run(['init', '--shared-history', '--json']).code).toBe(0)
    const session = run(['session', 'start', '--agent', 'claude-code', '--assigned', 'tenant:acme', '--json']).json.id as string
    const w = run(['write', 'billing.md', '--scope', 'tenant:acme', '--json'], {input: 'Acme renews in March\n', env: {ENGRAM_SESSION: session}})
    expect(w.json?.status, w.stdout + w.stderr).toBe('pending')
    const a = run(['review', 'accept', w.json.proposal, '--digest', w.json.digest, '--json'])
    expect(a.code, a.stdout + a.stderr).toBe(0)
    const s = run(['search', 'renews', '--json'], {env: {ENGRAM_SESSION: session}})
    expect(s.json?.hits?.map((h: {path: string}) => h.path), s.stdout + s.stderr).toContain('billing.md')
    const h = run(['history', 'billing.md', '--scope', 'tenant:acme', '--json'])
    expect(h.code, h.stdout + h.stderr).toBe(0)
    expect(JSON.stringify(h.json)).toContain('"signature":"verified"')
    expect(run(['verify']).code).toBe(0)
    // every engram change committed, and git's own index in step with HEAD
    expect(git(sb.dir, 'status', '--porcelain', '--untracked-files=no')).toBe('')
    expect(git(sb.dir, 'ls-files', '--', '-p/tenant/acme/billing.md').trim()).toBe('-p/tenant/acme/billing.md')

    const r = run(['restore', 'billing.md', '--scope', 'tenant:acme', '--to=-p', '--json'])
    expect(r.code).toBe(2)
    expect(r.json?.error?.message ?? r.stdout).toMatch(/not a revision/)
  })
})
