/**
 * Git's loose objects, read and written in-process (README "Load on one host"). A write
 * makes a handful of git calls; each costs a process (several ms of CPU), and under load
 * CPU is what runs out. What a commit needs to know about the commits just before it — its
 * parent's tree, whether a file changed between two commits — is in objects that are still
 * loose (packNowAndThen in commit.ts packs them only now and then), so it is read here.
 *
 * Only where it is sure: a store with its own `.git` folder, SHA-1 object names, an object
 * whose inflated bytes hash to its name (a planted file cannot pass for it). Anything else —
 * a packed object, a linked worktree, a merge in the way — returns undefined and the caller
 * asks git, as before.
 */
import {createHash, randomBytes} from 'node:crypto'
import {linkSync, lstatSync, mkdirSync, readFileSync, unlinkSync, utimesSync, writeFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import {join} from 'node:path'

const OID = /^[0-9a-f]{40}$/
let zlib: typeof import('node:zlib') | undefined
const z = () => (zlib ??= createRequire(import.meta.url)('node:zlib') as typeof import('node:zlib'))

function objectsDir(top: string): string | undefined {
  try {
    if (!lstatSync(join(top, '.git')).isDirectory()) return undefined
    // SHA-1 names only: a repository of another object format is git's to read and write
    if (/^\s*objectformat\s*=/im.test(readFileSync(join(top, '.git', 'config'), 'utf8'))) return undefined
    return join(top, '.git', 'objects')
  } catch {
    return undefined
  }
}

/** A loose object's type and body, verified against its name; undefined when it is not loose here. */
export function readLoose(top: string, oid: string): {type: string; body: Buffer} | undefined {
  const dir = objectsDir(top)
  if (!dir || !OID.test(oid)) return undefined
  let raw: Buffer
  try {
    raw = z().inflateSync(readFileSync(join(dir, oid.slice(0, 2), oid.slice(2))))
  } catch {
    return undefined
  }
  if (createHash('sha1').update(raw).digest('hex') !== oid) return undefined
  const nul = raw.indexOf(0)
  if (nul < 0) return undefined
  const [type, size] = raw.toString('latin1', 0, nul).split(' ')
  const body = raw.subarray(nul + 1)
  return Number(size) === body.length ? {type, body} : undefined
}

/** A loose commit's tree and parents. */
export function looseCommit(top: string, oid: string): {tree: string; parents: string[]} | undefined {
  const o = readLoose(top, oid)
  if (o?.type !== 'commit') return undefined
  const end = o.body.indexOf('\n\n')
  const header = o.body.toString('latin1', 0, end < 0 ? o.body.length : end).split('\n')
  const tree = /^tree ([0-9a-f]{40})$/.exec(header[0] ?? '')?.[1]
  if (!tree) return undefined
  const parents: string[] = []
  for (const line of header.slice(1)) {
    const m = /^parent ([0-9a-f]{40})$/.exec(line)
    if (!m) break
    parents.push(m[1])
  }
  return {tree, parents}
}

/** The id of entry `name` (its bytes as a latin1 string) of a loose tree, '' when the tree has no such entry, undefined when unsure. */
function treeEntry(top: string, tree: string, name: string): string | undefined {
  const entries = parseTree(top, tree)
  return entries === undefined ? undefined : (entries.find((e) => e.name === name)?.id ?? '')
}

/** The object at `path` (slash-separated) under a tree: its id, '' when absent, undefined when unsure. */
function idAt(top: string, tree: string, path: string): string | undefined {
  let id = tree
  for (const part of path.split('/')) {
    const next = treeEntry(top, id, part)
    if (next === undefined || next === '') return next
    id = next
  }
  return id
}

/**
 * The commits from `head` back to `base` (excluding it), newest first, in which any of
 * `paths` (repository paths) differs from the commit's parent — what `git log -- paths`
 * lists over that range — or undefined when that cannot be told from loose objects alone:
 * a merge or root commit on the way, an object not loose, `base` not met within `max`
 * commits. Trees are compared from the top down, so a commit that left a folder as it was
 * costs one tree read.
 */
export function changesSince(top: string, head: string, base: string, paths: string[], max = 256): string[] | undefined {
  const out: string[] = []
  let at = head
  for (let step = 0; at !== base; step++) {
    if (step >= max) return undefined
    const c = looseCommit(top, at)
    if (!c || c.parents.length !== 1) return undefined
    const p = looseCommit(top, c.parents[0])
    if (!p) return undefined
    const changed = differs(top, c.tree, p.tree, paths)
    if (changed === undefined) return undefined
    if (changed) out.push(at)
    at = c.parents[0]
  }
  return out
}

function differs(top: string, a: string, b: string, paths: string[]): boolean | undefined {
  if (a === b) return false
  for (const path of paths) {
    const parts = Buffer.from(path, 'utf8').toString('latin1').split('/')
    let x = a
    let y = b
    for (let i = 0; i < parts.length; i++) {
      const nx = treeEntry(top, x, parts[i])
      const ny = treeEntry(top, y, parts[i])
      if (nx === undefined || ny === undefined) return undefined
      // the same object (or absent from both): nothing under it changed
      if (nx === ny) break
      if (i === parts.length - 1) return true
      if (nx === '' || ny === '') {
        // a folder on one side only: the path changed only if that folder holds it
        const there = idAt(top, nx || ny, parts.slice(i + 1).join('/'))
        if (there === undefined) return undefined
        if (there !== '') return true
        break
      }
      x = nx
      y = ny
    }
  }
  return false
}

/** Write an object as git does: deflated, to a temporary file beside its place, then linked there (one already present is left alone). Its id, or undefined when this repository is not one this writes into. */
function writeLooseObject(top: string, type: string, body: Buffer, known?: string): string | undefined {
  const dir = objectsDir(top)
  if (!dir) return undefined
  const raw = Buffer.concat([Buffer.from(`${type} ${body.length}\0`, 'latin1'), body])
  const oid = known ?? createHash('sha1').update(raw).digest('hex')
  if (!OID.test(oid)) return undefined
  const folder = join(dir, oid.slice(0, 2))
  const file = join(folder, oid.slice(2))
  let there = false
  try {
    lstatSync(file)
    there = true
  } catch {
    // not there yet
  }
  // an object already there is kept only when its bytes are the object (git would trust the
  // name; a planted or damaged file would then break the commit that names it)
  if (there && readLoose(top, oid)) {
    // freshened, as git does, so a prune of old unreachable objects does not take it before a ref names it
    try {
      const now = new Date()
      utimesSync(file, now, now)
    } catch {
      // not ours to touch: git would fail the same way, and a prune needs weeks
    }
    return oid
  }
  try {
    if (there) unlinkSync(file)
    mkdirSync(folder, {recursive: true})
    const tmp = join(folder, `tmp_obj_engram_${process.pid}_${randomBytes(4).toString('hex')}`)
    writeFileSync(tmp, z().deflateSync(raw), {mode: 0o444})
    try {
      linkSync(tmp, file)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    } finally {
      unlinkSync(tmp)
    }
    return oid
  } catch {
    return undefined
  }
}

/**
 * Write a blob as a loose object, as `git hash-object -w` does. Returns false when this
 * repository is not one this writes into (the caller asks git).
 */
export function writeLooseBlob(top: string, oid: string, content: Buffer): boolean {
  return writeLooseObject(top, 'blob', content, oid) === oid
}

interface TreeEntry {
  mode: string
  /** the name's bytes, as a latin1 string (names need not be UTF-8) */
  name: string
  id: string
}

const TREE_MODE = '40000'
const MODES = new Set(['100644', '100755', '120000', '160000', TREE_MODE])

function parseTree(top: string, tree: string): TreeEntry[] | undefined {
  const o = readLoose(top, tree)
  if (o?.type !== 'tree') return undefined
  const b = o.body
  const out: TreeEntry[] = []
  let i = 0
  while (i < b.length) {
    const space = b.indexOf(0x20, i)
    const nul = b.indexOf(0, space)
    if (space < 0 || nul < 0 || nul + 21 > b.length) return undefined
    const mode = b.toString('latin1', i, space)
    // git's own modes only: an entry of another spelling (040000) would sort otherwise, and git knows what to do with it
    if (!MODES.has(mode)) return undefined
    out.push({mode, name: b.toString('latin1', space + 1, nul), id: b.toString('hex', nul + 1, nul + 21)})
    i = nul + 21
  }
  return out
}

/** git's order of tree entries: by name's bytes, a folder's name as if it ended in "/". */
const sortKey = (e: TreeEntry) => (e.mode === TREE_MODE ? `${e.name}/` : e.name)

function serialiseTree(entries: TreeEntry[]): Buffer {
  const sorted = [...entries].sort((a, b) => (sortKey(a) < sortKey(b) ? -1 : sortKey(a) > sortKey(b) ? 1 : 0))
  return Buffer.concat(sorted.flatMap((e) => [Buffer.from(`${e.mode} ${e.name}\0`, 'latin1'), Buffer.from(e.id, 'hex')]))
}

/**
 * The tree `base` (undefined: the empty tree) with files set to blobs (mode 100644) or
 * removed (null), written as loose objects — what `git read-tree base`, `update-index
 * --index-info` and `write-tree` in a private index make, without three processes.
 * Undefined when unsure: a tree on the way that is not loose, a file where a folder is
 * needed or the other way round. A folder left empty is dropped, as git drops it.
 */
export function treeWithChanges(top: string, base: string | undefined, changes: {path: string; blob: string | null}[]): string | undefined {
  const split = changes.map((c) => ({parts: Buffer.from(c.path, 'utf8').toString('latin1').split('/'), blob: c.blob}))
  if (split.some((c) => c.parts.some((p) => p === '' || p === '.' || p === '..') || (c.blob !== null && !OID.test(c.blob)))) return undefined
  const build = (tree: string | undefined, here: {parts: string[]; blob: string | null}[], root: boolean): string | null | undefined => {
    const entries = tree === undefined ? [] : parseTree(top, tree)
    if (!entries) return undefined
    const byName = new Map(entries.map((e) => [e.name, e]))
    const deeper = new Map<string, {parts: string[]; blob: string | null}[]>()
    for (const c of here) {
      const [name, ...rest] = c.parts
      if (rest.length > 0) {
        deeper.set(name, [...(deeper.get(name) ?? []), {parts: rest, blob: c.blob}])
        continue
      }
      const old = byName.get(name)
      if (old && !old.mode.startsWith('100')) return undefined // a folder, link or submodule there: git decides
      if (c.blob === null) byName.delete(name)
      else byName.set(name, {mode: '100644', name, id: c.blob})
    }
    for (const [name, sub] of deeper) {
      const old = byName.get(name)
      if (old && old.mode !== TREE_MODE) return undefined
      const made = build(old?.id, sub, false)
      if (made === undefined) return undefined
      if (made === null) byName.delete(name)
      else byName.set(name, {mode: TREE_MODE, name, id: made})
    }
    if (byName.size === 0 && !root) return null
    return writeLooseObject(top, 'tree', serialiseTree([...byName.values()]))
  }
  const made = build(base, split, true)
  return made === null ? undefined : made
}

/** "Name <email> " of a `git var` ident line, or undefined when it is not plainly one. */
export function identName(ident: string | undefined): string | undefined {
  const m = /^([^<>\n\0]+ <([^<>\n\0]*)>) \d+ [+-]\d{4}$/.exec(ident ?? '')
  // an address git made up from the host ("(none)") is one `git commit-tree` refuses
  if (!m || m[2] === '' || m[2].includes('(none)')) return undefined
  return m[1]
}

/**
 * A commit object written as `git commit-tree` writes it (no signature, no encoding
 * header: the message is UTF-8), dated now in this machine's time zone. `author` and
 * `committer` are "Name <email>" as git itself worked them out (`git var`). Undefined when
 * this repository is not one this writes into.
 */
export function writeLooseCommit(top: string, c: {tree: string; parents: string[]; author: string; committer: string; message: string}, now = new Date()): string | undefined {
  const offset = -now.getTimezoneOffset()
  const tz = `${offset < 0 ? '-' : '+'}${String(Math.floor(Math.abs(offset) / 60)).padStart(2, '0')}${String(Math.abs(offset) % 60).padStart(2, '0')}`
  const when = `${Math.floor(now.getTime() / 1000)} ${tz}`
  const head = [`tree ${c.tree}`, ...c.parents.map((p) => `parent ${p}`), `author ${c.author} ${when}`, `committer ${c.committer} ${when}`]
  return writeLooseObject(top, 'commit', Buffer.from(`${head.join('\n')}\n\n${c.message}`, 'utf8'))
}
