import {execFileSync} from 'node:child_process'
import {existsSync, readdirSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {curate, initWithSession, sandbox, tempDir} from '../helpers/cli.js'

const git = (dir: string, ...args: string[]) => execFileSync('git', args, {cwd: dir, encoding: 'utf8'}).trim()

describe('root pins (R19)', () => {
  it('keys trust: bad uses are usage errors and write nothing', () => {
    const sb = sandbox()
    initWithSession(sb)
    const before = git(sb.dir, 'rev-parse', 'HEAD')
    const trustDir = join(sb.configDir, 'trust')
    const pins = readdirSync(trustDir)
    for (const args of [['keys', 'trust'], ['keys', 'trust', 'x.pub'], ['keys', 'trust', '--root', '1234'], ['keys', 'trust', 'x.pub', '--root', 'ab'.repeat(32)]]) {
      const r = sb.run([...args, '--json'])
      expect(r.code, `${args.join(' ')}: ${r.stdout}`).toBe(2)
      expect(r.json.error.message).toBeTruthy()
    }
    expect(git(sb.dir, 'rev-parse', 'HEAD')).toBe(before)
    expect(readdirSync(trustDir)).toEqual(pins)
  })

  it('in an unpinned clone, a new key cannot bootstrap itself as the first owner; the root is pinned by fingerprint instead', () => {
    const sb = sandbox()
    const s = initWithSession(sb)
    curate(sb, s, 'tenant:acme', 'plan.md', 'The plan is to renew in March.')
    const clone = join(tempDir(), 'clone')
    git(sb.dir, 'clone', '-q', sb.dir, clone)
    const other = {ENGRAM_CONFIG_DIR: tempDir('engram-keys-')}
    const pub = join(other.ENGRAM_CONFIG_DIR, 'mallory.pub')
    expect(sb.run(['keys', 'generate', 'mallory', '--out', pub], {env: other, cwd: clone}).code).toBe(0)
    const grab = sb.run(['keys', 'trust', pub, '--role', 'owner', '--key', 'mallory', '--json'], {env: other, cwd: clone})
    expect(grab.code, grab.stdout).toBe(3)
    expect(grab.json.error.nextStep).toMatch(/engram keys trust --root [0-9a-f]{64}/)
    expect(existsSync(join(clone, '.engram/keys/mallory.pub'))).toBe(false)
    const list = sb.run(['keys', 'list', '--json'], {env: other, cwd: clone})
    expect(list.json.items.filter((k: any) => k.status === 'trusted')).toEqual([])
    expect(list.json.root_not_pinned.roots).toHaveLength(1)
    expect(list.stderr).toContain(list.json.root_not_pinned.command)
  })

  it('a shallow clone fails closed: its manifests\' history cannot be read, so nothing curated is served', () => {
    const sb = sandbox()
    const s = initWithSession(sb)
    curate(sb, s, 'tenant:acme', 'plan.md', 'The plan is to renew in March.')
    curate(sb, s, 'tenant:acme', 'plan.md', 'The plan changed: we renew in May.')
    const clone = join(tempDir(), 'shallow')
    git(sb.dir, 'clone', '-q', '--depth', '1', `file://${sb.dir}`, clone)
    const fp = sb.run(['keys', 'list', '--json']).json.items.find((k: any) => k.root).fingerprint
    expect(sb.run(['keys', 'trust', '--root', fp], {cwd: clone}).code).toBe(0)
    const read = sb.run(['read', 'plan.md', '--scope', 'tenant:acme', '--json'], {cwd: clone})
    expect(read.code).toBe(7)
    expect(read.json.error.message).toMatch(/shallow/)
    expect(read.stdout).not.toMatch(/renew in May/)
    git(clone, 'fetch', '-q', '--unshallow')
    expect(sb.run(['read', 'plan.md', '--scope', 'tenant:acme', '--json'], {cwd: clone}).json.body).toMatch(/renew in May/)
  })
})
