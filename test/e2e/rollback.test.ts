import {execFileSync} from 'node:child_process'
import {rmSync} from 'node:fs'
import {describe, expect, it} from 'vitest'

import {initWithSession, sandbox, testGitEnv} from '../helpers/cli.js'

const git = (dir: string, ...args: string[]) => execFileSync('git', args, {cwd: dir, env: testGitEnv(), encoding: 'utf8'}).trim()

describe('manifest rollback', () => {
  it('detects an old signed manifest put back together with the old file it lists', () => {
    const sb = sandbox()
    const s = initWithSession(sb)
    const propose = (text: string) => sb.run(['write', 'plan.md', '--scope', 'tenant:acme', '--json'], {input: text, env: {ENGRAM_SESSION: s}}).json
    const p1 = propose('The plan is to renew in March.')
    expect(sb.run(['review', 'accept', p1.proposal, '--digest', p1.digest]).code).toBe(0)
    const v1 = git(sb.dir, 'rev-parse', 'HEAD')
    const p2 = propose('The plan changed: we renew in May, after the audit.')
    expect(p2.status).toBe('pending')
    expect(sb.run(['review', 'accept', p2.proposal, '--digest', p2.digest]).code).toBe(0)
    expect(sb.run(['verify', '--json']).code).toBe(0)

    // The agent puts back version 1 of the file and of the manifest, both validly signed.
    git(sb.dir, 'checkout', v1, '--', 'tenant/acme/plan.md', '.engram/manifests/tenant_acme.json')
    git(sb.dir, 'commit', '-qm', 'innocent-looking revert')
    const read = sb.run(['read', 'plan.md', '--scope', 'tenant:acme', '--json'], {env: {ENGRAM_SESSION: s}})
    expect(read.code, read.stderr + read.stdout).toBe(4)
    const v = sb.run(['verify', '--json'])
    expect(v.code).toBe(7)
    expect(JSON.stringify(v.json)).toMatch(/rolled-back/)

    // A machine without the local witness (fresh key folder) still sees it in git history.
    rmSync(`${sb.configDir}/state`, {recursive: true, force: true})
    const again = sb.run(['verify', '--json'])
    expect(again.code).toBe(7)
    expect(JSON.stringify(again.json)).toMatch(/serial 1 is older than serial 2/)
  })
})
