/**
 * engram works on a machine with no git identity (a fresh CI box, a new laptop): its own
 * commits fall back to `engram <engram@localhost>` when neither git config nor the
 * environment names anyone, and a configured identity is used as it is.
 */
import {execFileSync} from 'node:child_process'
import {describe, expect, it} from 'vitest'

import {Sandbox, sandbox, tempDir} from '../helpers/cli.js'

/** A sandbox whose HOME, XDG config and system config hold no git identity, and no GIT_* identity variables. */
function noIdentity(): Sandbox {
  const sb = sandbox()
  const home = tempDir('engram-home-')
  for (const k of ['GIT_AUTHOR_NAME', 'GIT_AUTHOR_EMAIL', 'GIT_COMMITTER_NAME', 'GIT_COMMITTER_EMAIL', 'EMAIL']) delete sb.env[k]
  Object.assign(sb.env, {HOME: home, XDG_CONFIG_HOME: `${home}/.config`, GIT_CONFIG_NOSYSTEM: '1'})
  return sb
}

const gitIn = (sb: Sandbox, ...args: string[]) => execFileSync('git', args, {cwd: sb.dir, env: sb.env, encoding: 'utf8'}).trim()

describe('no git identity configured', () => {
  it('init, a direct write, a proposal and its accept all commit, as engram <engram@localhost>', () => {
    const sb = noIdentity()
    // the premise: git itself has no identity here
    expect(() => gitIn(sb, 'var', 'GIT_COMMITTER_IDENT')).toThrow()
    const init = sb.run(['init', '--json'])
    expect(init.code, init.stderr + init.stdout).toBe(0)
    const s = sb.run(['session', 'start', '--agent', 'a', '--assigned', 'tenant:acme', '--json'])
    expect(s.code, s.stderr).toBe(0)
    const session = {ENGRAM_SESSION: s.json.id}
    const direct = sb.run(['write', 'scratch.md', '--scope', `run:${s.json.id}`, '--json'], {input: 'A scratch note.\n', env: session})
    expect(direct.json?.status, direct.stderr + direct.stdout).toBe('committed')
    const w = sb.run(['write', 'fact.md', '--scope', 'tenant:acme', '--json'], {input: 'Deploys run on Tuesdays.\n', env: session})
    expect(w.json?.status, w.stderr + w.stdout).toBe('pending')
    const a = sb.run(['review', 'accept', w.json.proposal, '--digest', w.json.digest, '--json'])
    expect(a.code, a.stderr + a.stdout).toBe(0)
    const idents = gitIn(sb, 'log', '--format=%an <%ae>|%cn <%ce>').split('\n')
    expect(idents.length).toBeGreaterThanOrEqual(4)
    for (const line of idents) expect(line).toBe('engram <engram@localhost>|engram <engram@localhost>')
    expect(sb.run(['verify', '--json']).code).toBe(0)
  })

  it('a configured identity is kept: the fallback applies only when none is set', () => {
    const sb = noIdentity()
    execFileSync('git', ['init', '-q'], {cwd: sb.dir, env: sb.env})
    gitIn(sb, 'config', 'user.name', 'Ada Owner')
    gitIn(sb, 'config', 'user.email', 'ada@example.com')
    expect(sb.run(['init', '--json']).code).toBe(0)
    expect(gitIn(sb, 'log', '-1', '--format=%an <%ae>')).toBe('Ada Owner <ada@example.com>')
  })
})
