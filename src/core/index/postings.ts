import {createHash} from 'node:crypto'
import {closeSync, openSync, readSync} from 'node:fs'

/**
 * `<scope>.postings`: the write path's side file of a scope's MiniSearch index (docs/architecture.md,
 * "The index"). The same data as the index's term map, document ids and field lengths,
 * without the stored fields, laid out so that one term's postings or one document's entry
 * is found by binary search without parsing the rest. A write's neighbour lookup reads the
 * few terms it needs from it instead of loading the scope's whole index (index.ts
 * `nominate`). Derived and rebuildable like the index: written with every full index,
 * the SHA-256 of its head (everything but the postings) recorded in that index's first
 * line, and each term's postings checked against a hash the head holds when they are read.
 * A missing, stale or edited file sends the lookup to the full index. It only nominates
 * candidates (each is then read and verified from its file); it never serves anything.
 *
 * Layout: the head, i.e. one line of JSON (the index statistics and the section sizes),
 * then little-endian uint32 sections: terms (string offset, length, postings offset,
 * postings length, document count, 16 bytes of the postings' SHA-256), sorted by the term's
 * UTF-8 bytes; documents (short id, path offset, path length, one length per field), sorted
 * by short id; the documents' order by path bytes; the strings. Then the postings, per
 * term: field count, then per field: field id, count, count × [short id, frequency].
 */

export const POSTINGS_FORMAT = 'engram-postings-1'

/** The parts of a MiniSearch index (7.x) this file holds; index.ts reads them from a loaded index. */
export interface IndexParts {
  documentCount: number
  nextId: number
  fieldIds: Record<string, number>
  averageFieldLength: number[]
  dirtCount: number
  documentIds: Map<number, string>
  fieldLength: Map<number, number[]>
  terms: Iterable<[string, Map<number, Map<number, number>>]>
}

export interface PostingsHeader {
  format: string
  documentCount: number
  nextId: number
  fieldIds: Record<string, number>
  averageFieldLength: number[]
  dirtCount: number
  terms: number
  docs: number
  fields: number
  strings: number
  postings: number
}

const byBytes = (a: Buffer, b: Buffer) => Buffer.compare(a, b)
const TERM_WIDTH = 36
const chunkHash = (b: Buffer) => createHash('sha256').update(b).digest().subarray(0, 16)

/** The file's bytes for these parts: the same index gives the same bytes (sorted everywhere), so its hash names it. */
export function encodePostings(parts: IndexParts): Buffer {
  const fields = Object.keys(parts.fieldIds).length
  const terms = [...parts.terms].map(([term, data]) => ({key: Buffer.from(term, 'utf8'), data}))
  terms.sort((a, b) => byBytes(a.key, b.key))
  const docs = [...parts.documentIds].map(([sid, path]) => ({sid, key: Buffer.from(path, 'utf8'), lengths: parts.fieldLength.get(sid) ?? []}))
  docs.sort((a, b) => a.sid - b.sid)
  const byPath = docs.map((_, i) => i).sort((i, j) => byBytes(docs[i].key, docs[j].key))
  const strings: Buffer[] = []
  let stringBytes = 0
  const putString = (b: Buffer) => {
    const at = stringBytes
    strings.push(b)
    stringBytes += b.length
    return at
  }
  const termTable = Buffer.alloc(terms.length * TERM_WIDTH)
  const chunks: Buffer[] = []
  let postingBytes = 0
  terms.forEach(({key, data}, i) => {
    const fieldIds = [...data.keys()].sort((a, b) => a - b)
    let size = 4
    for (const f of fieldIds) size += 8 + data.get(f)!.size * 8
    const chunk = Buffer.alloc(size)
    let o = chunk.writeUInt32LE(fieldIds.length, 0)
    const all = new Set<number>()
    for (const f of fieldIds) {
      const freqs = [...data.get(f)!].sort((a, b) => a[0] - b[0])
      o = chunk.writeUInt32LE(f, o)
      o = chunk.writeUInt32LE(freqs.length, o)
      for (const [sid, tf] of freqs) {
        all.add(sid)
        o = chunk.writeUInt32LE(sid, o)
        o = chunk.writeUInt32LE(tf, o)
      }
    }
    const at = i * TERM_WIDTH
    termTable.writeUInt32LE(putString(key), at)
    termTable.writeUInt32LE(key.length, at + 4)
    termTable.writeUInt32LE(postingBytes, at + 8)
    termTable.writeUInt32LE(size, at + 12)
    termTable.writeUInt32LE(all.size, at + 16)
    chunkHash(chunk).copy(termTable, at + 20)
    chunks.push(chunk)
    postingBytes += size
  })
  const docWidth = 12 + 4 * fields
  const docTable = Buffer.alloc(docs.length * docWidth)
  docs.forEach(({sid, key, lengths}, i) => {
    let o = i * docWidth
    o = docTable.writeUInt32LE(sid, o)
    o = docTable.writeUInt32LE(putString(key), o)
    o = docTable.writeUInt32LE(key.length, o)
    for (let f = 0; f < fields; f++) o = docTable.writeUInt32LE(lengths[f] ?? 0, o)
  })
  const pathOrder = Buffer.alloc(docs.length * 4)
  byPath.forEach((d, i) => pathOrder.writeUInt32LE(d, i * 4))
  const header: PostingsHeader = {
    format: POSTINGS_FORMAT,
    documentCount: parts.documentCount,
    nextId: parts.nextId,
    fieldIds: parts.fieldIds,
    averageFieldLength: parts.averageFieldLength,
    dirtCount: parts.dirtCount,
    terms: terms.length,
    docs: docs.length,
    fields,
    strings: stringBytes,
    postings: postingBytes,
  }
  return Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`, 'utf8'), termTable, docTable, pathOrder, ...strings, ...chunks])
}

/** The hash an index records for its postings file: of the file's head (postings are checked term by term). */
export function postingsHash(bytes: Buffer): string {
  return createHash('sha256').update(bytes.subarray(0, headLength(bytes))).digest('hex')
}

function headLength(bytes: Buffer): number {
  const nl = bytes.indexOf(10)
  if (nl < 0) throw new Error('no header')
  const h = parseHeader(bytes.subarray(0, nl))
  return nl + 1 + h.terms * TERM_WIDTH + h.docs * (12 + 4 * h.fields) + h.docs * 4 + h.strings
}

function parseHeader(line: Buffer): PostingsHeader {
  const h = JSON.parse(line.toString('utf8')) as PostingsHeader
  if (h?.format !== POSTINGS_FORMAT) throw new Error('another format')
  for (const k of ['documentCount', 'nextId', 'dirtCount', 'terms', 'docs', 'fields', 'strings', 'postings'] as const) {
    if (!Number.isInteger(h[k]) || h[k] < 0) throw new Error(`a bad ${k}`)
  }
  if (!Array.isArray(h.averageFieldLength) || Object.keys(h.fieldIds ?? {}).length !== h.fields) throw new Error('bad fields')
  return h
}

const HEADER_BYTES = 4096

/**
 * Open a postings file: its head is read and hashed (postingsHash); undefined when it is
 * missing, or its head is not the one `expected` names. The postings are read from the open
 * file as they are asked for; `close()` when done.
 */
export function openPostings(file: string, expected: string): Postings | undefined {
  let fd: number
  try {
    fd = openSync(file, 'r')
  } catch {
    return undefined
  }
  try {
    const first = Buffer.alloc(HEADER_BYTES)
    const n = readSync(fd, first, 0, HEADER_BYTES, 0)
    const nl = first.subarray(0, n).indexOf(10)
    if (nl < 0) throw new Error('no header')
    const h = parseHeader(first.subarray(0, nl))
    const length = nl + 1 + h.terms * TERM_WIDTH + h.docs * (12 + 4 * h.fields) + h.docs * 4 + h.strings
    const head = Buffer.alloc(length)
    if (readSync(fd, head, 0, length, 0) !== length) throw new Error('a short file')
    if (createHash('sha256').update(head).digest('hex') !== expected) throw new Error('not the postings the index names')
    return new Postings(head, fd)
  } catch {
    closeSync(fd)
    return undefined
  }
}

export interface TermEntry {
  /** documents holding the term in any field */
  docs: number
  /** field id → short id → term frequency */
  read(): Map<number, Map<number, number>>
  /** how many of these documents hold the term (in any field), without building the maps */
  holding(sids: ReadonlySet<number>): number
}

export interface DocEntry {
  sid: number
  path: string
  lengths: number[]
}

/** A postings file whose head was checked; lookups by term, short id and path. Throws on postings that are not the ones the head names. */
export class Postings {
  readonly header: PostingsHeader
  private readonly buf: Buffer
  private readonly terms: number
  private readonly docs: number
  private readonly strings: number
  private readonly postings: number
  private readonly pathOrder: number
  private readonly fd: number
  private readonly docWidth: number
  private readonly docTable: number

  /** `head`: the file's head, checked by openPostings; `fd`: the open file, for the postings. */
  constructor(head: Buffer, fd: number) {
    const nl = head.indexOf(10)
    const h = parseHeader(head.subarray(0, nl))
    this.header = h
    this.buf = head
    this.fd = fd
    this.docWidth = 12 + 4 * h.fields
    this.terms = nl + 1
    this.docTable = this.terms + h.terms * TERM_WIDTH
    this.pathOrder = this.docTable + h.docs * this.docWidth
    this.strings = this.pathOrder + h.docs * 4
    this.postings = this.strings + h.strings
    this.docs = h.docs
  }

  close(): void {
    closeSync(this.fd)
  }

  private u32(at: number): number {
    return this.buf.readUInt32LE(at)
  }

  private str(off: number, len: number): Buffer {
    const start = this.strings + off
    if (off + len > this.header.strings) throw new RangeError('a string outside the file')
    return this.buf.subarray(start, start + len)
  }

  term(term: string): TermEntry | undefined {
    const key = Buffer.from(term, 'utf8')
    let lo = 0
    let hi = this.header.terms - 1
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1
      const at = this.terms + mid * TERM_WIDTH
      const c = Buffer.compare(this.str(this.u32(at), this.u32(at + 4)), key)
      if (c === 0) {
        const off = this.u32(at + 8)
        const len = this.u32(at + 12)
        const hash = this.buf.subarray(at + 20, at + 36)
        return {docs: this.u32(at + 16), read: () => this.readPostings(off, len, hash), holding: (sids) => this.holding(off, len, hash, sids)}
      }
      if (c < 0) lo = mid + 1
      else hi = mid - 1
    }
    return undefined
  }

  private chunk(off: number, len: number, hash: Buffer): Buffer {
    if (off + len > this.header.postings) throw new RangeError('postings outside the file')
    const b = Buffer.alloc(len)
    if (readSync(this.fd, b, 0, len, this.postings + off) !== len) throw new Error('a short file')
    if (!chunkHash(b).equals(hash)) throw new Error('postings that are not the ones the file names')
    return b
  }

  private holding(off: number, len: number, hash: Buffer, sids: ReadonlySet<number>): number {
    if (sids.size === 0) return 0
    const b = this.chunk(off, len, hash)
    const found = new Set<number>()
    let o = 4
    for (let i = 0, n = b.readUInt32LE(0); i < n; i++) {
      const count = b.readUInt32LE(o + 4)
      o += 8
      for (let j = 0; j < count; j++, o += 8) if (sids.has(b.readUInt32LE(o))) found.add(b.readUInt32LE(o))
    }
    return found.size
  }

  private readPostings(off: number, len: number, hash: Buffer): Map<number, Map<number, number>> {
    const b = this.chunk(off, len, hash)
    const out = new Map<number, Map<number, number>>()
    let o = 0
    const n = b.readUInt32LE(o)
    o += 4
    for (let i = 0; i < n; i++) {
      const field = b.readUInt32LE(o)
      const count = b.readUInt32LE(o + 4)
      o += 8
      const freqs = new Map<number, number>()
      for (let j = 0; j < count; j++, o += 8) freqs.set(b.readUInt32LE(o), b.readUInt32LE(o + 4))
      out.set(field, freqs)
    }
    if (o !== len) throw new Error('postings of another length')
    return out
  }

  private docAt(i: number): DocEntry {
    const at = this.docTable + i * this.docWidth
    const lengths: number[] = []
    for (let f = 0; f < this.header.fields; f++) lengths.push(this.u32(at + 12 + 4 * f))
    return {sid: this.u32(at), path: this.str(this.u32(at + 4), this.u32(at + 8)).toString('utf8'), lengths}
  }

  bySid(sid: number): DocEntry | undefined {
    let lo = 0
    let hi = this.docs - 1
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1
      const s = this.u32(this.docTable + mid * this.docWidth)
      if (s === sid) return this.docAt(mid)
      if (s < sid) lo = mid + 1
      else hi = mid - 1
    }
    return undefined
  }

  byPath(path: string): DocEntry | undefined {
    const key = Buffer.from(path, 'utf8')
    let lo = 0
    let hi = this.docs - 1
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1
      const i = this.u32(this.pathOrder + mid * 4)
      if (i >= this.docs) throw new RangeError('a document outside the table')
      const at = this.docTable + i * this.docWidth
      const c = Buffer.compare(this.str(this.u32(at + 4), this.u32(at + 8)), key)
      if (c === 0) return this.docAt(i)
      if (c < 0) lo = mid + 1
      else hi = mid - 1
    }
    return undefined
  }
}
