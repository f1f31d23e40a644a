import {mkdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {git, initWithSession, sandbox} from '../helpers/cli.js'

// Counterexamples the property tests found, performed through the real CLI and git.
describe('fuzz findings through the CLI', () => {
  it('a memory file whose YAML aliases loop or explode is not served (exit 4, naming why), never a crash or a hang', () => {
    const sb = sandbox()
    const s = initWithSession(sb, 'tenant:acme')
    let bomb = 'a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n'
    for (let i = 1; i < 10; i++) bomb += `a${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(', ')}]\n`
    mkdirSync(join(sb.dir, 'run', s), {recursive: true})
    writeFileSync(join(sb.dir, 'run', s, 'loop.md'), '---\nid: a\nx: &a [*a]\n---\nbody\n')
    writeFileSync(join(sb.dir, 'run', s, 'bomb.md'), `---\nid: b\n${bomb}---\nbody\n`)
    git(sb.dir, 'add', '-A')
    git(sb.dir, 'commit', '-qm', 'plant alias files')
    const head = git(sb.dir, 'rev-parse', 'HEAD')
    for (const file of ['loop.md', 'bomb.md']) {
      const start = Date.now()
      const r = sb.run(['read', file, '--scope', `run:${s}`], {env: {ENGRAM_SESSION: s}})
      // read answers through the one serving gate (ServingGate.serveFile): a file it cannot parse is not served
      expect(r.code, r.stderr).toBe(4)
      expect(r.stderr).toMatch(/is not served: .*YAML aliases are not allowed/)
      expect(r.stderr).not.toMatch(/^\s+at |unexpected error/m)
      expect(Date.now() - start).toBeLessThan(30_000)
    }
    // listing the scope still works (the broken files are not served)
    const l = sb.run(['list', '--scope', `run:${s}`], {env: {ENGRAM_SESSION: s}})
    expect(l.code, l.stderr).toBe(0)
    expect(l.stderr).not.toMatch(/^\s+at |unexpected error/m)
    expect(git(sb.dir, 'rev-parse', 'HEAD')).toBe(head)
  })
})
