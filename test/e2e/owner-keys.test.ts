/**
 * Owner keys are the owner's (STANDARD.md R20), attacked through the real CLI: an agent
 * running as the same OS user copies the key file, overwrites the key from inside its
 * session, points --out into the store, guesses passphrases. The terminal path is driven
 * through a real pseudo-terminal; "no terminal" is a process in a new session (setsid).
 */
import {execFileSync} from 'node:child_process'
import {createHash, generateKeyPairSync} from 'node:crypto'
import {copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'

import {sealPrivateKey} from '../../src/core/trust/privatekey.js'
import {BIN, PASSPHRASE, Sandbox, initWithSession, sandbox, tempDir} from '../helpers/cli.js'
import {runInTerminal, runWithoutTerminal} from '../helpers/pty.js'

const git = (dir: string, ...args: string[]) => execFileSync('git', args, {cwd: dir, encoding: 'utf8'}).trim()

/** The sandbox's environment without its passphrase file: the owner is at a terminal, or nobody is. */
function bare(sb: Sandbox, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const {ENGRAM_PASSPHRASE_FILE: _, ...env} = sb.env
  return {...env, ...extra}
}
const cli = (args: string[]) => [process.execPath, BIN, ...args]

function pending(sb: Sandbox, session: string, text = 'Acme renews in March.'): {proposal: string; digest: string} {
  const w = sb.run(['write', 'billing.md', '--scope', 'tenant:acme', '--json'], {input: text, env: {ENGRAM_SESSION: session}})
  expect(w.json?.status, w.stderr).toBe('pending')
  return w.json
}

/** An unencrypted key file of the first format (engram < 0.2.0). */
function v1KeyFile(name: string): {text: string; keyid: string; seed: Buffer; pub: Buffer} {
  const {privateKey, publicKey} = generateKeyPairSync('ed25519')
  const seed = privateKey.export({format: 'der', type: 'pkcs8'}).subarray(-32)
  const pub = publicKey.export({format: 'der', type: 'spki'}).subarray(-32)
  const keyid = createHash('sha256').update(pub).digest('hex').slice(0, 16)
  return {keyid, seed, pub, text: `engram secret key ${keyid} name=${name}\n{"keyid":"${keyid}","name":"${name}","secret_key":"${seed.toString('base64')}","v":1}\n`}
}

describe('the owner at the terminal', () => {
  it('types the passphrase of a new key at /dev/tty, twice, never echoed; the file holds no secret in the clear', () => {
    const sb = sandbox()
    const r = runInTerminal(cli(['keys', 'generate', 'alice']), {
      env: bare(sb), cwd: sb.dir,
      answers: [{expect: 'New passphrase for key alice: ', send: 'tty secret one'}, {expect: 'Same passphrase again: ', send: 'tty secret one'}],
    })
    expect(r.code, r.output).toBe(0)
    expect(r.answered).toBe(2)
    expect(r.output).not.toContain('tty secret one')
    const text = readFileSync(join(sb.configDir, 'keys/alice.key'), 'utf8')
    expect(text).toMatch(/^engram encrypted secret key [0-9a-f]{16} name=alice\n/)
    const rec = JSON.parse(text.split('\n')[1])
    expect(rec).toMatchObject({v: 2, kdf: 'scrypt', cipher: 'chacha20-poly1305'})
    expect(rec.secret_key).toBeUndefined()

    // two different passphrases: nothing written
    const differ = runInTerminal(cli(['keys', 'generate', 'bob']), {
      env: bare(sb), cwd: sb.dir,
      answers: [{expect: 'New passphrase for key bob: ', send: 'one'}, {expect: 'Same passphrase again: ', send: 'two'}],
    })
    expect(differ.code).toBe(2)
    expect(differ.output).toMatch(/differ; nothing written/)
    expect(existsSync(join(sb.configDir, 'keys/bob.key'))).toBe(false)
  })

  it('unlocks the owner key at the terminal to accept; three wrong tries refuse (exit 3) and nothing is accepted', () => {
    const sb = sandbox()
    const session = initWithSession(sb)
    const p = pending(sb, session)
    const head = git(sb.dir, 'rev-parse', 'HEAD')
    const wrong = runInTerminal(cli(['review', 'accept', p.proposal, '--digest', p.digest]), {
      env: bare(sb), cwd: sb.dir,
      answers: [1, 2, 3].map((n) => ({expect: 'Passphrase for key owner \\([0-9a-f]{16}\\): ', send: `guess ${n}`})),
    })
    expect(wrong.code, wrong.output).toBe(3)
    expect(wrong.answered).toBe(3)
    expect(wrong.output).toMatch(/Wrong passphrase for key owner .* after 3 tries/)
    expect(git(sb.dir, 'rev-parse', 'HEAD')).toBe(head)

    const right = runInTerminal(cli(['review', 'accept', p.proposal, '--digest', p.digest]), {
      env: bare(sb), cwd: sb.dir, answers: [{expect: 'Passphrase for key owner', send: PASSPHRASE}],
    })
    expect(right.code, right.output).toBe(0)
    expect(right.output).toMatch(/accepted/)
    expect(right.output).not.toContain(PASSPHRASE)
  })
})

describe('an agent with a shell, as the same OS user', () => {
  let sb: Sandbox
  let session: string
  let keyFile: string
  let keyBytes: Buffer
  beforeAll(() => {
    sb = sandbox()
    session = initWithSession(sb)
    keyFile = join(sb.configDir, 'keys/owner.key')
    keyBytes = readFileSync(keyFile)
  })
  const unchanged = () => expect(readFileSync(keyFile).equals(keyBytes)).toBe(true)

  it('copies the owner key file and tries to sign with it: encrypted, so refused (exit 3), nothing accepted', () => {
    const p = pending(sb, session)
    const head = git(sb.dir, 'rev-parse', 'HEAD')
    const agentHome = join(sb.dir, '..', `agent-${session}`)
    mkdirSync(agentHome, {recursive: true})
    copyFileSync(keyFile, join(agentHome, 'stolen.key'))
    // and the owner's trust pins (R19), so that only the encryption is left in its way
    cpSync(join(sb.configDir, 'trust'), join(agentHome, 'trust'), {recursive: true})
    // it even drops its session: only the passphrase stands between it and the owner's signature
    const env = bare(sb, {ENGRAM_CONFIG_DIR: agentHome, ENGRAM_KEY: join(agentHome, 'stolen.key')})
    const noTty = runWithoutTerminal(cli(['review', 'accept', p.proposal, '--digest', p.digest, '--json']), {env, cwd: sb.dir})
    expect(noTty.code, noTty.stderr + noTty.stdout).toBe(3)
    expect(noTty.json.error.message).toMatch(/encrypted, and there is no terminal/)
    expect(noTty.json.error.nextStep).toMatch(/--passphrase-file/)

    const guess = join(agentHome, 'guess')
    writeFileSync(guess, 'password\n', {mode: 0o600})
    const guessed = runWithoutTerminal(cli(['review', 'accept', p.proposal, '--digest', p.digest, '--json', '--passphrase-file', guess]), {env, cwd: sb.dir})
    expect(guessed.code).toBe(3)
    expect(guessed.json.error.message).toMatch(/Wrong passphrase for key owner/)
    expect(git(sb.dir, 'rev-parse', 'HEAD')).toBe(head)
    expect(sb.run(['review', 'list', '--json']).json.items.map((i: {id: string}) => i.id)).toContain(p.proposal)
  })

  it('`keys generate owner --force` inside its session is refused (exit 3), also with ENGRAM_SESSION empty; the key is unchanged byte for byte', () => {
    for (const s of [session, '']) {
      const r = sb.run(['keys', 'generate', 'owner', '--force', '--json'], {env: {ENGRAM_SESSION: s}})
      expect(r.code, r.stdout).toBe(3)
      expect(r.json.error.message).toMatch(/inside an agent session/)
      unchanged()
    }
    // and no new key under another name either
    expect(sb.run(['keys', 'generate', 'helper'], {env: {ENGRAM_SESSION: ''}}).code).toBe(3)
    expect(existsSync(join(sb.configDir, 'keys/helper.key'))).toBe(false)
  })

  it('every command that unlocks the owner key is refused with ENGRAM_SESSION set, even empty (exit 3)', () => {
    const p = pending(sb, session, 'Acme renews in April.')
    const head = git(sb.dir, 'rev-parse', 'HEAD')
    const elsewhere = tempDir('engram-test-other-')
    const cmds = [
      ['review', 'accept', p.proposal, '--digest', p.digest],
      ['review', 'reject', p.proposal, '--reason', 'no'],
      ['keys', 'revoke', 'owner', '--reason', 'x', '--force'],
      ['keys', 'protect', 'owner'],
      ['restore', 'billing.md', '--scope', 'tenant:acme', '--to', 'HEAD~1'],
      ['init', '--base', elsewhere],
    ]
    for (const args of cmds) {
      const r = sb.run([...args, '--json'], {env: {ENGRAM_SESSION: ''}})
      expect(r.code, `${args.join(' ')}: ${r.stdout}${r.stderr}`).toBe(3)
      expect(r.json.error.message).toMatch(/inside an agent session/)
    }
    expect(git(sb.dir, 'rev-parse', 'HEAD')).toBe(head)
    expect(existsSync(join(elsewhere, '.engram'))).toBe(false)
    unchanged()
  }, 180_000) // seven commands: room for a loaded machine

  it('`--force` without a terminal is refused (exit 3), even with the passphrase file at hand', () => {
    const r = runWithoutTerminal(cli(['keys', 'generate', 'owner', '--force', '--json']), {env: sb.env, cwd: sb.dir})
    expect(r.code, r.stderr).toBe(3)
    expect(r.json.error.message).toMatch(/confirmed at a terminal, and there is none/)
    unchanged()
  })

  it('`--force` at a terminal needs the key name typed; a wrong name changes nothing', () => {
    const wrong = runInTerminal(cli(['keys', 'generate', 'owner', '--force']), {env: sb.env, cwd: sb.dir, answers: [{expect: 'Type its name \\(owner\\) to confirm: ', send: 'yes'}]})
    expect(wrong.code, wrong.output).toBe(3)
    expect(wrong.output).toMatch(/Not confirmed/)
    unchanged()
    // (the confirmed replacement runs in its own sandbox below, not to lose this store's owner)
    const other = sandbox()
    expect(other.run(['keys', 'generate', 'owner']).code).toBe(0)
    const before = readFileSync(join(other.configDir, 'keys/owner.key'))
    const ok = runInTerminal(cli(['keys', 'generate', 'owner', '--force']), {env: other.env, cwd: other.dir, answers: [{expect: 'to confirm: ', send: 'owner'}]})
    expect(ok.code, ok.output).toBe(0)
    expect(readFileSync(join(other.configDir, 'keys/owner.key')).equals(before)).toBe(false)
  })

  it('`--out` never writes into the store, over an existing file, through a link, or into the key and trust folders', () => {
    const tries: [string, number, RegExp][] = [
      [join(sb.dir, 'x.pub'), 3, /inside the store/],
      [join(sb.dir, '.engram/keys/x.pub'), 3, /inside the store/],
      [join(sb.dir, 'no-such-folder/x.pub'), 4, /No folder/],
      [join(sb.configDir, 'keys/x.pub'), 3, /keys folder/],
      [join(sb.configDir, 'trust/x.pub'), 3, /trust folder|No folder/],
      [join(sb.configDir, 'x.json'), 2, /\*\.pub/],
    ]
    mkdirSync(join(sb.configDir, 'trust'), {recursive: true})
    for (const [out, code, message] of tries) {
      const r = sb.run(['keys', 'generate', 'carol', '--out', out, '--json'])
      expect(r.code, `${out}: ${r.stdout}`).toBe(code)
      expect(r.json.error.message).toMatch(message)
      expect(existsSync(out)).toBe(false)
    }
    const existing = join(sb.configDir, 'existing.pub')
    writeFileSync(existing, 'mine\n')
    const link = join(sb.configDir, 'link.pub')
    symlinkSync(join(sb.dir, 'planted.pub'), link)
    for (const out of [existing, link]) {
      const r = sb.run(['keys', 'generate', 'carol', '--force', '--out', out, '--json'])
      expect(r.code).toBe(3)
      expect(r.json.error.message).toMatch(/already exists; --out never overwrites/)
    }
    expect(readFileSync(existing, 'utf8')).toBe('mine\n')
    expect(existsSync(join(sb.dir, 'planted.pub'))).toBe(false)
    expect(existsSync(join(sb.configDir, 'keys/carol.key'))).toBe(false)
    expect(git(sb.dir, 'status', '--porcelain')).toBe('')
  })
})

describe('passphrase files', () => {
  it('a refused passphrase at init leaves nothing behind: no store, no repository, no key; the same init then succeeds', () => {
    const sb = sandbox()
    const loose = join(sb.configDir, 'loose')
    writeFileSync(loose, `${PASSPHRASE}\n`, {mode: 0o644})
    execFileSync('chmod', ['644', loose])
    const r = runWithoutTerminal(cli(['init', '--json', '--passphrase-file', loose]), {env: sb.env, cwd: sb.dir})
    expect(r.code).toBe(3)
    expect(r.json.error.message).toMatch(/open to group or others/)
    // the store folder is as it was: the key (and its passphrase) is settled before anything is made
    expect(readdirSync(sb.dir)).toEqual([])
    expect(existsSync(join(sb.configDir, 'keys', 'owner.key'))).toBe(false)
    const ok = sb.run(['init', '--json'])
    expect(ok.code).toBe(0)
    expect(existsSync(join(sb.dir, '.engram'))).toBe(true)
  })

  it('refuses one open to group or others, or inside the store (exit 3); a wrong one is refused at once, no retry', () => {
    const sb = sandbox()
    const session = initWithSession(sb)
    const p = pending(sb, session)
    const head = git(sb.dir, 'rev-parse', 'HEAD')
    const loose = join(sb.configDir, 'loose')
    for (const mode of [0o644, 0o640, 0o604]) {
      writeFileSync(loose, `${PASSPHRASE}\n`, {mode})
      execFileSync('chmod', [mode.toString(8), loose])
      const r = runWithoutTerminal(cli(['review', 'accept', p.proposal, '--digest', p.digest, '--json', '--passphrase-file', loose]), {env: sb.env, cwd: sb.dir})
      expect(r.code).toBe(3)
      expect(r.json.error.message).toMatch(/open to group or others/)
      expect(r.json.error.nextStep).toMatch(/chmod 600/)
    }
    // the environment variable is held to the same rule
    const viaEnv = runWithoutTerminal(cli(['review', 'accept', p.proposal, '--digest', p.digest, '--json']), {env: {...sb.env, ENGRAM_PASSPHRASE_FILE: loose}, cwd: sb.dir})
    expect(viaEnv.code).toBe(3)
    const inStore = join(sb.dir, 'org', 'passphrase')
    writeFileSync(inStore, `${PASSPHRASE}\n`, {mode: 0o600})
    const r = runWithoutTerminal(cli(['review', 'accept', p.proposal, '--digest', p.digest, '--json', '--passphrase-file', inStore]), {env: sb.env, cwd: sb.dir})
    expect(r.code).toBe(3)
    expect(r.json.error.message).toMatch(/inside the store/)
    const wrong = join(sb.configDir, 'wrong')
    writeFileSync(wrong, 'not it\n', {mode: 0o600})
    const t0 = Date.now()
    const w = runWithoutTerminal(cli(['review', 'accept', p.proposal, '--digest', p.digest, '--json', '--passphrase-file', wrong]), {env: sb.env, cwd: sb.dir})
    expect(w.code).toBe(3)
    expect(w.json.error.message).toMatch(/Wrong passphrase for key owner .* in .*wrong/)
    expect(Date.now() - t0).toBeLessThan(30_000)
    expect(git(sb.dir, 'rev-parse', 'HEAD')).toBe(head)
  })
})

describe('the first owner key at init', () => {
  it('without --owner is the key ENGRAM_KEY names, whatever its name; --owner names another', () => {
    const sb = sandbox()
    expect(sb.run(['keys', 'generate', 'alice']).code).toBe(0)
    const alice = join(sb.configDir, 'keys/alice.key')
    const r = sb.run(['init', '--json'], {env: {ENGRAM_KEY: alice}})
    expect(r.code, r.stderr).toBe(0)
    expect(r.json.owner).toMatchObject({name: 'alice', reused: true, keyFile: alice})
    expect(Date.parse(r.json.owner.keyChanged)).toBe(statSync(alice).mtime.getTime())
    expect(existsSync(join(sb.configDir, 'keys/owner.key'))).toBe(false)
    // a key init did not make is named, with its file and age, and how to undo if it was not yours
    const plain = tempDir('engram-init-plain-')
    const t = sb.run(['init'], {env: {ENGRAM_KEY: alice}, cwd: plain})
    expect(t.code, t.stderr).toBe(0)
    expect(t.stdout + t.stderr).toContain(`reused from ${alice} (last changed ${statSync(alice).mtime.toISOString()}): this store now trusts it as its owner. If you did not make that key, remove this store's .engram folder and that file, and run init again.`)
    // --owner names the key: not the one ENGRAM_KEY holds, so it is made
    const other = tempDir('engram-init-owner-')
    const o = sb.run(['init', '--owner', 'bob', '--json'], {env: {ENGRAM_KEY: alice}, cwd: other})
    expect(o.code, o.stderr).toBe(0)
    expect(o.json.owner).toMatchObject({name: 'bob', reused: false})
  })
})

describe('keys of the first, unencrypted format', () => {
  it('are never made a store\'s first owner, nor once sealed by `keys protect`: a planted key would make its planter the owner; nothing made', () => {
    const sb = sandbox()
    const v1 = v1KeyFile('owner')
    mkdirSync(join(sb.configDir, 'keys'), {recursive: true, mode: 0o700})
    // planted in the key folder by a process running as the owner, before the first init
    writeFileSync(join(sb.configDir, 'keys/owner.key'), v1.text, {mode: 0o600})
    const refusedAll = (r: ReturnType<typeof sb.run>, how: RegExp) => {
      expect(r.code, r.stderr).toBe(3)
      expect(`${r.stdout}${r.stderr}`).toMatch(how)
      expect(`${r.stdout}${r.stderr}`).toMatch(/so it will not be made this store's first owner; nothing made/)
      expect(`${r.stdout}${r.stderr}`).toMatch(/make a new key for this store/)
      expect(`${r.stdout}${r.stderr}`).not.toMatch(/\n\s+at /)
    }
    for (const args of [['init'], ['init', '--owner', 'owner'], ['init', '--json']]) {
      refusedAll(sb.run(args), /is not encrypted: any process running as you could have written or copied it/)
      expect(existsSync(join(sb.dir, '.engram'))).toBe(false)
      expect(existsSync(join(sb.dir, '.git'))).toBe(false)
    }
    // through ENGRAM_KEY too
    refusedAll(sb.run(['init'], {env: {ENGRAM_KEY: join(sb.configDir, 'keys/owner.key')}}), /is not encrypted/)
    expect(existsSync(join(sb.dir, '.engram'))).toBe(false)
    expect(readFileSync(join(sb.configDir, 'keys/owner.key'), 'utf8')).toBe(v1.text)
    // sealed by `keys protect`, the planter still knows its secret: still refused
    expect(sb.run(['keys', 'protect', 'owner', '--json']).code).toBe(0)
    const sealed = readFileSync(join(sb.configDir, 'keys/owner.key'), 'utf8')
    expect(JSON.parse(sealed.split('\n')[1]).from).toBe('v1')
    refusedAll(sb.run(['init']), /was sealed from an unencrypted file/)
    expect(existsSync(join(sb.dir, '.engram'))).toBe(false)
    // the mark is authenticated: stripped, the file no longer opens with the owner's passphrase
    const rec = JSON.parse(sealed.split('\n')[1])
    delete rec.from
    writeFileSync(join(sb.configDir, 'keys/owner.key'), `${sealed.split('\n')[0]}\n${JSON.stringify(rec)}\n`, {mode: 0o600})
    const stripped = sb.run(['init'])
    expect(stripped.code).toBe(3)
    expect(stripped.stderr).toMatch(/Wrong passphrase for key owner .*\(or the key file was altered\)/)
    expect(existsSync(join(sb.dir, '.engram'))).toBe(false)
    // nor through `init --no-key` and `keys trust` as the first owner, in either form
    writeFileSync(join(sb.configDir, 'keys/owner.key'), v1.text, {mode: 0o600})
    expect(sb.run(['init', '--no-key']).code).toBe(0)
    writeFileSync(join(sb.configDir, 'owner.pub.b64'), `${v1.pub.toString('base64')}\n`)
    refusedAll(sb.run(['keys', 'trust', join(sb.configDir, 'owner.pub.b64'), '--role', 'owner', '--name', 'owner']), /is not encrypted/)
    writeFileSync(join(sb.configDir, 'keys/owner.key'), sealed, {mode: 0o600})
    refusedAll(sb.run(['keys', 'trust', join(sb.configDir, 'owner.pub.b64'), '--role', 'owner', '--name', 'owner']), /was sealed from an unencrypted file/)
    expect(sb.run(['keys', 'list', '--json']).json.items).toEqual([])
  })

  it('still sign where trusted, with one warning naming `engram keys protect`; protect encrypts in place, same key id', () => {
    const sb = sandbox()
    const v1 = v1KeyFile('owner')
    mkdirSync(join(sb.configDir, 'keys'), {recursive: true, mode: 0o700})
    // a store made with the key while it was an ordinary encrypted one (its first owner), then the
    // file put back in the first format, as engram < 0.2.0 kept it
    writeFileSync(join(sb.configDir, 'keys/owner.key'), sealPrivateKey({name: 'owner', keyid: v1.keyid, secretKey: new Uint8Array(v1.seed), publicKey: new Uint8Array(v1.pub)}, PASSPHRASE, {N: 2 ** 14, r: 8, p: 1}), {mode: 0o600})
    const init = sb.run(['init', '--json'])
    expect(init.code, init.stderr).toBe(0)
    expect(init.json.owner).toMatchObject({keyid: v1.keyid, reused: true})
    writeFileSync(join(sb.configDir, 'keys/owner.key'), v1.text, {mode: 0o600})
    const s0 = sb.run(['session', 'start', '--agent', 'a', '--assigned', 'tenant:acme', '--json']).json.id
    const p0 = pending(sb, s0)
    const a0 = sb.run(['review', 'accept', p0.proposal, '--digest', p0.digest, '--json'])
    expect(a0.code, a0.stderr).toBe(0)
    expect(a0.stderr.match(/not encrypted/g)).toHaveLength(1)
    expect(a0.stderr).toMatch(/engram keys protect owner/)

    const prot = sb.run(['keys', 'protect', 'owner', '--json'])
    expect(prot.code, prot.stderr).toBe(0)
    expect(prot.json).toMatchObject({keyid: v1.keyid, changed: true})
    const text = readFileSync(join(sb.configDir, 'keys/owner.key'), 'utf8')
    expect(text).toMatch(new RegExp(`^engram encrypted secret key ${v1.keyid} name=owner\n`))
    expect(text).not.toContain(v1.text.split('"secret_key":"')[1].split('"')[0])

    const s = sb.run(['session', 'start', '--agent', 'a', '--assigned', 'tenant:acme', '--json']).json.id
    const p = pending(sb, s)
    const a = sb.run(['review', 'accept', p.proposal, '--digest', p.digest, '--json'])
    expect(a.code, a.stderr).toBe(0)
    expect(a.stderr).not.toMatch(/not encrypted/)
    expect(sb.run(['keys', 'protect', 'owner', '--json']).json.changed).toBe(false)
  })
})
