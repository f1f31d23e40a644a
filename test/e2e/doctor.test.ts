/**
 * `engram doctor` through the built CLI: a healthy store passes; each planted fault is
 * named with its fix; `--fix` repairs only the safe ones (a key file's mode, a dead
 * process's lock) and changes nothing else; inside a session it is refused; around an
 * adopted project it says whether Claude Code is confined (README "Doctor").
 */
import {spawnSync} from 'node:child_process'
import {chmodSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync} from 'node:fs'
import {hostname} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {BIN, curate, git, initWithSession, sandbox, signConfig, tempDir} from '../helpers/cli.js'

const byCheck = (items: {check: string}[]) => Object.fromEntries(items.map((c) => [c.check, c]))

describe('engram doctor', () => {
  it('a healthy store: every check ok, exit 0; faults named with their fix; --fix repairs only the safe ones', () => {
    const sb = sandbox()
    const s = initWithSession(sb, 'tenant:acme')
    curate(sb, s, 'tenant:acme', 'plan.md', 'Acme is on the Gold plan.\n')
    const healthy = sb.run(['doctor', '--json'])
    expect(healthy.code, healthy.stdout + healthy.stderr).toBe(0)
    expect(healthy.json.items.filter((c: {status: string}) => c.status !== 'ok')).toEqual([])
    expect(Object.keys(byCheck(healthy.json.items))).toEqual(expect.arrayContaining(['git', 'history', 'config', 'keys', 'key modes', 'trust', 'lock', 'index', 'sync', 'queue', 'sessions', 'verify', 'confinement', 'vote weights']))
    expect(byCheck(healthy.json.items)['vote weights'].detail).toMatch(/models\/vote-lr\.json, shipped with engram: featuriser \d, \d+ weights/)

    // a key readable by others, and a lock left by a process that is gone
    const keyDir = join(sb.configDir, 'keys')
    const key = join(keyDir, readdirSync(keyDir).find((n) => n.endsWith('.key'))!)
    chmodSync(key, 0o644)
    const dead = spawnSync(process.execPath, ['-e', '']).pid
    writeFileSync(join(sb.dir, '.engram/lock'), JSON.stringify({pid: dead, host: hostname(), time: new Date().toISOString(), token: 'deadholder'}))
    const sick = sb.run(['doctor', '--json'])
    expect(sick.code).toBe(7)
    const c = byCheck(sick.json.items)
    expect(c['key modes']).toMatchObject({status: 'fail', fixable: true, fixed: false})
    expect(c['key modes'].fix).toContain(`chmod 600 '${key}'`)
    expect(c.lock).toMatchObject({status: 'warn', fixable: true})
    expect(c.lock.detail).toMatch(/which is gone/)
    expect(statSync(key).mode & 0o777).toBe(0o644)
    const text = sb.run(['doctor'])
    expect(text.stdout).toMatch(/^fail\tkey modes\t/m)
    expect(text.stderr).toMatch(/key modes: chmod 600 .* \(or `engram doctor --fix`\)/)

    const head = git(sb.dir, 'rev-parse', 'HEAD')
    const fixed = sb.run(['doctor', '--fix', '--json'])
    expect(fixed.code, fixed.stdout).toBe(0)
    expect(byCheck(fixed.json.items)['key modes'].fixed).toBe(true)
    expect(statSync(key).mode & 0o777).toBe(0o600)
    expect(sb.run(['doctor', '--json']).json.items.filter((x: {status: string}) => x.status !== 'ok')).toEqual([])
    // a fix commits nothing and trusts nothing
    expect(git(sb.dir, 'rev-parse', 'HEAD')).toBe(head)
  }, 300_000)

  it('a hand-edited memory fails verify (exit 7, the same envelope); inside a session doctor is refused', () => {
    const sb = sandbox()
    const s = initWithSession(sb, 'tenant:acme')
    curate(sb, s, 'tenant:acme', 'plan.md', 'Acme is on the Gold plan.\n')
    const file = join(sb.dir, 'tenant/acme/plan.md')
    writeFileSync(file, readFileSync(file, 'utf8').replace('Gold', 'Platinum'))
    const r = sb.run(['doctor', '--json'])
    expect(r.code).toBe(7)
    expect(r.json.error.message).toMatch(/check\(s\) failed: verify/)
    expect(byCheck(r.json.items).verify.detail).toMatch(/tenant\/acme\/plan\.md/)
    expect(sb.run(['doctor', '--no-verify', '--json']).code).toBe(0)
    const inside = sb.run(['doctor', '--json'], {env: {ENGRAM_SESSION: s}})
    expect(inside.code).toBe(3)
    expect(inside.stdout).not.toContain('Platinum')
  }, 300_000)

  it('around an adopted project: confined, or cooperative with what is missing', () => {
    const sb = sandbox()
    const project = join(sb.dir, 'web')
    mkdirSync(project)
    git(project, 'init', '-q')
    expect(sb.run(['adopt', 'claude-code', '--project', project]).code).toBe(0)
    const store = join(project, 'memory')
    const confined = sb.run(['doctor', '--base', store, '--json'])
    expect(confined.code, confined.stdout).toBe(0)
    expect(byCheck(confined.json.items).confinement).toMatchObject({status: 'ok'})
    expect(byCheck(confined.json.items).confinement.detail).toMatch(/is confined/)
    const settings = join(project, '.claude/settings.json')
    const loose = JSON.parse(readFileSync(settings, 'utf8'))
    loose.permissions.deny = loose.permissions.deny.filter((r: string) => !r.startsWith('Read('))
    writeFileSync(settings, JSON.stringify(loose))
    const cooperative = sb.run(['doctor', '--base', store, '--json'])
    expect(cooperative.code).toBe(0)
    expect(byCheck(cooperative.json.items).confinement).toMatchObject({status: 'warn'})
    expect(byCheck(cooperative.json.items).confinement.detail).toMatch(/^cooperative: .*Read\(\/memory\/\*\*\) is missing/)
  }, 300_000)

  it('weights the signed config names but engram cannot read: config sign warns, each write\'s learned vote abstains, doctor fails "vote weights"; a readable file passes', () => {
    const sb = sandbox()
    const s = initWithSession(sb, 'tenant:acme')
    const shipped = JSON.parse(readFileSync(new URL('../../models/vote-lr.json', import.meta.url), 'utf8'))
    const outside = tempDir('engram-weights-')
    const unknown = join(outside, 'w4.json')
    writeFileSync(unknown, JSON.stringify({...shipped, features: 4}))
    const config = join(sb.dir, '.engram/config.yml')
    const before = readFileSync(config, 'utf8')
    const named = (file: string) => before.replace(/^vote:\n/m, `vote:\n  learned:\n    weights: ${file}\n`)

    // shown and signed all the same (the file may be put in place after), with a warning each time
    writeFileSync(config, named(unknown))
    const shown = sb.run(['config', 'sign', '--json'])
    expect(shown.code, shown.stderr).toBe(0)
    expect(shown.json.warnings).toEqual([expect.stringContaining(`engram cannot read ${unknown} ("features" 4 is not a featuriser this engram has (1, 2 or 3))`)])
    expect(shown.stderr).toMatch(/warning: vote\.learned\.weights: .*abstains on every write/)
    signConfig(sb)
    expect(sb.run(['config', 'sign']).stderr).toMatch(/warning: vote\.learned\.weights: engram cannot read/)

    const w = sb.run(['write', 'pref.md', '--scope', 'tenant:acme', '--json'], {input: 'I prefer short answers.\n', env: {ENGRAM_SESSION: s}})
    expect(w.json.votes.find((v: {validator: string}) => v.validator === 'learned')).toMatchObject({verdict: 'abstain', reason: expect.stringMatching(/^weights unavailable: .*"features" 4/)})
    // the reason reaches the writing session: the loader's, without the owner's path
    expect(JSON.stringify(w.json.votes)).not.toContain(outside)
    const sick = sb.run(['doctor', '--json'])
    expect(sick.code).toBe(7)
    expect(sick.json.error.message).toMatch(/1 check\(s\) failed: vote weights/)
    expect(byCheck(sick.json.items)['vote weights']).toMatchObject({status: 'fail', fix: expect.stringContaining('`vote.learned.weights`')})
    expect(byCheck(sick.json.items)['vote weights'].detail).toBe(`the learned validator cannot read ${unknown}, named by the signed config (\`vote.learned.weights\`), so it abstains on every write: "features" 4 is not a featuriser this engram has (1, 2 or 3)`)
    const text = sb.run(['doctor'])
    expect(text.stdout).toMatch(/^fail\tvote weights\t/m)

    // a file that is not a weights file at all: the reason names the file once
    const other = join(outside, 'other.json')
    writeFileSync(other, JSON.stringify({format: 'nope'}))
    signConfig(sb, named(other))
    expect(byCheck(sb.run(['doctor', '--json']).json.items)['vote weights'].detail).toBe(`the learned validator cannot read ${other}, named by the signed config (\`vote.learned.weights\`), so it abstains on every write: not an engram-lr/1 weights file`)

    // a file that is not there yet (another host's path): the same check fails, and doctor --fix does not touch it
    const missing = join(outside, 'later.json')
    signConfig(sb, named(missing))
    const gone = sb.run(['doctor', '--fix', '--json'])
    expect(gone.code).toBe(7)
    expect(byCheck(gone.json.items)['vote weights'].detail).toMatch(new RegExp(`cannot read ${missing}.*ENOENT`))

    // the owner puts a readable copy there: the check passes and names it
    writeFileSync(missing, JSON.stringify(shipped))
    const healthy = sb.run(['doctor', '--json'])
    expect(healthy.code, healthy.stdout).toBe(0)
    expect(byCheck(healthy.json.items)['vote weights']).toMatchObject({status: 'ok', detail: `the learned validator reads ${missing}, named by the signed config (\`vote.learned.weights\`): featuriser ${shipped.features}, ${2 ** shipped.bits} weights`})
    expect(sb.run(['config', 'sign', '--json']).json.warnings).toEqual([])
    expect(before).not.toMatch(/^ {4}weights:/m)
  }, 300_000)

  it('README "Doctor" runs as written in a store', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
    const m = /^### Doctor\n[\s\S]*?^```\n([\s\S]*?)^```$/m.exec(readme)
    expect(m, 'README has a code block under "### Doctor"').toBeTruthy()
    const sb = sandbox()
    initWithSession(sb, 'tenant:acme')
    const bin = join(sb.configDir, 'bin')
    mkdirSync(bin)
    writeFileSync(join(bin, 'engram'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`, {mode: 0o755})
    const r = spawnSync('bash', ['-c', `set -euo pipefail\n${m![1]}`], {cwd: sb.dir, env: {...sb.env, PATH: `${bin}:${process.env.PATH}`}, encoding: 'utf8'})
    expect(r.status, `${r.stdout}${r.stderr}`).toBe(0)
    expect(r.stdout).toMatch(/^ok\tverify\t/m)
  }, 300_000)
})

