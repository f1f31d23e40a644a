import {createHash} from 'node:crypto'

/** The git blob id of some content, computed in-process (same as `git hash-object`). */
export function gitBlobHash(content: string | Buffer): string {
  const buf = typeof content === 'string' ? Buffer.from(content, 'utf8') : content
  const h = createHash('sha1')
  h.update(`blob ${buf.length}\0`)
  h.update(buf)
  return h.digest('hex')
}

export function sha256Hex(content: string | Buffer): string {
  return createHash('sha256').update(content).digest('hex')
}
