/**
 * R20: owner keys are the owner's. An agent running as the same OS user copies the key
 * folder, guesses and loosens passphrase files, runs key commands from inside its session
 * (ENGRAM_SESSION set, or set and empty), forces a key over the owner's without a terminal,
 * and aims `--out` at the store and at existing files. The terminal path is typed at a real
 * pseudo-terminal; "no terminal" is a process in a new session (setsid).
 */
import {cpSync, existsSync, readFileSync, readdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'

import {runInTerminal, runWithoutTerminal} from '../test/helpers/pty.js'
import {BIN, PASSPHRASE, Store, newStore, startSession, tempDir, write} from './harness.js'

const argv = (args: string[]) => (BIN.endsWith('.js') ? [process.execPath, BIN, ...args] : [BIN, ...args])

/** Every byte of the key folder, to show nothing in it changed. */
const keyFolder = (store: Store) => {
  const dir = join(store.configDir, 'keys')
  return readdirSync(dir).sort().map((f) => `${f}\n${readFileSync(join(dir, f), 'base64')}`).join('\n')
}

function withoutPassphrase(store: Store, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const {ENGRAM_PASSPHRASE_FILE: _, ...env} = store.env
  return {...env, ...extra}
}

describe('C20 — owner keys are the owner\'s (R20)', () => {
  let store: Store
  let s: string
  let proposal: string
  let digest: string
  let keys: string
  beforeAll(() => {
    store = newStore()
    s = startSession(store, 'tenant:acme')
    const w = write(store, s, 'tenant:acme', 'billing.md', 'Acme renews in March.\n')
    expect(w.json.status).toBe('pending')
    proposal = w.json.proposal
    digest = w.json.digest
    keys = keyFolder(store)
  })

  it('a copy of the key folder without the passphrase signs nothing: no terminal refuses (3), a guessed file refuses (3)', () => {
    const before = store.state()
    const stolen = tempDir('engram-conf-agent-')
    cpSync(join(store.configDir, 'keys'), join(stolen, 'keys'), {recursive: true})
    // and the trust pins (R19), so that only the encryption stands in the way
    cpSync(join(store.configDir, 'trust'), join(stolen, 'trust'), {recursive: true})
    const env = withoutPassphrase(store, {ENGRAM_CONFIG_DIR: stolen})
    const r = runWithoutTerminal(argv(['review', 'accept', proposal, '--digest', digest, '--json']), {env, cwd: store.dir})
    expect(r.code, r.stdout + r.stderr).toBe(3)
    expect(r.json.error.nextStep).toMatch(/passphrase-file/)
    const guess = join(stolen, 'guess')
    writeFileSync(guess, 'password\n', {mode: 0o600})
    const g = runWithoutTerminal(argv(['review', 'accept', proposal, '--digest', digest, '--json', '--passphrase-file', guess]), {env, cwd: store.dir})
    expect(g.code).toBe(3)
    expect(g.json.error.message).toMatch(/passphrase/i)
    expect(store.state()).toBe(before)
  })

  it('a passphrase file open to group or others is refused (3), with the fix named', () => {
    const before = store.state()
    const loose = join(tempDir('engram-conf-loose-'), 'passphrase')
    writeFileSync(loose, `${PASSPHRASE}\n`, {mode: 0o644})
    const r = runWithoutTerminal(argv(['review', 'accept', proposal, '--digest', digest, '--json', '--passphrase-file', loose]), {env: store.env, cwd: store.dir})
    expect(r.code).toBe(3)
    expect(r.json.error.nextStep).toMatch(/chmod 600/)
    expect(store.state()).toBe(before)
  })

  it('no key command runs inside an agent session, ENGRAM_SESSION set or empty (3); the key folder is unchanged byte for byte', () => {
    const before = store.state()
    const pub = join(tempDir('engram-conf-pub-'), 'x.pub')
    for (const session of [s, '']) {
      for (const args of [
        ['keys', 'generate', 'owner', '--force'],
        ['keys', 'generate', 'helper'],
        ['review', 'accept', proposal, '--digest', digest],
        ['review', 'reject', proposal, '--reason', 'no'],
        ['keys', 'revoke', 'owner', '--reason', 'x', '--force'],
        ['keys', 'generate', 'other', '--out', pub],
      ]) {
        const r = store.run([...args, '--json'], {env: {ENGRAM_SESSION: session}})
        expect(r.code, `${args.join(' ')} (ENGRAM_SESSION=${JSON.stringify(session)}): ${r.stdout}`).toBe(3)
      }
    }
    expect(keyFolder(store)).toBe(keys)
    expect(existsSync(pub)).toBe(false)
    expect(store.state()).toBe(before)
  }, 180_000) // twelve commands: room for a loaded machine

  it('`keys generate owner --force` without a terminal is refused (3), the passphrase file at hand or not', () => {
    for (const env of [store.env, withoutPassphrase(store)]) {
      const r = runWithoutTerminal(argv(['keys', 'generate', 'owner', '--force', '--json']), {env, cwd: store.dir})
      expect(r.code).toBe(3)
    }
    expect(keyFolder(store)).toBe(keys)
  })

  it('`--out` never writes into the store or over an existing file (3), and then no key is made', () => {
    const before = store.state()
    const existing = join(tempDir('engram-conf-out-'), 'mine.pub')
    writeFileSync(existing, 'mine\n')
    for (const out of [join(store.dir, 'planted.pub'), join(store.dir, '.engram', 'keys', 'planted.pub'), existing]) {
      const r = store.run(['keys', 'generate', 'carol', '--force', '--out', out, '--json'])
      expect(r.code, `${out}: ${r.stdout}`).toBe(3)
    }
    expect(readFileSync(existing, 'utf8')).toBe('mine\n')
    expect(existsSync(join(store.configDir, 'keys', 'carol.key'))).toBe(false)
    expect(store.state()).toBe(before)
  })

  it('the owner unlocks at the terminal: the passphrase typed at /dev/tty is not echoed, and the accept goes through', () => {
    const r = runInTerminal(argv(['review', 'accept', proposal, '--digest', digest]), {
      env: withoutPassphrase(store), cwd: store.dir, answers: [{expect: '[Pp]assphrase', send: PASSPHRASE}],
    })
    expect(r.code, r.output).toBe(0)
    expect(r.output).not.toContain(PASSPHRASE)
    expect(existsSync(store.path('tenant/acme/billing.md'))).toBe(true)
  })
})
