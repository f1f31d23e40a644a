import {badInput} from './errors.js'
import {printable} from './scope.js'

function tooLarge(size: string, maxBytes: number) {
  return badInput(`Content is too large (${size}; limit ${maxBytes} bytes).`, 'split it into smaller memories, or raise max_body_bytes in .engram/config.yml')
}

/**
 * Read a stream (stdin, a file) to its end, however slowly it arrives, but never more
 * than `maxBytes`: past the limit it stops reading and refuses, so an oversized input
 * is never held in memory whole.
 */
export async function readLimited(stream: NodeJS.ReadableStream & {destroy?: () => void}, maxBytes: number): Promise<Buffer> {
  const {bytes, cut} = await readUpTo(stream, maxBytes)
  if (cut) throw tooLarge(`more than ${maxBytes} bytes`, maxBytes)
  return bytes
}

type Input = NodeJS.ReadableStream & {destroy?: () => void}

/**
 * Read a stream to its end or to `maxBytes`, whichever comes first: past the limit it keeps
 * the first `maxBytes`, stops reading and says it cut (`cut`); nothing more is held. The cut
 * stream is closed, so its writer's next write fails (EPIPE), unless `keepOpen`: then it is
 * paused, for discardRest to read off.
 */
export function readUpTo(stream: Input, maxBytes: number, opts: {keepOpen?: boolean} = {}): Promise<{bytes: Buffer; cut: boolean}> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let total = 0
    const stop = () => {
      stream.off('data', onData)
      stream.off('end', onEnd)
      stream.off('error', onError)
    }
    const onData = (chunk: Buffer | string) => {
      const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
      if (total + buf.length <= maxBytes) {
        total += buf.length
        chunks.push(buf)
        return
      }
      chunks.push(buf.subarray(0, maxBytes - total))
      stop()
      if (opts.keepOpen) {
        stream.pause()
        stream.on('error', () => {}) // a writer's error after the cut is no reader's concern
      } else stream.destroy?.()
      resolve({bytes: Buffer.concat(chunks), cut: true})
    }
    const onEnd = () => {
      stop()
      resolve({bytes: Buffer.concat(chunks), cut: false})
    }
    const onError = (error: Error) => {
      stop()
      reject(error)
    }
    stream.on('data', onData)
    stream.on('end', onEnd)
    stream.on('error', onError)
  })
}

/**
 * Read and drop the rest of a stream readUpTo cut and kept open, so that its writer sees the
 * whole input taken rather than a broken pipe; but for `ms` at most, then close it (a writer
 * that never ends must not hold the reader). Nothing read here is kept.
 */
export function discardRest(stream: Input, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const finish = () => {
      clearTimeout(timer)
      stream.off('data', drop)
      stream.off('end', finish)
      stream.off('close', finish)
      stream.off('error', finish)
      stream.destroy?.()
      resolve()
    }
    const drop = () => {}
    const timer = setTimeout(finish, ms)
    stream.on('data', drop)
    stream.on('end', finish)
    stream.on('close', finish)
    stream.on('error', finish)
    stream.resume()
  })
}

/**
 * Decode memory content given as bytes: UTF-8 only, no NUL bytes (binary), a BOM
 * dropped, not empty, not over the size limit. Nothing is stored before this passes.
 */
export function decodeContent(input: Buffer | string, maxBytes: number): string {
  const buf = typeof input === 'string' ? Buffer.from(input, 'utf8') : input
  if (buf.length > maxBytes) throw tooLarge(`${buf.length} bytes`, maxBytes)
  if (buf.includes(0)) throw badInput('Content looks binary (it contains NUL bytes).', 'memories are UTF-8 text')
  let text: string
  try {
    text = new TextDecoder('utf-8', {fatal: true}).decode(buf)
  } catch {
    throw badInput('Content is not valid UTF-8.', 'convert it to UTF-8 first (e.g. `iconv -t UTF-8`)')
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1)
  if (text.trim().length === 0) throw badInput('Content is empty.', 'pipe the memory text on stdin or give --file')
  return text
}

const TAG_RE = /^[\p{L}\p{N}][\p{L}\p{N}._:/-]{0,47}$/u

export function parseTags(text: string | undefined): string[] {
  if (text === undefined || text.trim() === '') return []
  const tags = [...new Set(text.split(',').map((t) => t.trim()).filter(Boolean))]
  for (const t of tags) {
    if (!TAG_RE.test(t)) throw badInput(`Bad tag "${printable(t, 40)}".`, 'tags are letters, digits and . _ : / -, up to 48 characters, comma-separated')
  }
  if (tags.length > 32) throw badInput('At most 32 tags.')
  return tags
}

export function checkTitle(title: string | undefined): string | undefined {
  if (title === undefined) return undefined
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(title)) throw badInput('A title cannot contain control characters or line breaks.')
  if (title.length > 200) throw badInput('A title is at most 200 characters.')
  return title.trim()
}

const DAY_MS = 86_400_000

/**
 * A memory's expiry as given to a write: a date (`2027-06-30`), a time to live from today
 * (`90d`, `12w`, at most 100 years), or `none` (no expiry; an update drops the file's).
 * Gives the date as stored (`YYYY-MM-DD`, UTC), or null for `none`. A date that does not
 * exist (`2027-02-30`) or is not after today is bad input: the write stores nothing.
 */
export function parseExpires(text: string, now: Date = new Date()): string | null {
  const s = text.trim()
  if (s === 'none') return null
  const today = now.toISOString().slice(0, 10)
  const ttl = /^(\d{1,5})([dw])$/.exec(s)
  if (ttl) {
    const days = Number(ttl[1]) * (ttl[2] === 'w' ? 7 : 1)
    if (days < 1 || days > 36_500) throw badInput(`--expires ${s}: a time to live is from 1 day to 100 years.`, 'e.g. --expires 90d or --expires 12w')
    return new Date(Date.parse(today) + days * DAY_MS).toISOString().slice(0, 10)
  }
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s)
  // a real calendar date: it reads back as itself (Date rolls 2027-02-30 over to March)
  if (!m || Number.isNaN(Date.parse(s)) || new Date(Date.parse(s)).toISOString().slice(0, 10) !== s) {
    throw badInput(`--expires "${printable(s, 40)}" is not a date or a time to live.`, 'give a date such as --expires 2027-06-30, a time to live such as --expires 90d, or --expires none')
  }
  if (s <= today) throw badInput(`--expires ${s} is not in the future (today is ${today}, UTC).`, 'give a later date, or a time to live such as --expires 90d')
  if (Date.parse(s) - Date.parse(today) > 36_500 * DAY_MS) throw badInput(`--expires ${s} is more than 100 years away.`)
  return s
}
