/**
 * Private keys: the owner's, so they are encrypted at rest and unlocked only by the owner
 * (STANDARD.md R20). Same line-oriented form as the other key files (see keys.ts): a
 * comment line, then one line of JSON.
 *
 *   ~/.config/engram/keys/<name>.key  (0600, dir 0700; never in the store)
 *     engram encrypted secret key <keyid> name=<name>
 *     {"N":65536,"cipher":"chacha20-poly1305","kdf":"scrypt","keyid":…,"name":…,"nonce":…,"p":1,"r":8,"salt":…,"sealed":…,"v":2}
 *
 * `sealed` is the 32-byte Ed25519 seed and its 16-byte tag, under a key scrypt derives
 * from the passphrase and the random salt; everything else on the line is the associated
 * data, so a file whose key id, name or cost was edited does not open. Files of the first
 * form (`engram secret key …`, `"secret_key"` in clear, v1) still work, with a warning and
 * the command that encrypts them (`engram keys protect <name>`).
 *
 * The passphrase comes from a file the owner names (`--passphrase-file`, env
 * ENGRAM_PASSPHRASE_FILE; mode 0600, never inside a store) or from `/dev/tty`, never from
 * an argument or an environment variable. Nothing here runs inside an agent session.
 */
import {createCipheriv, createDecipheriv, randomBytes, scryptSync} from 'node:crypto'
import {chmodSync, closeSync, existsSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, realpathSync, statSync, writeSync} from 'node:fs'
import {dirname, join, resolve, sep} from 'node:path'

import {writeWarning} from '../text/warning.js'
import {configDir} from '../store/cachefile.js'
import {writeFileAtomic} from '../store/fsutil.js'
import {canonicalJson} from '../memory/canonical.js'
import {badInput, notFound, refused, usageError} from '../store/errors.js'
import {KEY_NAME_RE, checkKeyName, readRecordLines} from './keys.js'
import {printable} from '../store/scope.js'
import {refuseInsideSession} from '../session/sessions.js'
import {KeyPair, keyPairFromSecret} from './sign.js'
import {openTerminal} from './tty.js'

/** scrypt cost for new keys: 64 MiB; measured at 0.56 s on a busy 2-core machine (2^17 took 0.74 s there). */
const KDF_COST = {N: 2 ** 16, r: 8, p: 1}
/**
 * The least cost a key file may ask for. Test suites that make hundreds of keys on shared
 * machines set ENGRAM_INSECURE_TEST_KDF=1 to seal new keys at it; the cost is written in
 * the file (and bound to it), so such a key stays readable and says what it is. Setting it
 * needs the owner's environment at key creation, which no agent session gets (R20).
 */
export const KDF_TEST_COST = {N: 2 ** 14, r: 8, p: 1}

function newKeyCost(): typeof KDF_COST {
  if (process.env.ENGRAM_INSECURE_TEST_KDF !== '1') return KDF_COST
  writeWarning('ENGRAM_INSECURE_TEST_KDF=1: the new key is sealed at the test-only scrypt cost (N=2^14); never use it for a real key')
  return KDF_TEST_COST
}
const CIPHER = 'chacha20-poly1305' as const
const TRIES_AT_TERMINAL = 3

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64')
const fromB64 = (s: unknown, len?: number): Buffer | undefined => {
  if (typeof s !== 'string' || !/^[A-Za-z0-9+/]+={0,2}$/.test(s)) return undefined
  const bytes = Buffer.from(s, 'base64')
  return (len === undefined || bytes.length === len) && bytes.toString('base64') === s ? bytes : undefined
}

export function privateKeyDir(): string {
  return join(configDir(), 'keys')
}

// ---------------------------------------------------------------- who may act

// ---------------------------------------------------------------- passphrases

let passphraseFileFlag: string | undefined

/** `--passphrase-file` of the running command; it wins over ENGRAM_PASSPHRASE_FILE. */
export function setPassphraseFile(path: string | undefined): void {
  passphraseFileFlag = path === '' ? undefined : path
}

function passphraseFileName(): string | undefined {
  return passphraseFileFlag ?? (process.env.ENGRAM_PASSPHRASE_FILE || undefined)
}

const HOW_TO_UNLOCK = 'run it in a terminal, or name a file of mode 0600 holding the passphrase with --passphrase-file PATH (or env ENGRAM_PASSPHRASE_FILE)'

/** The folder holding `.engram/` at or above `path`, if any: a store the agent may write. */
function storeAbove(path: string): string | undefined {
  let dir = path
  for (;;) {
    try {
      if (lstatSync(join(dir, '.engram')).isDirectory()) return dir
    } catch {
      // not here
    }
    const up = dirname(dir)
    if (up === dir) return undefined
    dir = up
  }
}

/** The passphrase in a file the owner named: theirs alone (like ssh's keys), outside any store. */
function readPassphraseFile(file: string): string {
  const abs = resolve(file)
  let st
  try {
    st = statSync(abs)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw notFound(`No passphrase file at ${abs}.`, 'fix --passphrase-file or ENGRAM_PASSPHRASE_FILE')
    throw refused(`The passphrase file ${abs} cannot be read (${(error as NodeJS.ErrnoException).code}).`)
  }
  if (!st.isFile()) throw badInput(`The passphrase file ${abs} is not a regular file.`)
  if (st.mode & 0o077) {
    throw refused(
      `The passphrase file ${abs} is open to group or others (mode ${(st.mode & 0o777).toString(8).padStart(3, '0')}); it was not used.`,
      `make it yours alone: chmod 600 ${abs}`,
    )
  }
  if (typeof process.getuid === 'function' && st.uid !== process.getuid()) throw refused(`The passphrase file ${abs} belongs to another user; it was not used.`)
  const store = storeAbove(dirname(realpathSync(abs)))
  if (store) throw refused(`The passphrase file ${abs} is inside the store at ${store}, where an agent can read it; it was not used.`, 'keep it outside every store, e.g. in ~/.config/engram')
  const line = readFileSync(abs, 'utf8').split('\n')[0].replace(/\r$/, '')
  if (line === '') throw badInput(`The passphrase file ${abs} is empty (the passphrase is its first line).`)
  return line
}

type Source = {passphrase: string; from: 'file'; file: string} | {passphrase: string; from: 'terminal'}

/** A passphrase to open an existing key: the named file, else the terminal. */
async function askPassphrase(label: string, retry: boolean): Promise<Source> {
  const file = passphraseFileName()
  if (file !== undefined) return {passphrase: readPassphraseFile(file), from: 'file', file: resolve(file)}
  const tty = openTerminal()
  if (!tty) throw refused(`The private key ${label} is encrypted, and there is no terminal to ask its passphrase and no passphrase file; nothing done.`, HOW_TO_UNLOCK)
  const passphrase = await tty.ask(`${retry ? 'Wrong passphrase. ' : ''}Passphrase for key ${label}: `, {echo: false})
  return {passphrase, from: 'terminal'}
}

/** A passphrase for a new key: the named file, else typed twice at the terminal. */
async function newPassphrase(name: string): Promise<string> {
  const file = passphraseFileName()
  if (file !== undefined) return readPassphraseFile(file)
  const tty = openTerminal()
  if (!tty) throw refused(`No terminal to ask for a passphrase for key ${name}, and no passphrase file; nothing written.`, HOW_TO_UNLOCK)
  const first = await tty.ask(`New passphrase for key ${name}: `, {echo: false})
  if (first === '') throw badInput('An empty passphrase protects nothing; nothing written.')
  const again = await tty.ask(`Same passphrase again: `, {echo: false})
  if (again !== first) throw badInput('The two passphrases differ; nothing written.')
  return first
}

// ---------------------------------------------------------------- the file format

interface Sealed {
  v: 2
  name: string
  keyid: string
  kdf: 'scrypt'
  N: number
  r: number
  p: number
  salt: string
  cipher: typeof CIPHER
  nonce: string
  sealed: string
  /** 'v1': sealed by `keys protect` from an unencrypted file, which any process of the user could have written or read */
  from?: 'v1'
}

/** What a key file says of itself before it is opened. */
export type PrivateKeyFile =
  | {file: string; name: string; keyid: string; encrypted: false; key: KeyPair}
  | {file: string; name: string; keyid: string; encrypted: true; record: Sealed}

// `from` is authenticated with the rest: a file whose mark was stripped does not open
const aad = (s: Sealed) =>
  Buffer.from(canonicalJson({kind: 'engram-secret-key/2', v: s.v, name: s.name, keyid: s.keyid, kdf: s.kdf, N: s.N, r: s.r, p: s.p, salt: s.salt, cipher: s.cipher, ...(s.from ? {from: s.from} : {})}), 'utf8')

// a file may ask for more work than new keys get, up to 1 GiB of scrypt memory
const costOk = (N: unknown, r: unknown, p: unknown) =>
  Number.isInteger(N) && Number.isInteger(r) && Number.isInteger(p) && (N as number) >= 2 ** 14 && ((N as number) & ((N as number) - 1)) === 0 &&
  (r as number) >= 1 && (p as number) >= 1 && 128 * (N as number) * (r as number) * (p as number) <= 2 ** 30

function derive(passphrase: string, s: {salt: string; N: number; r: number; p: number}): Buffer {
  return scryptSync(Buffer.from(passphrase.normalize('NFC'), 'utf8'), fromB64(s.salt) as Buffer, 32, {N: s.N, r: s.r, p: s.p, maxmem: 128 * s.N * s.r * s.p + 2 ** 20})
}

export function sealPrivateKey(kp: KeyPair, passphrase: string, cost = KDF_COST, from?: 'v1'): string {
  if (passphrase === '') throw badInput('An empty passphrase protects nothing.')
  const head = {v: 2 as const, name: kp.name, keyid: kp.keyid, kdf: 'scrypt' as const, ...cost, salt: b64(randomBytes(16)), cipher: CIPHER, ...(from ? {from} : {})}
  const nonce = randomBytes(12)
  const cipher = createCipheriv(CIPHER, derive(passphrase, head), nonce, {authTagLength: 16})
  const rec: Sealed = {...head, nonce: b64(nonce), sealed: ''}
  cipher.setAAD(aad(rec), {plaintextLength: 32})
  rec.sealed = b64(Buffer.concat([cipher.update(kp.secretKey), cipher.final(), cipher.getAuthTag()]))
  return `engram encrypted secret key ${kp.keyid} name=${kp.name}\n${canonicalJson(rec)}\n`
}

/** Open a sealed record; undefined for a wrong passphrase (or an altered file: the tag cannot tell). */
function openSealed(rec: Sealed, passphrase: string): KeyPair | undefined {
  const blob = fromB64(rec.sealed, 48) as Buffer
  try {
    const decipher = createDecipheriv(CIPHER, derive(passphrase, rec), fromB64(rec.nonce, 12) as Buffer, {authTagLength: 16})
    decipher.setAAD(aad(rec), {plaintextLength: 32})
    decipher.setAuthTag(blob.subarray(32))
    const seed = Buffer.concat([decipher.update(blob.subarray(0, 32)), decipher.final()])
    const kp = keyPairFromSecret(rec.name, new Uint8Array(seed))
    return kp.keyid === rec.keyid ? kp : undefined
  } catch {
    return undefined
  }
}

/** The first, unencrypted form (v1). New keys are never written in it. */
function parsePrivateKey(text: string, label: string): KeyPair {
  const {comment, json} = readRecordLines(text, label)
  const secret = fromB64(json.secret_key, 32)
  if (json.v !== 1 || typeof json.name !== 'string' || !KEY_NAME_RE.test(json.name) || !secret) {
    throw badInput(`${label} is not an engram secret key.`, 'generate one with `engram keys generate <name>`')
  }
  const kp = keyPairFromSecret(json.name, new Uint8Array(secret))
  if (json.keyid !== kp.keyid || comment !== `engram secret key ${kp.keyid} name=${kp.name}`) {
    throw badInput(`${label}: the key id does not match the secret key; the file is damaged.`, 'restore it from a backup')
  }
  return kp
}

/** Read a key file of either form, without opening an encrypted one. */
export function parsePrivateKeyFile(text: string, file: string): PrivateKeyFile {
  if (!text.startsWith('engram encrypted secret key ')) {
    const key = parsePrivateKey(text, file)
    return {file, name: key.name, keyid: key.keyid, encrypted: false, key}
  }
  const {comment, json: j} = readRecordLines(text, file)
  if (j.v !== 2 || typeof j.name !== 'string' || !KEY_NAME_RE.test(j.name) || typeof j.keyid !== 'string' || !/^[0-9a-f]{16}$/.test(j.keyid) ||
    j.kdf !== 'scrypt' || !costOk(j.N, j.r, j.p) || !fromB64(j.salt) || j.cipher !== CIPHER || !fromB64(j.nonce, 12) || !fromB64(j.sealed, 48) || (j.from !== undefined && j.from !== 'v1')) {
    throw badInput(`${file} is not an engram encrypted secret key.`, 'restore it from a backup')
  }
  if (comment !== `engram encrypted secret key ${j.keyid} name=${j.name}`) throw badInput(`${file}: the comment line does not match the record.`, 'restore it from a backup')
  return {file, name: j.name, keyid: j.keyid, encrypted: true, record: j as unknown as Sealed}
}

// ---------------------------------------------------------------- finding and opening

function readOrNotFound(file: string, nextStep: string): string {
  try {
    return readFileSync(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw notFound(`No private key file at ${file}.`, nextStep)
    throw error
  }
}

/**
 * The private key file to sign with, not yet opened: the key named `name` (a `--key` flag)
 * from the file `ENGRAM_KEY` names when that key has this name, else `<name>.key` in the key
 * folder; with no name (or only a command's default, `defaulted`), the `ENGRAM_KEY` file,
 * else the only key in the folder. A flag names the key; the variable is a default.
 */
export function findPrivateKey(name?: string, defaulted = false): PrivateKeyFile {
  const envFile = process.env.ENGRAM_KEY
  let env: PrivateKeyFile | undefined
  if (envFile) {
    env = parsePrivateKeyFile(readOrNotFound(envFile, 'set ENGRAM_KEY to an engram secret key file, or unset it'), envFile)
    if (name === undefined || defaulted || env.name === name) return env
  }
  const dir = privateKeyDir()
  if (name !== undefined) {
    checkKeyName(name)
    const file = join(dir, `${name}.key`)
    const next = env
      ? `ENGRAM_KEY holds key ${env.name}, not ${name}: leave out --key to use it, or put ${name}.key in ${dir}`
      : `generate it with \`engram keys generate ${name}\`, or set ENGRAM_KEY to a key file`
    return parsePrivateKeyFile(readOrNotFound(file, next), file)
  }
  let names: string[] = []
  try {
    names = readdirSync(dir).filter((f) => f.endsWith('.key')).sort()
  } catch {
    // no folder: same as no keys
  }
  if (names.length === 0) {
    throw notFound(`No private key in ${dir}.`, 'generate one with `engram keys generate <name>`, or set ENGRAM_KEY to a key file')
  }
  if (names.length > 1) {
    throw usageError(`Several private keys in ${dir}: ${names.map((n) => n.slice(0, -4)).join(', ')}.`, 'name the key to use (--key <name>), or set ENGRAM_KEY')
  }
  const file = join(dir, names[0])
  return parsePrivateKeyFile(readFileSync(file, 'utf8'), file)
}

/**
 * A key that was ever an unencrypted file — still one, or sealed from one by `keys protect` —
 * is one any process running as its owner could have written or copied: an agent with a shell
 * that plants `owner.key` before the owner's first `init` would know its secret. It still signs
 * where it is trusted already; it never becomes a store's first owner (README "Owner keys").
 */
export function refuseAsFirstOwner(found: PrivateKeyFile): void {
  if (found.encrypted && found.record.from === undefined) return
  throw refused(
    `The key ${found.name} (${found.keyid}) in ${found.file} ${found.encrypted ? 'was sealed from an unencrypted file' : 'is not encrypted'}: any process running as you could have written or copied it, so it will not be made this store's first owner; nothing made.`,
    `make a new key for this store: move ${found.file} away and run the command again (or \`engram keys generate <name>\`); a key of before 0.2.0 keeps signing where it is trusted already`,
  )
}

const opened = new Map<string, KeyPair>()
const warned = new Set<string>()

/**
 * Open a key file for signing: an encrypted one with the owner's passphrase (from their
 * file, or up to three tries at the terminal; one try from a file); an unencrypted one with
 * a warning, once per process, naming the command that encrypts it.
 */
export async function unlockPrivateKey(found: PrivateKeyFile): Promise<KeyPair> {
  refuseInsideSession()
  if (!found.encrypted) {
    if (!warned.has(found.file)) {
      warned.add(found.file)
      writeWarning(`private key ${found.name} (${found.file}) is not encrypted: any process running as you can copy it and sign as you; encrypt it with \`engram keys protect ${found.name}\``)
    }
    return found.key
  }
  const memo = opened.get(canonicalJson(found.record))
  if (memo) return memo
  for (let attempt = 0; ; attempt++) {
    const source = await askPassphrase(`${found.name} (${found.keyid})`, attempt > 0)
    const kp = openSealed(found.record, source.passphrase)
    if (kp) {
      opened.set(canonicalJson(found.record), kp)
      return kp
    }
    if (source.from === 'file' || attempt + 1 >= TRIES_AT_TERMINAL) {
      throw refused(
        `Wrong passphrase for key ${found.name} (${found.keyid}) ${source.from === 'file' ? `in ${source.file}` : `after ${TRIES_AT_TERMINAL} tries`} (or the key file was altered); nothing done.`,
        source.from === 'file' ? 'put the passphrase of this key on the first line of that file' : 'try again; a forgotten passphrase cannot be recovered (make a new key and have an owner trust it)',
      )
    }
  }
}

/** Find and open the key to sign with (see findPrivateKey, unlockPrivateKey). */
export async function loadPrivateKey(name?: string, defaulted = false): Promise<KeyPair> {
  return unlockPrivateKey(findPrivateKey(name, defaulted))
}

// ---------------------------------------------------------------- writing

function writeExclusive(file: string, text: string, mode: number): void {
  const fd = openSync(file, 'wx', mode)
  try {
    writeSync(fd, text)
  } finally {
    closeSync(fd)
  }
}

export function privateKeyPath(name: string): string {
  return join(privateKeyDir(), `${checkKeyName(name)}.key`)
}

/**
 * Before replacing a key for good: `--force` and the owner typing its name at the terminal.
 * Without a terminal, `--force` is refused: no script or agent confirms for the owner.
 */
export async function confirmReplace(name: string, file: string): Promise<void> {
  const tty = openTerminal()
  if (!tty) {
    throw refused(`Replacing the private key ${name} (${file}) loses it for good, so it is confirmed at a terminal, and there is none; nothing changed.`, `run \`engram keys generate ${name} --force\` in your own terminal`)
  }
  const typed = await tty.ask(`This replaces the private key ${name} in ${file} for good. Type its name (${name}) to confirm: `, {echo: true})
  if (typed.trim() !== name) throw refused(`Not confirmed (typed "${printable(typed.trim())}", not "${name}"); the key ${name} is unchanged.`)
}

/**
 * Encrypt and write a new private key to `<configDir>/keys/<name>.key`, mode 0600, in a
 * 0700 folder. An existing key is never replaced unless `replace` (the caller confirmed).
 * The passphrase is asked here (file or terminal) unless given.
 */
export async function writePrivateKey(kp: KeyPair, opts: {replace?: boolean; passphrase?: string; cost?: typeof KDF_COST} = {}): Promise<string> {
  refuseInsideSession('Writing a private key')
  const file = privateKeyPath(kp.name)
  if (!opts.replace && existsSync(file)) {
    throw refused(`A private key named "${kp.name}" already exists at ${file}; it was not overwritten.`, 'choose another name, or pass --force to replace it (the old key is lost)')
  }
  const text = sealPrivateKey(kp, opts.passphrase ?? (await newPassphrase(kp.name)), opts.cost ?? newKeyCost())
  const dir = privateKeyDir()
  mkdirSync(dir, {recursive: true, mode: 0o700})
  chmodSync(dir, 0o700)
  if (!opts.replace) {
    try {
      writeExclusive(file, text, 0o600)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw refused(`A private key named "${kp.name}" already exists at ${file}; it was not overwritten.`)
      throw error
    }
  } else {
    // write beside it, then rename: a crash never leaves a half-written key
    writeFileAtomic(file, text, 0o600)
  }
  chmodSync(file, 0o600)
  return file
}

/**
 * `engram keys protect <name>`: encrypt an unencrypted (v1) key in place. The key itself
 * does not change (same key id, same trust); only its file does.
 */
export async function protectPrivateKey(name: string): Promise<{name: string; keyid: string; file: string; changed: boolean}> {
  refuseInsideSession('Protecting a private key')
  const file = privateKeyPath(name)
  const found = parsePrivateKeyFile(readOrNotFound(file, 'see the key folder, or `engram keys generate`'), file)
  if (found.encrypted) return {name: found.name, keyid: found.keyid, file, changed: false}
  const text = sealPrivateKey(found.key, await newPassphrase(name), newKeyCost(), 'v1')
  writeFileAtomic(file, text, 0o600)
  chmodSync(file, 0o600)
  return {name: found.name, keyid: found.keyid, file, changed: true}
}

/**
 * Where `keys generate --out` may write the public record: a new `.pub` file (never over an
 * existing file or link), outside every store (an agent reads and writes those) and
 * outside the key and trust folders of the config folder.
 */
export function checkPublicOut(out: string): string {
  const abs = resolve(out)
  if (!abs.endsWith('.pub')) throw usageError(`--out ${printable(out)}: the public record goes to a file named *.pub.`, `e.g. --out ${abs.replace(/[^/]*$/, '')}name.pub`)
  let exists = true
  try {
    lstatSync(abs)
  } catch {
    exists = false
  }
  if (exists) throw refused(`${abs} already exists; --out never overwrites a file.`, 'choose another --out, or remove that file first')
  let parent: string
  try {
    parent = realpathSync(dirname(abs))
  } catch {
    throw notFound(`No folder ${dirname(abs)} for --out.`, 'make it first, or choose another --out')
  }
  const store = storeAbove(parent)
  if (store) throw refused(`--out ${abs} is inside the store at ${store}; the public record goes there only through \`engram keys trust\`.`, 'write it outside the store, e.g. --out ~/name.pub')
  let config: string | undefined
  try {
    config = realpathSync(configDir())
  } catch {
    config = undefined
  }
  for (const sub of ['keys', 'trust']) {
    const guarded = config === undefined ? undefined : join(config, sub)
    if (guarded && (parent === guarded || parent.startsWith(guarded + sep))) throw refused(`--out ${abs} is inside the ${sub} folder ${guarded}; nothing is written there but by engram itself.`, 'write it elsewhere')
  }
  return join(parent, abs.slice(dirname(abs).length + 1))
}

/** Write the public record to a checked `--out` path, creating it (never replacing). */
export function writePublicOut(file: string, record: string): void {
  try {
    writeExclusive(file, record, 0o644)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw refused(`${file} already exists; --out never overwrites a file.`)
    throw error
  }
}

/** The key id a file holds, without opening it (for `keys list`); undefined when not a key. */
export function privateKeyId(file: string): string | undefined {
  try {
    return parsePrivateKeyFile(readFileSync(file, 'utf8'), file).keyid
  } catch {
    return undefined
  }
}

