import {closeSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync} from 'node:fs'
import {hostname} from 'node:os'
import {randomBytes} from 'node:crypto'

import {EngramError} from './errors.js'
import {indexLockPath, removeStaleIndexLock} from './git.js'
import type {Store} from './store.js'

interface LockInfo {
  pid: number
  host: string
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

/**
 * Run `fn` holding the store lock (`.engram/lock`, created with O_EXCL). A lock whose
 * holder is dead (same host, pid gone) is stale: it is broken, and so is any
 * `index.lock` it left behind, since every engram git mutation happens under this lock.
 */
export async function withStoreLock<T>(store: Store, fn: (recovered: boolean) => Promise<T>, opts: LockOptions = {}): Promise<T> {
  const file = store.abs('.engram/lock')
  const me: LockInfo = {pid: process.pid, host: hostname(), time: new Date().toISOString(), token: randomBytes(8).toString('hex')}
  const deadline = Date.now() + (opts.timeoutMs ?? 15_000)
  let recovered = false
  let wait = 10
  for (;;) {
    try {
      const fd = openSync(file, 'wx', 0o644)
      try {
        writeSync(fd, JSON.stringify(me))
      } finally {
        closeSync(fd)
      }
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
    const holder = readLock(file)
    const stale =
      holder === undefined
        ? lockAgeMs(file) > 2000 // created but never written: its writer died at once
        : holder.host === me.host && !alive(holder.pid)
    if (stale) {
      // Move it aside atomically so that two recovering processes cannot both break it.
      const aside = `${file}.stale-${me.token}`
      try {
        renameSync(file, aside)
        unlinkSync(aside)
        recovered = true
        opts.onRecover?.(`recovered a stale store lock left by process ${holder?.pid ?? '?'}`)
      } catch {
        // someone else recovered it first
      }
      continue
    }
    if (Date.now() > deadline) {
      throw new EngramError('conflict', `The store is locked by process ${holder?.pid ?? '?'} on ${holder?.host ?? '?'}.`, {
        nextStep: 'wait for it to finish; if no engram process is running, remove .engram/lock',
      })
    }
    await sleep(wait)
    wait = Math.min(wait * 2, 200)
  }
  try {
    if (recovered) {
      const idx = await indexLockPath(store.top)
      if (removeStaleIndexLock(idx)) opts.onRecover?.('removed a stale .git/index.lock left by a killed process')
    }
    return await fn(recovered)
  } finally {
    const holder = readLock(file)
    if (holder?.token === me.token) {
      try {
        unlinkSync(file)
      } catch {
        // already gone
      }
    }
  }
}

function readLock(file: string): LockInfo | undefined {
  try {
    const info = JSON.parse(readFileSync(file, 'utf8')) as LockInfo
    return typeof info.pid === 'number' ? info : undefined
  } catch {
    return undefined
  }
}

function lockAgeMs(file: string): number {
  try {
    return Date.now() - statSync(file).mtimeMs
  } catch {
    return Infinity
  }
}
