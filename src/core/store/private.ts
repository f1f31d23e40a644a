import {createHmac, randomBytes, timingSafeEqual} from 'node:crypto'
import {lstatSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {configDir} from './cachefile.js'
import {refused} from './errors.js'
import {sha256Hex} from '../memory/hash.js'

/**
 * engram's private folder outside the store (the agent may write the store, so nothing
 * that proves who is speaking can live there): the session secret, which makes session
 * records and session tokens unforgeable without it, the key that seals the search index
 * files (indexSealKey), and the `engram serve` sockets.
 * The folder is `$ENGRAM_CONFIG_DIR/private` (default `~/.config/engram/private`), mode
 * 0700, owned by this user, never a symlink.
 */
export function privateDir(): string {
  return join(configDir(), 'private')
}

const uid = () => (typeof process.getuid === 'function' ? process.getuid() : -1)

/**
 * Check (and with `create`, make) a folder only this user can enter: owned by this uid,
 * no group or other permission bits, not a symlink. Anything else is refused, never
 * repaired: a folder someone else prepared is exactly the attack.
 */
export function ensurePrivateFolder(dir: string, create: boolean): void {
  if (create) {
    try {
      mkdirSync(dir, {recursive: true, mode: 0o700})
    } catch {
      // checked below
    }
  }
  let st
  try {
    st = lstatSync(dir)
  } catch {
    throw refused(`engram's private folder ${dir} does not exist.`, 'run the command as the owner, who creates it (e.g. `engram session start`)')
  }
  if (st.isSymbolicLink() || !st.isDirectory()) throw refused(`${dir} is not a plain folder (a symlink or a file); engram will not use it.`, `remove it; engram creates it again with mode 0700`)
  if (uid() >= 0 && st.uid !== uid()) throw refused(`${dir} belongs to another user; engram will not use it.`, 'remove it, or point ENGRAM_CONFIG_DIR at a folder of your own')
  if ((st.mode & 0o077) !== 0) throw refused(`${dir} can be entered by other users (mode ${(st.mode & 0o777).toString(8)}); engram will not use it.`, `chmod 700 ${dir}`)
}

/** A store as a private folder's files name it: the first 16 hex digits of its path's SHA-256. */
export const storeKey = (storeRoot: string) => sha256Hex(storeRoot).slice(0, 16)

/**
 * `<private>/<parts…>`, each folder made (0700) where missing and checked as the private folder
 * is (ensurePrivateFolder): the per-store folders of pending taints, process joins and prompts.
 */
export function privateSubfolder(...parts: string[]): string {
  let dir = privateDir()
  ensurePrivateFolder(dir, true)
  for (const part of parts) {
    dir = join(dir, part)
    mkdirSync(dir, {recursive: true, mode: 0o700})
    ensurePrivateFolder(dir, false)
  }
  return dir
}

/**
 * A 32-byte secret in the private folder, 0600, made on first use when `create` (with
 * `wx`: two first uses at once do not overwrite each other's); undefined when absent.
 */
function privateSecret(name: string, create: boolean): Buffer | undefined {
  const dir = privateDir()
  ensurePrivateFolder(dir, create)
  const file = join(dir, name)
  const read = (): Buffer | undefined => {
    try {
      const st = lstatSync(file)
      if (st.isSymbolicLink() || !st.isFile() || (uid() >= 0 && st.uid !== uid()) || (st.mode & 0o077) !== 0) {
        throw refused(`${file} is not a private file of this user; engram will not use it.`, `remove it and start the sessions again`)
      }
      const b = Buffer.from(readFileSync(file, 'utf8').trim(), 'hex')
      return b.length === 32 ? b : undefined
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw error
    }
  }
  const have = read()
  if (have || !create) return have
  try {
    writeFileSync(file, `${randomBytes(32).toString('hex')}\n`, {mode: 0o600, flag: 'wx'})
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  }
  const made = read()
  if (!made) throw refused(`${file} is not a secret of engram's.`, 'remove it; engram makes a new one')
  return made
}

/** The 32-byte session secret, made on first use by the owner (`create`) and 0600 in the private folder. */
export function sessionSecret(create: boolean): Buffer {
  const secret = privateSecret('session.key', create)
  if (!secret) throw refused('No session secret in engram\'s private folder: no session of this machine can be proven.', 'sessions are started by the owner with `engram session start`')
  return secret
}

let indexKey: {dir: string; key: Buffer} | undefined

/**
 * The key that seals the search index files in the store (docs/architecture.md, "The
 * trust model"): whoever cannot read the private folder cannot write an index file engram
 * will read. Made on first use by any engram process. Where the private folder cannot be
 * used, a key of this process only: its index files are then rebuilt by the next process,
 * never trusted unsealed.
 */
export function indexSealKey(): Buffer {
  const dir = privateDir()
  if (indexKey?.dir === dir) return indexKey.key
  let key: Buffer | undefined
  try {
    key = privateSecret('index.key', true)
  } catch {
    key = undefined
  }
  indexKey = {dir, key: key ?? randomBytes(32)}
  return indexKey.key
}

export function mac(secret: Buffer, label: string, ...parts: string[]): string {
  return createHmac('sha256', secret).update([label, ...parts].join('\0')).digest('hex')
}

/** Constant-time comparison of two hex MACs. */
export function sameMac(a: unknown, b: string): boolean {
  if (typeof a !== 'string' || !/^[0-9a-f]{64}$/.test(a)) return false
  return timingSafeEqual(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'))
}

/** The proof a harness hands an agent (ENGRAM_SESSION_TOKEN): only the secret's holder can make it. */
export const sessionToken = (secret: Buffer, id: string) => mac(secret, 'engram-session-token', id)

// sun_path is 108 bytes on Linux and 104 on macOS, the terminating NUL included
const MAX_SOCKET_PATH = 103

/**
 * Where `engram serve` listens for a store: `<private>/serve-<hash of the store's path>.sock`,
 * or, when that path is too long for a unix socket, the same name in `$XDG_RUNTIME_DIR/engram`
 * or `<tmp>/engram-<uid>` (checked as strictly as the private folder).
 */
export function socketPath(storeRoot: string): {dir: string; path: string} {
  const name = `serve-${storeKey(storeRoot)}.sock`
  const candidates = [privateDir()]
  if (process.env.XDG_RUNTIME_DIR) candidates.push(join(process.env.XDG_RUNTIME_DIR, 'engram'))
  candidates.push(join(tmpdir(), `engram-${uid()}`))
  for (const dir of candidates) {
    const path = join(dir, name)
    if (Buffer.byteLength(path) <= MAX_SOCKET_PATH) return {dir, path}
  }
  throw refused('No folder for the server socket has a path short enough for a unix socket.', 'set ENGRAM_CONFIG_DIR or XDG_RUNTIME_DIR to a shorter path')
}
