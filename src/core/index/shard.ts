import {createHash, randomBytes} from 'node:crypto'
import {closeSync, mkdirSync, openSync, readSync, renameSync, rmSync, writeFileSync, fstatSync, existsSync} from 'node:fs'
import {dirname} from 'node:path'

/**
 * On-disk layout of one scope's index. A shard is queried where it lies: a search reads
 * the header and the "core" (sorted term dictionary, postings, field lengths, paths) and
 * scores BM25 itself, so a cold process pays for reading bytes, not for rebuilding a
 * MiniSearch object graph (PERF-NOTES: that rebuild is what made loadJSON slow). Document
 * records (provenance + body, for hits and snippets) are read one by one for hits only.
 *
 *   "ENGRAMIX" | u32 format | u32 headerLength | header JSON | core (4-aligned sections) | doc records
 *
 * The core carries a SHA-1 checked on load, each doc record its own SHA-1: a corrupt or
 * truncated file is detected and rebuilt, never answered from.
 */

export const MAGIC = 'ENGRAMIX'
/** Bump on any change to the layout or to the term pipeline: older shards are rebuilt. */
export const FORMAT_VERSION = 1

/** What a hit reports about a document; `body` feeds snippets. */
export interface DocRecord {
  path: string
  blob: string
  title: string
  tags: string[]
  author: string
  origin: string
  tainted: boolean
  reviewed_by: string | null
  body: string
}

/** Field lengths (title, tags, body) and per-term packed frequencies (see packTf). */
export interface DocTerms {
  lens: [number, number, number]
  terms: Map<string, number>
}

export const FIELDS = 3
/** Title, tags, body. Frequencies are packed in one number: body * 65536 + tags * 256 + title. */
export function packTf(title: number, tags: number, body: number): number {
  return Math.min(body, 0x7fff) * 65536 + Math.min(tags, 255) * 256 + Math.min(title, 255)
}
export function unpackTf(p: number, out: Float64Array): void {
  out[0] = p & 255
  out[1] = (p >>> 8) & 255
  out[2] = Math.floor(p / 65536)
}

export interface ShardHeader {
  scope: string
  tree: string
  build: string
  n: number
  nTerms: number
  total: [number, number, number]
  sections: Record<'paths' | 'dict' | 'termOff' | 'post' | 'lens' | 'docOff', [number, number]>
  coreLength: number
  coreSha1: string
  docsLength: number
}

export class CorruptIndexError extends Error {}

// ---- writing ------------------------------------------------------------------------

class ByteWriter {
  buf: Buffer
  len = 0
  constructor(size = 1 << 16) {
    this.buf = Buffer.allocUnsafe(size)
  }
  ensure(extra: number): void {
    if (this.len + extra <= this.buf.length) return
    let size = this.buf.length * 2
    while (size < this.len + extra) size *= 2
    const next = Buffer.allocUnsafe(size)
    this.buf.copy(next, 0, 0, this.len)
    this.buf = next
  }
  varint(v: number): void {
    this.ensure(10)
    while (v >= 0x80) {
      this.buf[this.len++] = (v & 0x7f) | 0x80
      v = Math.floor(v / 128)
    }
    this.buf[this.len++] = v
  }
  bytes(b: Uint8Array): void {
    this.ensure(b.length)
    this.buf.set(b, this.len)
    this.len += b.length
  }
  align4(): void {
    this.ensure(4)
    while (this.len % 4 !== 0) this.buf[this.len++] = 0
  }
  result(): Buffer {
    return this.buf.subarray(0, this.len)
  }
}

/** Postings being accumulated during a build: per term, pairs (docId, packed tf). */
export class ShardBuilder {
  readonly postings = new Map<string, number[]>()
  readonly lens: number[] = []
  readonly records: Buffer[] = []
  readonly paths: string[] = []
  readonly total: [number, number, number] = [0, 0, 0]

  /** Documents must be added in ascending path order (doc ids follow path order). */
  add(doc: DocRecord, terms: DocTerms): void {
    const id = this.paths.length
    this.paths.push(doc.path)
    for (let f = 0; f < FIELDS; f++) {
      this.lens.push(terms.lens[f])
      this.total[f] += terms.lens[f]
    }
    for (const [term, tf] of terms.terms) {
      let list = this.postings.get(term)
      if (!list) this.postings.set(term, (list = []))
      list.push(id, tf)
    }
    this.records.push(encodeRecord(doc))
  }

  get size(): number {
    return this.paths.length
  }

  /** Serialise to the file format (see the top of this file). */
  encode(scope: string, tree: string): Buffer {
    const terms = [...this.postings.keys()].sort()
    const core = new ByteWriter(1 << 20)
    const sections = {} as ShardHeader['sections']
    const section = (name: keyof ShardHeader['sections'], write: () => void) => {
      core.align4()
      const start = core.len
      write()
      sections[name] = [start, core.len - start]
    }
    section('paths', () => core.bytes(Buffer.from(this.paths.join('\n'), 'utf8')))
    section('dict', () => core.bytes(Buffer.from(terms.join('\n'), 'utf8')))
    const post = new ByteWriter(1 << 20)
    const termOff = new Uint32Array(terms.length + 1)
    for (let t = 0; t < terms.length; t++) {
      termOff[t] = post.len
      const list = this.postings.get(terms[t])!
      let prev = 0
      for (let i = 0; i < list.length; i += 2) {
        post.varint(list[i] - prev)
        prev = list[i]
        const p = list[i + 1]
        post.varint(p & 255)
        post.varint((p >>> 8) & 255)
        post.varint(Math.floor(p / 65536))
      }
    }
    termOff[terms.length] = post.len
    section('termOff', () => core.bytes(new Uint8Array(termOff.buffer)))
    section('post', () => core.bytes(post.result()))
    section('lens', () => core.bytes(new Uint8Array(new Uint32Array(this.lens).buffer)))
    const docOff = new Uint32Array(this.records.length + 1)
    let off = 0
    for (let i = 0; i < this.records.length; i++) {
      docOff[i] = off
      off += this.records[i].length
    }
    docOff[this.records.length] = off
    if (off > 0xffffffff) throw new Error('index shard too large')
    section('docOff', () => core.bytes(new Uint8Array(docOff.buffer)))
    core.align4()
    const coreBuf = core.result()
    const header: ShardHeader = {
      scope,
      tree,
      build: randomBytes(8).toString('hex'),
      n: this.paths.length,
      nTerms: terms.length,
      total: this.total,
      sections,
      coreLength: coreBuf.length,
      coreSha1: createHash('sha1').update(coreBuf).digest('hex'),
      docsLength: off,
    }
    const headerBuf = Buffer.from(JSON.stringify(header), 'utf8')
    const pad = (4 - ((16 + headerBuf.length) % 4)) % 4
    const head = Buffer.alloc(16)
    head.write(MAGIC, 0, 'latin1')
    head.writeUInt32LE(FORMAT_VERSION, 8)
    head.writeUInt32LE(headerBuf.length + pad, 12)
    return Buffer.concat([head, headerBuf, Buffer.alloc(pad, 0x20), coreBuf, ...this.records])
  }
}

function encodeRecord(doc: DocRecord): Buffer {
  const json = Buffer.from(JSON.stringify(doc), 'utf8')
  return Buffer.concat([createHash('sha1').update(json).digest(), json])
}

/** Write a file atomically (temp + rename): a reader sees the old or the new file, never half. */
export function writeAtomic(path: string, data: Buffer | string): void {
  mkdirSync(dirname(path), {recursive: true})
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
  writeFileSync(tmp, data)
  renameSync(tmp, path)
}

export function removeFile(path: string): void {
  rmSync(path, {force: true})
}

// ---- reading ------------------------------------------------------------------------

/** A shard opened for querying. Holds a file descriptor until close(). */
export class LoadedShard {
  readonly header: ShardHeader
  readonly paths: string[]
  readonly dict: string[]
  readonly termOff: Uint32Array
  readonly post: Uint8Array
  /** field lengths, FIELDS per doc */
  readonly lens: Uint32Array
  readonly docOff: Uint32Array
  readonly bytes: number
  private fd: number | undefined
  private readonly docsStart: number

  private constructor(fd: number, header: ShardHeader, core: ArrayBuffer, docsStart: number, bytes: number) {
    this.fd = fd
    this.header = header
    this.docsStart = docsStart
    this.bytes = bytes
    const s = header.sections
    const u8 = (name: keyof ShardHeader['sections']) => new Uint8Array(core, s[name][0], s[name][1])
    const u32 = (name: keyof ShardHeader['sections']) => new Uint32Array(core, s[name][0], s[name][1] / 4)
    const dec = new TextDecoder()
    this.paths = header.n === 0 ? [] : dec.decode(u8('paths')).split('\n')
    this.dict = header.nTerms === 0 ? [] : dec.decode(u8('dict')).split('\n')
    this.termOff = u32('termOff')
    this.post = u8('post')
    this.lens = u32('lens')
    this.docOff = u32('docOff')
    if (
      this.paths.length !== header.n ||
      this.dict.length !== header.nTerms ||
      this.termOff.length !== header.nTerms + 1 ||
      this.lens.length !== header.n * FIELDS ||
      this.docOff.length !== header.n + 1 ||
      this.docOff[header.n] !== header.docsLength ||
      this.termOff[header.nTerms] !== this.post.length
    ) {
      throw new CorruptIndexError('inconsistent sections')
    }
  }

  /**
   * Open and check a shard. Returns undefined when there is none; throws
   * CorruptIndexError (unreadable, truncated, wrong scope) or OldFormatError.
   */
  static open(path: string, scope: string): LoadedShard | undefined {
    let fd: number
    try {
      fd = openSync(path, 'r')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw error
    }
    try {
      const {header, headerEnd, size} = readHeader(fd)
      if (header.scope !== scope) throw new CorruptIndexError(`holds scope ${String(header.scope)}`)
      if (headerEnd + header.coreLength + header.docsLength !== size) throw new CorruptIndexError('truncated or padded')
      const core = new ArrayBuffer(header.coreLength)
      if (readSync(fd, new Uint8Array(core), 0, header.coreLength, headerEnd) !== header.coreLength) {
        throw new CorruptIndexError('truncated')
      }
      if (createHash('sha1').update(new Uint8Array(core)).digest('hex') !== header.coreSha1) {
        throw new CorruptIndexError('checksum mismatch')
      }
      return new LoadedShard(fd, header, core, headerEnd + header.coreLength, size)
    } catch (error) {
      closeSync(fd)
      if (error instanceof CorruptIndexError || error instanceof OldFormatError) throw error
      throw new CorruptIndexError(error instanceof Error ? error.message : String(error))
    }
  }

  /** Postings of term index t: calls fn(docId, titleTf, tagsTf, bodyTf). */
  forEachPosting(t: number, fn: (doc: number, title: number, tags: number, body: number) => void): void {
    const p = this.post
    let i = this.termOff[t]
    const end = this.termOff[t + 1]
    let doc = 0
    while (i < end) {
      let b = p[i++]
      let d = b & 0x7f
      for (let mul = 128; b >= 0x80; mul *= 128) {
        b = p[i++]
        d += (b & 0x7f) * mul
      }
      doc += d
      // title and tags frequencies are capped at 255, so they take at most two bytes
      let title = p[i++]
      if (title >= 0x80) title = (title & 0x7f) + p[i++] * 128
      let tags = p[i++]
      if (tags >= 0x80) tags = (tags & 0x7f) + p[i++] * 128
      b = p[i++]
      let body = b & 0x7f
      for (let mul = 128; b >= 0x80; mul *= 128) {
        b = p[i++]
        body += (b & 0x7f) * mul
      }
      fn(doc, title, tags, body)
    }
  }

  /** Index of a term in the sorted dictionary, or -1. */
  termIndex(term: string): number {
    return sortedIndex(this.dict, term)
  }

  /** First dictionary index whose term is >= term. */
  lowerBound(term: string): number {
    let lo = 0
    let hi = this.dict.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (this.dict[mid] < term) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  /** Doc id of a scope-relative path, or -1 (paths are sorted). */
  docIndex(path: string): number {
    return sortedIndex(this.paths, path)
  }

  /** Read and check one document record. */
  record(doc: number): DocRecord {
    if (this.fd === undefined) throw new Error('shard closed')
    const start = this.docOff[doc]
    const len = this.docOff[doc + 1] - start
    const buf = Buffer.allocUnsafe(len)
    if (len < 20 || readSync(this.fd, buf, 0, len, this.docsStart + start) !== len) throw new CorruptIndexError('truncated record')
    const json = buf.subarray(20)
    if (!createHash('sha1').update(json).digest().equals(buf.subarray(0, 20))) throw new CorruptIndexError('record checksum mismatch')
    const rec = JSON.parse(json.toString('utf8')) as DocRecord
    if (rec.path !== this.paths[doc]) throw new CorruptIndexError('record does not match its path')
    return rec
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd)
    this.fd = undefined
  }
}

export class OldFormatError extends Error {}

function readHeader(fd: number): {header: ShardHeader; headerEnd: number; size: number} {
  const size = fstatSync(fd).size
  const head = Buffer.alloc(16)
  if (readSync(fd, head, 0, 16, 0) !== 16) throw new CorruptIndexError('truncated header')
  if (head.toString('latin1', 0, 8) !== MAGIC) throw new CorruptIndexError('not an engram index file')
  const format = head.readUInt32LE(8)
  if (format !== FORMAT_VERSION) throw new OldFormatError(`format ${format}, expected ${FORMAT_VERSION}`)
  const headerLength = head.readUInt32LE(12)
  if (16 + headerLength > size) throw new CorruptIndexError('truncated header')
  const hb = Buffer.alloc(headerLength)
  readSync(fd, hb, 0, headerLength, 16)
  let header: ShardHeader
  try {
    header = JSON.parse(hb.toString('utf8')) as ShardHeader
  } catch {
    throw new CorruptIndexError('unreadable header')
  }
  if (!header || typeof header !== 'object' || typeof header.coreLength !== 'number' || typeof header.tree !== 'string') {
    throw new CorruptIndexError('unreadable header')
  }
  return {header, headerEnd: 16 + headerLength, size}
}

/** The header alone (for status), or undefined when missing or unreadable. */
export function peekHeader(path: string): {header: ShardHeader; size: number} | undefined {
  if (!existsSync(path)) return undefined
  let fd: number | undefined
  try {
    fd = openSync(path, 'r')
    const {header, size} = readHeader(fd)
    return {header, size}
  } catch {
    return undefined
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}

// ---- the delta segment --------------------------------------------------------------

/** A document added since the base was built, with its terms. */
export interface DeltaDoc extends DocRecord {
  lens: [number, number, number]
  terms: [string, number][]
}

/**
 * Changes since the base shard: base doc ids deleted (or replaced) and documents added,
 * as of `tree`. Small by construction (merged into a new base past a bound), so it is
 * plain JSON behind a checksum line.
 */
export interface Delta {
  format: number
  scope: string
  /** the base build this delta applies to */
  build: string
  tree: string
  deleted: number[]
  docs: DeltaDoc[]
}

export function encodeDelta(delta: Delta): string {
  const json = JSON.stringify(delta)
  return `${createHash('sha1').update(json).digest('hex')}\n${json}`
}

/** Parse a delta file; throws CorruptIndexError / OldFormatError. */
export function decodeDelta(text: string, scope: string): Delta {
  const nl = text.indexOf('\n')
  if (nl !== 40) throw new CorruptIndexError('delta: no checksum line')
  const json = text.slice(41)
  if (createHash('sha1').update(json).digest('hex') !== text.slice(0, 40)) throw new CorruptIndexError('delta: checksum mismatch')
  const d = JSON.parse(json) as Delta
  if (d.format !== FORMAT_VERSION) throw new OldFormatError(`delta format ${d.format}`)
  if (d.scope !== scope) throw new CorruptIndexError(`delta holds scope ${String(d.scope)}`)
  return d
}

/** Position of `value` in a sorted list (binary search), or -1. */
function sortedIndex(list: readonly string[], value: string): number {
  let lo = 0
  let hi = list.length - 1
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1
    const v = list[mid]
    if (v === value) return mid
    if (v < value) lo = mid + 1
    else hi = mid - 1
  }
  return -1
}
