import {closeSync, linkSync, lstatSync, openSync, readdirSync, readFileSync, renameSync, unlinkSync, writeSync} from 'node:fs'
import {hostname} from 'node:os'
import {randomBytes} from 'node:crypto'
import {basename, dirname, join} from 'node:path'

import {interruptedCommit, recoverInterrupted} from '../git/commit.js'
import {EngramError} from './errors.js'
import {gitRead, indexLockPath, removeStaleIndexLock} from '../git/git.js'
import type {Store} from './store.js'

interface LockInfo {
  pid: number
  host: string
  /** the holder's start time as the kernel counts it, when known: a reused pid is not the holder */
  start?: string
  time: string
  token: string
}

export interface LockOptions {
  /** how long to wait for a live holder before giving up */
  timeoutMs?: number
  /** told when a stale lock (or index.lock) from a dead process was recovered */
  onRecover?: (message: string) => void
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** A process's start time (Linux: field 22 of /proc/<pid>/stat), or undefined where unknown. */
function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]
  } catch {
    return undefined
  }
}

const myStart = processStart(process.pid)

/** Whether the lock's holder is certainly gone: same host, and its pid is dead or now another process. */
function holderGone(info: LockInfo): boolean {
  if (info.host !== hostname()) return false
  if (!alive(info.pid)) return true
  const now = info.start === undefined ? undefined : processStart(info.pid)
  return now !== undefined && now !== info.start
}

/** The lock file's content, or a stand-in for an empty or torn one (only ever written where link() is missing). */
function readLock(file: string): {info?: LockInfo; key: string} | undefined {
  let text: string
  let st
  try {
    st = lstatSync(file)
    text = readFileSync(file, 'utf8')
  } catch {
    return undefined
  }
  try {
    const info = JSON.parse(text) as LockInfo
    if (typeof info.pid === 'number' && typeof info.token === 'string' && /^[A-Za-z0-9_-]{1,64}$/.test(info.token)) return {info, key: info.token}
  } catch {
    // torn
  }
  return {key: `i${st.ino}m${Math.floor(st.mtimeMs)}`}
}

/** Who holds the store lock now, for `doctor`: undefined when nobody; `stale` when its holder is certainly gone. */
export function lockHolder(store: Store): {pid?: number; host?: string; time?: string; stale: boolean} | undefined {
  const file = store.abs('.engram/lock')
  const lock = readLock(file)
  if (!lock) return undefined
  return {pid: lock.info?.pid, host: lock.info?.host, time: lock.info?.time, stale: isStale(lock, file)}
}

function isStale(lock: {info?: LockInfo; key: string}, file: string): boolean {
  if (lock.info) return holderGone(lock.info)
  // created but never written: its writer died at once (or is writing now: give it 2 s)
  try {
    return Date.now() - lstatSync(file).mtimeMs > 2000
  } catch {
    return false
  }
}

function remove(file: string): void {
  try {
    unlinkSync(file)
  } catch {
    // already gone
  }
}

/**
 * Create `file` holding `me`, only if it does not exist: written in full to a temp file,
 * then hard-linked into place (atomic, fails when the name exists), so a lock file is
 * never seen half-written. Falls back to O_EXCL where links are not supported.
 */
function tryCreate(file: string, me: LockInfo): boolean {
  const tmp = join(dirname(file), `${basename(file)}.tmp-new-${me.token}-${randomBytes(3).toString('hex')}`)
  writeNew(tmp, me)
  try {
    linkSync(tmp, file)
    return true
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    // ENOENT: a recovering holder swept our temp file away as debris; try again
    if (code === 'EEXIST' || code === 'ENOENT') return false
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'EXDEV') throw error
  } finally {
    remove(tmp)
  }
  try {
    writeNew(file, me)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw error
  }
}

function writeNew(file: string, me: LockInfo): void {
  const fd = openSync(file, 'wx', 0o644)
  try {
    writeSync(fd, JSON.stringify(me))
  } finally {
    closeSync(fd)
  }
}

/**
 * Take `file` over from a holder judged gone, as one process only. The recoverer must
 * first create the breaker `<file>.tmp-break-<stale key>` (tryCreate: exclusive). Holding
 * it, it reads the lock again, and only if it is still the very lock judged stale does it
 * rename a lock of its own over it — nobody else can change that file meanwhile: a new
 * holder cannot create it (it exists), a dead one cannot release it, and any other
 * recoverer of it needs the same breaker. A breaker left by a recoverer killed in the act
 * is itself recovered the same way. Returns whether `me` now holds `file`.
 */
function takeOver(file: string, stale: {key: string}, me: LockInfo, depth = 0): boolean {
  if (depth > 8) return false
  const breaker = `${file}.tmp-break-${stale.key}`
  if (!tryCreate(breaker, me)) {
    const b = readLock(breaker)
    if (!b || !isStale(b, breaker) || !takeOver(breaker, b, me, depth + 1)) return false
  }
  try {
    const now = readLock(file)
    if (!now || now.key !== stale.key) return false
    const tmp = join(dirname(file), `${basename(file)}.tmp-new-${me.token}-${randomBytes(3).toString('hex')}`)
    writeNew(tmp, me)
    try {
      renameSync(tmp, file)
    } catch {
      return false
    }
    return readLock(file)?.key === me.token
  } finally {
    remove(breaker)
  }
}

/**
 * Run `fn` holding the store lock (`.engram/lock`). One process at a time holds it, also
 * while a stale one is recovered (takeOver). A lock whose holder is gone (same host, pid
 * dead or reused) is stale; after taking it over, git lock files the dead holder left
 * are removed (every engram git mutation happens under this lock), and a commit it was
 * killed in is finished or dropped (recoverInterrupted) before `fn` runs.
 */
export async function withStoreLock<T>(store: Store, fn: (recovered: boolean) => Promise<T>, opts: LockOptions = {}): Promise<T> {
  const file = store.abs('.engram/lock')
  const me: LockInfo = {pid: process.pid, host: hostname(), start: myStart, time: new Date().toISOString(), token: randomBytes(8).toString('hex')}
  const deadline = Date.now() + (opts.timeoutMs ?? 15_000)
  let recovered = false
  let wait = 5
  for (;;) {
    if (tryCreate(file, me)) break
    const holder = readLock(file)
    if (holder && isStale(holder, file)) {
      if (takeOver(file, holder, me)) {
        recovered = true
        opts.onRecover?.(`recovered a stale store lock left by process ${holder.info?.pid ?? '?'}`)
        break
      }
      await sleep(1 + Math.random() * 5)
      continue
    }
    if (Date.now() > deadline) {
      throw new EngramError('conflict', `The store is locked by process ${holder?.info?.pid ?? '?'} on ${holder?.info?.host ?? '?'}.`, {
        nextStep: 'wait for it to finish; if no engram process is running, remove .engram/lock',
      })
    }
    await sleep(wait * (0.5 + Math.random()))
    wait = Math.min(wait * 2, 100)
  }
  try {
    if (recovered) {
      // debris of killed lockers; only old files, as a live locker's temp file is young
      for (const name of safeReaddir(dirname(file))) {
        const f = join(dirname(file), name)
        if ((name.startsWith('lock.tmp-') || name.startsWith('lock.stale-')) && ageMs(f) > 5000) remove(f)
      }
      await removeDeadGitLocks(store, opts.onRecover)
    }
    if (recovered || interruptedCommit(store)) await recoverInterrupted(store, opts.onRecover)
    return await fn(recovered)
  } finally {
    if (readLock(file)?.key === me.token) remove(file)
  }
}

function ageMs(file: string): number {
  try {
    return Date.now() - lstatSync(file).mtimeMs
  } catch {
    return 0
  }
}

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir)
  } catch {
    return []
  }
}

/** The index.lock and the branch's ref lock a killed engram process left (it held the store lock, so they were its). */
async function removeDeadGitLocks(store: Store, onRecover?: (m: string) => void): Promise<void> {
  const idx = await indexLockPath(store.top)
  if (removeStaleIndexLock(idx)) onRecover?.('removed a stale .git/index.lock left by a killed process')
  const ref = (await gitRead(store.top, ['symbolic-ref', '-q', 'HEAD'], {allowFail: true})).trim()
  const common = (await gitRead(store.top, ['rev-parse', '--path-format=absolute', '--git-common-dir'], {allowFail: true})).trim() || dirname(idx)
  for (const name of [ref, 'HEAD']) {
    if (!/^(HEAD|refs\/heads\/[^\s]+)$/.test(name) || name.split('/').includes('..')) continue
    const lock = join(name === 'HEAD' ? dirname(idx) : common, ...name.split('/')) + '.lock'
    if (removeStaleIndexLock(lock)) onRecover?.(`removed a stale ${name}.lock left by a killed process`)
  }
}
