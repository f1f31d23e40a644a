/**
 * `engram keys generate|trust|revoke|list` end to end: private keys 0600, encrypted, and never
 * overwritten without --force confirmed at a terminal; only a trusted owner adds or revokes keys; what the store
 * trusts is what `keys list` says and what accept, read and verify act on.
 */
import {execFileSync, spawnSync} from 'node:child_process'
import {existsSync, readFileSync, statSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'

import {BIN, initWithSession, RunResult, Sandbox, sandbox, testGitEnv} from '../helpers/cli.js'
import {runInTerminal, runWithoutTerminal} from '../helpers/pty.js'

const git = (dir: string, ...args: string[]) => execFileSync('git', args, {cwd: dir, env: testGitEnv(), encoding: 'utf8'})
const head = (dir: string) => git(dir, 'rev-parse', 'HEAD').trim()

function ok(r: RunResult): RunResult {
  if (r.code !== 0) throw new Error(`exit ${r.code}: ${r.stderr}${r.stdout}`)
  return r
}

const keyOf = (sb: Sandbox, name: string) => sb.run(['keys', 'list', '--json']).json.items.find((k: {name: string}) => k.name === name)

describe('keys generate', () => {
  it('writes a 0600 private key, prints the public record, and never overwrites without --force', () => {
    const sb = sandbox()
    const text = sb.run(['keys', 'generate', '--name', 'bob'])
    expect(text.code).toBe(0)
    expect(text.stdout).toMatch(/^engram public key [0-9a-f]{16} name=bob role=owner\n\{.*"public_key":.*\}\n$/)
    const file = join(sb.configDir, 'keys/bob.key')
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(statSync(join(sb.configDir, 'keys')).mode & 0o777).toBe(0o700)
    const before = readFileSync(file, 'utf8')
    expect(before).not.toContain(text.stdout.split('\n')[1]) // the private file is not the public record

    const again = sb.run(['keys', 'generate', 'bob', '--json'])
    expect(again.code).toBe(3)
    expect(again.json.error.message).toMatch(/already exists/)
    expect(again.json.error.nextStep).toMatch(/--force/)
    expect(readFileSync(file, 'utf8')).toBe(before)

    // --force is confirmed at the terminal: refused without one, done when the name is typed
    const blind = runWithoutTerminal([process.execPath, BIN, 'keys', 'generate', '--name', 'bob', '--force', '--json'], {env: sb.env, cwd: sb.dir})
    expect(blind.code).toBe(3)
    expect(readFileSync(file, 'utf8')).toBe(before)
    const forced = runInTerminal([process.execPath, BIN, 'keys', 'generate', '--name', 'bob', '--force', '--out', 'bob.pub', '--json'], {
      env: sb.env, cwd: sb.dir, answers: [{expect: 'to confirm: ', send: 'bob'}],
    })
    expect(forced.code, forced.output).toBe(0)
    const json = JSON.parse(forced.output.slice(forced.output.indexOf('{')))
    expect(json.privateKeyFile).toBe(file)
    expect(readFileSync(file, 'utf8')).not.toBe(before)
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(readFileSync(join(sb.dir, 'bob.pub'), 'utf8')).toBe(json.record)
    expect(json.keyid).toMatch(/^[0-9a-f]{16}$/)
    expect(json.record).toContain(json.keyid)

    // an existing --out file is not overwritten either, and no key is made
    const out = sb.run(['keys', 'generate', '--name', 'carol', '--out', 'bob.pub', '--json'])
    expect(out.code).toBe(3)
    expect(existsSync(join(sb.configDir, 'keys/carol.key'))).toBe(false)
  })

  it('refuses a bad or missing name (exit 2)', () => {
    const sb = sandbox()
    expect(sb.run(['keys', 'generate', '--name', '../evil']).code).toBe(2)
    expect(sb.run(['keys', 'generate', '--name', 'Bob']).code).toBe(2)
    expect(sb.run(['keys', 'generate']).code).toBe(2)
    expect(sb.run(['keys', 'generate', 'a', '--name', 'b']).code).toBe(2)
    expect(existsSync(join(sb.configDir, 'keys'))).toBe(false)
  })
})

describe('keys trust, list and revoke', () => {
  let sb: Sandbox
  let session: string
  const pub = (name: string) => join(sb.configDir, `${name}.pub`)

  beforeAll(() => {
    sb = sandbox()
    session = initWithSession(sb)
    for (const n of ['bob', 'carol', 'dreamer', 'mallory']) ok(sb.run(['keys', 'generate', '--name', n, '--out', pub(n), '--json']))
  })

  it('lists the store owner from init as a trusted root whose private key is here', () => {
    const r = sb.run(['keys', 'list', '--json'])
    expect(r.code).toBe(0)
    expect(r.json.items).toEqual([expect.objectContaining({name: 'owner', role: 'owner', status: 'trusted', root: true, local: true})])
  })

  it('an owner trusts a key with a role: endorsed record, one commit, listed as trusted', () => {
    const before = head(sb.dir)
    const r = sb.run(['keys', 'trust', pub('bob'), '--role', 'owner', '--key', 'owner', '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.json).toMatchObject({name: 'bob', role: 'owner', path: '.engram/keys/bob.pub', changed: true})
    expect(git(sb.dir, 'rev-list', '--count', `${before}..HEAD`).trim()).toBe('1')
    const msg = git(sb.dir, 'log', '-1', '--format=%B')
    expect(msg).toContain(`Trust key bob (${r.json.keyid}) as owner`)
    expect(msg).toMatch(/^Engram-Reviewed-By: owner \([0-9a-f]{16}\)$/m)
    expect(git(sb.dir, 'status', '--porcelain').trim()).toBe('')
    expect(keyOf(sb, 'bob')).toMatchObject({keyid: r.json.keyid, role: 'owner', status: 'trusted', reason: 'endorsed by owner', local: true})
    const human = sb.run(['keys', 'list'])
    expect(human.stdout).toMatch(new RegExp(`^bob\\t${r.json.keyid}\\towner\\ttrusted`, 'm'))

    // trusting it again changes nothing
    const again = sb.run(['keys', 'trust', pub('bob'), '--role', 'owner', '--key', 'owner', '--json'])
    expect(again.json.changed).toBe(false)
    expect(git(sb.dir, 'rev-list', '--count', `${before}..HEAD`).trim()).toBe('1')
  })

  it('a dreamer key is trusted as a dreamer, from stdin, under a chosen name', () => {
    const r = sb.run(['keys', 'trust', '-', '--role', 'dreamer', '--name', 'nightly', '--key', 'owner', '--json'], {input: readFileSync(pub('dreamer'))})
    expect(r.code, r.stderr).toBe(0)
    expect(keyOf(sb, 'nightly')).toMatchObject({role: 'dreamer', status: 'trusted'})
  })

  it('refuses trust from a dreamer, an untrusted key, an agent session; bad input changes nothing', () => {
    const before = head(sb.dir)
    const t = (args: string[], env?: NodeJS.ProcessEnv) => sb.run(['keys', 'trust', ...args, '--json'], {env})
    expect(t([pub('mallory'), '--role', 'owner', '--key', 'dreamer']).code).toBe(3)
    expect(t([pub('mallory'), '--role', 'owner', '--key', 'mallory']).code).toBe(3)
    expect(t([pub('mallory'), '--role', 'owner', '--key', 'owner'], {ENGRAM_SESSION: session}).code).toBe(3)
    expect(t([pub('mallory'), '--role', 'admin', '--key', 'owner']).code).toBe(2)
    expect(t([join(sb.configDir, 'nope.pub'), '--role', 'owner', '--key', 'owner']).code).toBe(4)
    expect(t([join(sb.configDir, 'keys/owner.key'), '--role', 'owner', '--key', 'owner']).code).toBe(2)
    // what never ends is not read to its end: a device, a folder, and more than a record holds on stdin
    const endless = t(['/dev/zero', '--role', 'owner', '--key', 'owner'])
    expect(endless.code, endless.stderr).toBe(2)
    expect(endless.json.error.message).toMatch(/is not a file/)
    expect(t([sb.configDir, '--role', 'owner', '--key', 'owner']).code).toBe(2)
    // a FIFO nobody writes to: refused at once, not waited on
    const fifo = join(sb.configDir, 'key.fifo')
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0)
    const piped = t([fifo, '--role', 'owner', '--key', 'owner'])
    expect(piped.code, piped.stderr).toBe(2)
    expect(piped.json.error.message).toMatch(/is not a file/)
    const flood = sb.run(['keys', 'trust', '-', '--role', 'owner', '--key', 'owner', '--json'], {input: 'x'.repeat(200 * 1024)})
    expect(flood.code).toBe(2)
    expect(flood.json.error.message).toMatch(/more than 64 KiB/)
    // a name already taken by another key
    const clash = t([pub('mallory'), '--role', 'owner', '--name', 'bob', '--key', 'owner'])
    expect(clash.code).toBe(3)
    expect(clash.json.error.message).toMatch(/already holds another key/)
    expect(head(sb.dir)).toBe(before)
    expect(keyOf(sb, 'mallory')).toBeUndefined()
  })

  it('a key record planted in the store by hand is listed as untrusted and cannot accept', () => {
    // mallory's own self-endorsed record, committed by the agent with plain git
    writeFileSync(join(sb.dir, '.engram/keys/mallory.pub'), readFileSync(pub('mallory')))
    git(sb.dir, 'add', '.engram/keys/mallory.pub')
    git(sb.dir, 'commit', '-qm', 'add key')
    try {
      expect(keyOf(sb, 'mallory')).toMatchObject({status: 'untrusted', reason: expect.stringMatching(/self-endorsed, but not a root/)})
      const w = sb.run(['write', 'billing.md', '--scope', 'tenant:acme', '--json'], {env: {ENGRAM_SESSION: session}, input: 'Acme renews its contract in March.\n'})
      expect(w.json?.status).toBe('pending')
      const a = sb.run(['review', 'accept', w.json.proposal, '--digest', w.json.digest, '--key', 'mallory', '--json'])
      expect(a.code).toBe(3)
      expect(a.json.error.message).toMatch(/not trusted/)
      const v = sb.run(['verify', '--json'])
      expect(v.code).toBe(7)
      expect(v.json.items).toContainEqual(expect.objectContaining({kind: 'key-untrusted', path: '.engram/keys/mallory.pub'}))
    } finally {
      git(sb.dir, 'rm', '-q', '.engram/keys/mallory.pub')
      git(sb.dir, 'commit', '-qm', 'remove key')
    }
  })

  it('a trusted owner key signs accepts; revoking it stops serving what it signed, and verify names it', () => {
    const pending = sb.run(['review', 'list', '--json']).json.items
    expect(pending).toHaveLength(1)
    const p = sb.run(['review', 'show', pending[0].id, '--json']).json
    const a = sb.run(['review', 'accept', p.id, '--digest', p.digest, '--key', 'bob', '--json'])
    expect(a.code, a.stderr).toBe(0)
    expect(a.json.reviewed_by).toBe('bob')
    expect(sb.run(['read', 'billing.md', '--scope', 'tenant:acme'], {env: {ENGRAM_SESSION: session}}).code).toBe(0)
    // bob rotates: endorses carol, then is revoked keeping carol
    ok(sb.run(['keys', 'trust', pub('carol'), '--role', 'owner', '--key', 'bob', '--json']))

    expect(sb.run(['keys', 'revoke', 'bob', '--key', 'owner', '--json']).code).toBe(2) // a reason is required
    expect(sb.run(['keys', 'revoke', 'nobody', '--reason', 'x', '--key', 'owner', '--json']).code).toBe(4)
    expect(sb.run(['keys', 'revoke', 'bob', '--reason', 'x', '--key', 'owner'], {env: {ENGRAM_SESSION: session}}).code).toBe(3)
    expect(sb.run(['keys', 'revoke', 'bob', '--reason', 'x', '--key', 'dreamer', '--json']).code).toBe(3)

    const r = sb.run(['keys', 'revoke', 'bob', '--reason', 'laptop lost', '--keep', 'carol', '--key', 'owner', '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.json).toMatchObject({name: 'bob', reason: 'laptop lost', path: '.engram/keys/bob.revoked'})
    expect(r.json.keep).toEqual([keyOf(sb, 'carol').keyid])
    const msg = git(sb.dir, 'log', '-1', '--format=%B')
    expect(msg).toContain('Reason: laptop lost')
    expect(msg).toContain('Engram-Operation: revoke-key')
    expect(git(sb.dir, 'status', '--porcelain').trim()).toBe('')

    expect(keyOf(sb, 'bob')).toMatchObject({status: 'revoked', reason: expect.stringMatching(/revoked by owner .*: laptop lost/)})
    expect(keyOf(sb, 'carol')).toMatchObject({status: 'trusted'})
    expect(sb.run(['keys', 'list']).stdout).toMatch(/^bob\t[0-9a-f]{16}\towner\trevoked.*laptop lost/m)

    // what bob signed (the memory and the manifest) no longer counts
    expect(sb.run(['read', 'billing.md', '--scope', 'tenant:acme'], {env: {ENGRAM_SESSION: session}}).code).toBe(4)
    const v = sb.run(['verify', '--json'])
    expect(v.code).toBe(7)
    expect(v.json.items).toContainEqual(expect.objectContaining({kind: 'revoked-key', path: 'tenant/acme/billing.md'}))

    // revoked once is revoked: no second record, no re-trust
    expect(sb.run(['keys', 'revoke', 'bob', '--reason', 'again', '--key', 'owner', '--json']).code).toBe(3)
    expect(sb.run(['keys', 'trust', pub('bob'), '--role', 'owner', '--key', 'owner', '--json']).code).toBe(3)
  })

  it('refuses to revoke the last trusted owner keys unless --force', () => {
    ok(sb.run(['keys', 'revoke', 'carol', '--reason', 'rotated back', '--key', 'owner', '--json']))
    const before = head(sb.dir)
    const r = sb.run(['keys', 'revoke', 'owner', '--reason', 'oops', '--key', 'owner', '--json'])
    expect(r.code).toBe(3)
    expect(r.json.error.message).toMatch(/no trusted owner/)
    expect(head(sb.dir)).toBe(before)
    expect(existsSync(join(sb.dir, '.engram/keys/owner.revoked'))).toBe(false)
    expect(keyOf(sb, 'owner').status).toBe('trusted')
    const forced = sb.run(['keys', 'revoke', 'owner', '--reason', 'store retired', '--key', 'owner', '--force', '--json'])
    expect(forced.code).toBe(0)
    expect(keyOf(sb, 'owner').status).toBe('revoked')
  })
})
