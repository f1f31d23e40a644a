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
  const chunks: Buffer[] = []
  let total = 0
  for await (const chunk of stream) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer)
    total += buf.length
    if (total > maxBytes) {
      stream.destroy?.()
      throw tooLarge(`more than ${maxBytes} bytes`, maxBytes)
    }
    chunks.push(buf)
  }
  return Buffer.concat(chunks)
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
