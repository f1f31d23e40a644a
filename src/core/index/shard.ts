import {createHash, randomBytes} from 'node:crypto'
import {closeSync, mkdirSync, openSync, readSync, renameSync, rmSync, writeFileSync, fstatSync, existsSync} from 'node:fs'
import {dirname} from 'node:path'

/**
 * On-disk layout of one scope's index. A shard is queried where it lies: a search reads
 * the header and then only the parts of the "core" (sorted term dictionary, postings,
 * field lengths, paths) its query touches, and scores BM25 itself, so a cold process pays
 * for the bytes a query needs, not for the file size nor for rebuilding an object graph
 * (PERF-NOTES: that rebuild is what made loadJSON slow). Document records (provenance +
 * body, for hits and snippets) are read one by one for hits only.
 *
 *   "ENGRAMIX" | u32 format | u32 headerLength | header JSON | block sums | core (4-aligned sections) | doc records
 *
 * The core is cut into fixed blocks, each with a SHA-1 in "block sums" (themselves checked
 * by a SHA-1 in the header when the shard is opened). A block is read and checked the
 * first time anything in it is used, and each doc record carries its own SHA-1: corrupt
 * bytes are noticed before they can take part in an answer (CorruptIndexError, and the
 * caller rebuilds), and a truncated file is noticed on open from its size.
 */

export const MAGIC = 'ENGRAMIX'
/** Bump on any change to the layout or to the term pipeline: older shards are rebuilt. */
export const FORMAT_VERSION = 2
/**
 * Bytes per checked block of the core: small enough that a rare word reads and hashes
 * little, large enough that the per-block hash call and the sums stay cheap (about 2 KB
 * of sums per 3 MB of core).
 */
export const BLOCK_SIZE = 32 * 1024
const SUM_BYTES = 20

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

/**
 * Core sections, in file order: the dictionary (terms sorted by their UTF-8 bytes, so
 * lookups and prefix ranges work on bytes without decoding it) with its offsets and each
 * term's postings offset, field lengths, record and path offsets, paths, postings.
 */
const SECTIONS = ['dict', 'dictOff', 'termOff', 'lens', 'docOff', 'pathOff', 'paths', 'post'] as const
type SectionName = (typeof SECTIONS)[number]

export interface ShardHeader {
  scope: string
  tree: string
  build: string
  n: number
  nTerms: number
  total: [number, number, number]
  /** [start, length] of each section within the core */
  sections: Record<SectionName, [number, number]>
  blockSize: number
  coreLength: number
  /** SHA-1 of the block sums */
  sumsSha1: string
  docsLength: number
}

export class CorruptIndexError extends Error {
  /** the scope whose shard is damaged, when known */
  scope?: string
}

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

function u32bytes(values: ArrayLike<number>): Uint8Array {
  return new Uint8Array(Uint32Array.from(values).buffer)
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

  /** Serialise to the file format (see the top of this file); `blockSize` only varies in tests. */
  encode(scope: string, tree: string, blockSize = BLOCK_SIZE): Buffer {
    const terms = [...this.postings.keys()].map((term) => ({term, bytes: Buffer.from(term, 'utf8')}))
    terms.sort((a, b) => Buffer.compare(a.bytes, b.bytes))
    const post = new ByteWriter(1 << 20)
    const termOff = new Uint32Array(terms.length + 1)
    for (let t = 0; t < terms.length; t++) {
      termOff[t] = post.len
      const list = this.postings.get(terms[t].term)!
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
    const docOff = new Uint32Array(this.records.length + 1)
    let off = 0
    for (let i = 0; i < this.records.length; i++) {
      docOff[i] = off
      off += this.records[i].length
    }
    docOff[this.records.length] = off
    if (off > 0xffffffff) throw new Error('index shard too large')
    const pathBytes = this.paths.map((p) => Buffer.from(p, 'utf8'))
    const offsets = (list: Uint8Array[]) => {
      const out = new Uint32Array(list.length + 1)
      for (let i = 0; i < list.length; i++) out[i + 1] = out[i] + list[i].length
      return out
    }

    const core = new ByteWriter(1 << 20)
    const sections = {} as ShardHeader['sections']
    const write: Record<SectionName, () => void> = {
      dict: () => terms.forEach((t) => core.bytes(t.bytes)),
      dictOff: () => core.bytes(new Uint8Array(offsets(terms.map((t) => t.bytes)).buffer)),
      termOff: () => core.bytes(new Uint8Array(termOff.buffer)),
      lens: () => core.bytes(u32bytes(this.lens)),
      docOff: () => core.bytes(new Uint8Array(docOff.buffer)),
      pathOff: () => core.bytes(new Uint8Array(offsets(pathBytes).buffer)),
      paths: () => pathBytes.forEach((p) => core.bytes(p)),
      post: () => core.bytes(post.result()),
    }
    for (const name of SECTIONS) {
      core.align4()
      const start = core.len
      write[name]()
      sections[name] = [start, core.len - start]
    }
    core.align4()
    const coreBuf = core.result()
    const blocks = Math.ceil(coreBuf.length / blockSize)
    const sums = Buffer.allocUnsafe(blocks * SUM_BYTES)
    for (let b = 0; b < blocks; b++) {
      createHash('sha1')
        .update(coreBuf.subarray(b * blockSize, (b + 1) * blockSize))
        .digest()
        .copy(sums, b * SUM_BYTES)
    }
    const header: ShardHeader = {
      scope,
      tree,
      build: randomBytes(8).toString('hex'),
      n: this.paths.length,
      nTerms: terms.length,
      total: this.total,
      sections,
      blockSize,
      coreLength: coreBuf.length,
      sumsSha1: createHash('sha1').update(sums).digest('hex'),
      docsLength: off,
    }
    const headerBuf = Buffer.from(JSON.stringify(header), 'utf8')
    const pad = (4 - ((16 + headerBuf.length) % 4)) % 4
    const head = Buffer.alloc(16)
    head.write(MAGIC, 0, 'latin1')
    head.writeUInt32LE(FORMAT_VERSION, 8)
    head.writeUInt32LE(headerBuf.length + pad, 12)
    return Buffer.concat([head, headerBuf, Buffer.alloc(pad, 0x20), sums, coreBuf, ...this.records])
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

/**
 * A shard opened for querying. Holds a file descriptor until close(). Opening reads the
 * header and the block sums only; each accessor below reads and checks the blocks it
 * needs on first use and throws CorruptIndexError (with the scope) when one is damaged.
 */
export class LoadedShard {
  readonly header: ShardHeader
  readonly bytes: number
  private fd: number | undefined
  private readonly coreStart: number
  private readonly docsStart: number
  /** the core, filled block by block as blocks are first used (unread blocks hold garbage) */
  private readonly core: Buffer
  private readonly sums: Buffer
  private readonly checked: Uint8Array
  private readonly sec: Record<SectionName, [number, number]>
  private dictLoaded = false
  private lensLoaded = false
  private dictBytes!: Uint8Array
  private dictOffs!: Uint32Array
  private termOffs!: Uint32Array
  private lensArray!: Uint32Array
  private readonly docOff: Uint32Array
  private readonly pathOff: Uint32Array
  private readonly pathCache: (string | undefined)[]
  /**
   * Postings of every term, per document four varints: the doc-id gap and the title,
   * tags and body frequencies. Only the range `postings(t)` returns has been read.
   */
  readonly post: Uint8Array

  private constructor(fd: number, header: ShardHeader, sums: Buffer, coreStart: number, bytes: number) {
    this.fd = fd
    this.header = header
    this.bytes = bytes
    this.sums = sums
    this.coreStart = coreStart
    this.docsStart = coreStart + header.coreLength
    this.sec = header.sections
    // allocUnsafeSlow: no zero fill and no pool; untouched pages of a large core cost nothing
    this.core = Buffer.allocUnsafeSlow(header.coreLength)
    this.checked = new Uint8Array(sums.length / SUM_BYTES)
    this.post = this.u8('post')
    this.docOff = this.u32('docOff')
    this.pathOff = this.u32('pathOff')
    this.pathCache = new Array<string | undefined>(header.n)
  }

  private u8(name: SectionName): Uint8Array {
    const [start, length] = this.sec[name]
    return new Uint8Array(this.core.buffer, this.core.byteOffset + start, length)
  }

  private u32(name: SectionName): Uint32Array {
    const [start, length] = this.sec[name]
    return new Uint32Array(this.core.buffer, this.core.byteOffset + start, length / 4)
  }

  /**
   * Open a shard and check its header, size and block sums. Returns undefined when there
   * is none; throws CorruptIndexError (unreadable, truncated, wrong scope) or OldFormatError.
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
      const sumsLength = checkLayout(header)
      if (headerEnd + sumsLength + header.coreLength + header.docsLength !== size) throw new CorruptIndexError('truncated or padded')
      const sums = Buffer.allocUnsafe(sumsLength)
      if (readSync(fd, sums, 0, sumsLength, headerEnd) !== sumsLength) throw new CorruptIndexError('truncated')
      if (createHash('sha1').update(sums).digest('hex') !== header.sumsSha1) throw new CorruptIndexError('checksum mismatch')
      return new LoadedShard(fd, header, sums, headerEnd + sumsLength, size)
    } catch (error) {
      closeSync(fd)
      if (error instanceof CorruptIndexError || error instanceof OldFormatError) throw error
      throw new CorruptIndexError(error instanceof Error ? error.message : String(error))
    }
  }

  private corrupt(message: string): CorruptIndexError {
    const error = new CorruptIndexError(message)
    error.scope = this.header.scope
    return error
  }

  /** Read and check the core blocks holding bytes [start, end) of section `name`. */
  private need(name: SectionName, start: number, end: number): void {
    if (end <= start) return
    const bs = this.header.blockSize
    const from = this.sec[name][0] + start
    const last = Math.floor((from + (end - start) - 1) / bs)
    for (let b = Math.floor(from / bs); b <= last; b++) {
      if (this.checked[b]) continue
      // one read for the run of blocks not read yet
      let runEnd = b
      while (runEnd < last && !this.checked[runEnd + 1]) runEnd++
      if (this.fd === undefined) throw new Error('shard closed')
      const pos = b * bs
      const len = Math.min((runEnd + 1) * bs, this.header.coreLength) - pos
      if (readSync(this.fd, this.core, pos, len, this.coreStart + pos) !== len) throw this.corrupt('truncated')
      for (; b <= runEnd; b++) {
        const digest = createHash('sha1')
          .update(this.core.subarray(b * bs, Math.min((b + 1) * bs, this.header.coreLength)))
          .digest()
        if (digest.compare(this.sums, b * SUM_BYTES, (b + 1) * SUM_BYTES) !== 0) throw this.corrupt(`checksum mismatch in block ${b}`)
        this.checked[b] = 1
      }
      b = runEnd
    }
  }

  private needAll(name: SectionName): void {
    this.need(name, 0, this.sec[name][1])
  }

  /** The dictionary (term bytes and their offsets), loaded and checked together with the postings offsets. */
  dictionary(): {bytes: Uint8Array; off: Uint32Array} {
    if (!this.dictLoaded) {
      this.needAll('dict')
      this.needAll('dictOff')
      this.needAll('termOff')
      const bytes = this.u8('dict')
      const off = this.u32('dictOff')
      const termOff = this.u32('termOff')
      // checksums catch damage; this catches a writer bug before it can index out of range
      const n = this.header.nTerms
      let ok = off[0] === 0 && termOff[0] === 0 && off[n] === bytes.length && termOff[n] === this.post.length
      for (let i = 0; ok && i < n; i++) ok = off[i] < off[i + 1] && termOff[i] <= termOff[i + 1]
      if (!ok) throw this.corrupt('inconsistent dictionary')
      this.dictBytes = bytes
      this.dictOffs = off
      this.termOffs = termOff
      this.dictLoaded = true
    }
    return {bytes: this.dictBytes, off: this.dictOffs}
  }

  /** Field lengths, FIELDS per doc. */
  get lens(): Uint32Array {
    if (!this.lensLoaded) {
      this.needAll('lens')
      this.lensArray = this.u32('lens')
      this.lensLoaded = true
    }
    return this.lensArray
  }

  /** Byte range of term t's postings in `post`, read and checked. */
  postings(t: number): {start: number; end: number} {
    this.dictionary()
    const start = this.termOffs[t]
    const end = this.termOffs[t + 1]
    this.need('post', start, end)
    return {start, end}
  }

  /** Size in bytes of term t's postings (without reading them). */
  postingBytes(t: number): number {
    this.dictionary()
    return this.termOffs[t + 1] - this.termOffs[t]
  }

  /** The term at dictionary index i. */
  term(i: number): string {
    const {off} = this.dictionary()
    return this.core.toString('utf8', this.sec.dict[0] + off[i], this.sec.dict[0] + off[i + 1])
  }

  /** Index of a term in the dictionary, or -1. */
  termIndex(term: string): number {
    const q = Buffer.from(term, 'utf8')
    const i = this.lowerBound(q)
    return i < this.header.nTerms && this.compareTerm(i, q) === 0 ? i : -1
  }

  /** First dictionary index whose term is >= q (bytewise). */
  lowerBound(q: Uint8Array): number {
    this.dictionary()
    let lo = 0
    let hi = this.header.nTerms
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (this.compareTerm(mid, q) < 0) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  /** Dictionary terms starting with `prefix` (in dictionary order). */
  prefixTerms(prefix: string): string[] {
    const q = Buffer.from(prefix, 'utf8')
    const {bytes, off} = this.dictionary()
    const out: string[] = []
    for (let i = this.lowerBound(q); i < this.header.nTerms; i++) {
      const a = off[i]
      if (off[i + 1] - a < q.length) break
      let k = 0
      while (k < q.length && bytes[a + k] === q[k]) k++
      if (k < q.length) break
      out.push(this.term(i))
    }
    return out
  }

  /** Dictionary term i compared with q by bytes (UTF-8 byte order is the dictionary's order). */
  private compareTerm(i: number, q: Uint8Array): number {
    const bytes = this.dictBytes
    const a = this.dictOffs[i]
    const la = this.dictOffs[i + 1] - a
    const n = Math.min(la, q.length)
    for (let k = 0; k < n; k++) {
      const d = bytes[a + k] - q[k]
      if (d !== 0) return d
    }
    return la - q.length
  }

  /** Scope-relative path of a document. */
  path(doc: number): string {
    let p = this.pathCache[doc]
    if (p !== undefined) return p
    if (!(doc >= 0 && doc < this.header.n)) throw new RangeError(`no document ${doc}`)
    this.need('pathOff', doc * 4, doc * 4 + 8)
    const start = this.pathOff[doc]
    const end = this.pathOff[doc + 1]
    if (!(start <= end && end <= this.sec.paths[1])) throw this.corrupt('inconsistent path offsets')
    this.need('paths', start, end)
    p = this.core.toString('utf8', this.sec.paths[0] + start, this.sec.paths[0] + end)
    this.pathCache[doc] = p
    return p
  }

  /** Doc id of a scope-relative path, or -1 (paths are sorted). */
  docIndex(path: string): number {
    let lo = 0
    let hi = this.header.n - 1
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1
      const v = this.path(mid)
      if (v === path) return mid
      if (v < path) lo = mid + 1
      else hi = mid - 1
    }
    return -1
  }

  /** Read and check one document record. */
  record(doc: number): DocRecord {
    if (this.fd === undefined) throw new Error('shard closed')
    this.need('docOff', doc * 4, doc * 4 + 8)
    const start = this.docOff[doc]
    const len = this.docOff[doc + 1] - start
    if (!(len >= 20 && start + len <= this.header.docsLength)) throw this.corrupt('inconsistent record offsets')
    const buf = Buffer.allocUnsafe(len)
    if (readSync(this.fd, buf, 0, len, this.docsStart + start) !== len) throw this.corrupt('truncated record')
    const json = buf.subarray(20)
    if (!createHash('sha1').update(json).digest().equals(buf.subarray(0, 20))) throw this.corrupt('record checksum mismatch')
    const rec = JSON.parse(json.toString('utf8')) as DocRecord
    if (rec.path !== this.path(doc)) throw this.corrupt('record does not match its path')
    return rec
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd)
    this.fd = undefined
  }
}

export class OldFormatError extends Error {}

/** Check that the sections fit the core and the counts; returns the length of the block sums. */
function checkLayout(h: ShardHeader): number {
  const int = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 0
  if (!int(h.n) || !int(h.nTerms) || !int(h.docsLength) || !int(h.blockSize) || h.blockSize === 0 || h.coreLength % 4 !== 0) {
    throw new CorruptIndexError('unreadable header')
  }
  if (!h.sections || typeof h.sections !== 'object' || !Array.isArray(h.total) || h.total.length !== FIELDS) {
    throw new CorruptIndexError('unreadable header')
  }
  const expected: Partial<Record<SectionName, number>> = {
    dictOff: (h.nTerms + 1) * 4,
    termOff: (h.nTerms + 1) * 4,
    lens: h.n * FIELDS * 4,
    docOff: (h.n + 1) * 4,
    pathOff: (h.n + 1) * 4,
  }
  for (const name of SECTIONS) {
    const s = h.sections[name]
    if (!Array.isArray(s) || !int(s[0]) || !int(s[1]) || s[0] % 4 !== 0 || s[0] + s[1] > h.coreLength) {
      throw new CorruptIndexError('inconsistent sections')
    }
    if (expected[name] !== undefined && s[1] !== expected[name]) throw new CorruptIndexError('inconsistent sections')
  }
  return Math.ceil(h.coreLength / h.blockSize) * SUM_BYTES
}

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

/** The header alone (for status), or undefined when missing or unreadable; `coreStart` is the core's file offset. */
export function peekHeader(path: string): {header: ShardHeader; size: number; coreStart: number} | undefined {
  if (!existsSync(path)) return undefined
  let fd: number | undefined
  try {
    fd = openSync(path, 'r')
    const {header, headerEnd, size} = readHeader(fd)
    return {header, size, coreStart: headerEnd + checkLayout(header)}
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
