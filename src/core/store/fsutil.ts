import {BigIntStats, closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync} from 'node:fs'
import {dirname} from 'node:path'
import {randomBytes} from 'node:crypto'

/**
 * Write a file atomically: a temp file in the same folder (`<file>.tmp-<pid>-<random>`,
 * created exclusively with `mode`), fsync, rename. A process killed at any point leaves
 * either the old file or the new one, never half of one; a failed write leaves no temp
 * file. The one atomic writer of engram: store files, private keys, trust pins, state and
 * caches all go through it. `fsync: false` is for derived data (caches), where a lost
 * write only costs the next command a recomputation.
 */
export function writeFileAtomic(file: string, content: string | Buffer, mode = 0o644, opts: {fsync?: boolean} = {}): void {
  // a private file's missing folders are private too
  mkdirSync(dirname(file), {recursive: true, mode: mode & 0o077 ? 0o755 : 0o700})
  const tmp = `${file}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`
  const fd = openSync(tmp, 'wx', mode)
  try {
    try {
      writeSync(fd, typeof content === 'string' ? Buffer.from(content, 'utf8') : content)
      if (opts.fsync !== false) fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
    renameSync(tmp, file)
  } catch (error) {
    rmSync(tmp, {force: true})
    throw error
  }
}

/**
 * Whether a file last changed (`ctimeNs`, nanoseconds) longer ago than its file system's
 * timestamp granularity, so that any later change must give it another change time (git's
 * "racy" case). Linux's usual file systems keep nanoseconds, for which 100 ms is ample; a
 * change time on a whole second suggests a file system that keeps seconds (ext3, FAT,
 * some network mounts), where two changes a second apart can share one: wait 2.5 s there.
 */
export function changedLongAgo(ctimeNs: bigint, nowMs: number = Date.now()): boolean {
  const wholeSecond = ctimeNs % 1_000_000_000n === 0n
  return nowMs - Number(ctimeNs / 1_000_000n) > (wholeSecond ? 2500 : 100)
}

/** A file's identity: any write changes its change time, a replacement its inode. */
export function fileIdentity(st: BigIntStats): string {
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`
}
