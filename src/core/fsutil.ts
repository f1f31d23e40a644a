import {closeSync, fsyncSync, mkdirSync, openSync, renameSync, writeSync} from 'node:fs'
import {dirname} from 'node:path'
import {randomBytes} from 'node:crypto'

/**
 * Write a file atomically: a temp file in the same folder, fsync, rename. A process
 * killed at any point leaves either the old file or the new one, never half of one.
 */
export function writeFileAtomic(file: string, content: string | Buffer, mode = 0o644): void {
  // a private file's missing folders are private too
  mkdirSync(dirname(file), {recursive: true, mode: mode & 0o077 ? 0o755 : 0o700})
  const tmp = `${file}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`
  const fd = openSync(tmp, 'wx', mode)
  try {
    writeSync(fd, typeof content === 'string' ? Buffer.from(content, 'utf8') : content)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  renameSync(tmp, file)
}
