import {spawn} from 'node:child_process'

import {gitEnv, gitRead} from '../git.js'
import type {MemoryFile} from '../memory.js'
import {formatScope, parseScope, scopeDir} from '../scope.js'
import type {Store} from '../store.js'
import type {DocRecord, DocTerms} from './shard.js'
import {packTf} from './shard.js'
import {tokenize} from './tokenize.js'

/**
 * Where the index reads from: committed trees and blobs in git, never the work tree, so
 * a shard is exactly "the scope at tree X" and every hit's blob id is the one indexed.
 */

/** Files the index holds: markdown under a scope folder. */
export function isMemoryPath(path: string): boolean {
  return path.endsWith('.md')
}

/** Current tree id of each scope folder at HEAD (null when the folder is absent). One git call. */
export async function currentTrees(store: Store, scopes: string[]): Promise<Map<string, string | null>> {
  const out = new Map<string, string | null>(scopes.map((s) => [s, null]))
  if (scopes.length === 0) return out
  const byPath = new Map(scopes.map((s) => [store.gitPath(scopeDir(s)), s]))
  const text = await gitRead(store.top, ['--literal-pathspecs', 'ls-tree', '-z', 'HEAD', '--', ...byPath.keys()], {allowFail: true})
  for (const entry of text.split('\0')) {
    const m = /^\d+ tree ([0-9a-f]{40,64})\t(.*)$/s.exec(entry)
    if (!m) continue
    const scope = byPath.get(m[2])
    if (scope) out.set(scope, m[1])
  }
  return out
}

/** Every scope folder present at HEAD with its tree id. One git call. */
export async function listScopes(store: Store): Promise<Map<string, string>> {
  const p = store.prefix
  const text = await gitRead(
    store.top,
    ['--literal-pathspecs', 'ls-tree', '-z', 'HEAD', '--', `${p}org`, `${p}project/`, `${p}tenant/`, `${p}run/`],
    {allowFail: true},
  )
  const out = new Map<string, string>()
  for (const entry of text.split('\0')) {
    const m = /^\d+ tree ([0-9a-f]{40,64})\t(.*)$/s.exec(entry)
    if (!m || !m[2].startsWith(p)) continue
    const rel = m[2].slice(p.length)
    const scope = rel === 'org' ? 'org' : rel.replace(/^(project|tenant|run)\//, '$1:')
    try {
      if (scopeDir(parseScope(scope)) === rel) out.set(formatScope(parseScope(scope)), m[1])
    } catch {
      // a folder whose name is not a valid scope holds no memory the tool serves
    }
  }
  return out
}

export interface TreeEntry {
  path: string
  blob: string
}

/** Memory files in a scope tree, sorted by path. */
export async function listTree(store: Store, tree: string): Promise<TreeEntry[]> {
  const text = await gitRead(store.top, ['ls-tree', '-r', '-z', tree])
  const out: TreeEntry[] = []
  for (const entry of text.split('\0')) {
    const m = /^(100644|100755) blob ([0-9a-f]{40,64})\t(.*)$/s.exec(entry)
    if (m && isMemoryPath(m[3])) out.push({path: m[3], blob: m[2]})
  }
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
}

export interface TreeChange {
  path: string
  /** the new blob, or null when the path is gone (or is no longer a regular file) */
  blob: string | null
}

/** Paths that differ between two scope trees (renames as delete + add). */
export async function diffTrees(store: Store, from: string, to: string): Promise<TreeChange[]> {
  const text = await gitRead(store.top, ['diff-tree', '-r', '-z', '--no-renames', '--raw', from, to])
  const parts = text.split('\0')
  const out: TreeChange[] = []
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const m = /^:\d+ (\d+) [0-9a-f]+ ([0-9a-f]+) ([A-Z])\d*$/.exec(parts[i])
    if (!m) continue
    const path = parts[i + 1]
    if (!isMemoryPath(path)) continue
    const regular = m[1] === '100644' || m[1] === '100755'
    out.push({path, blob: m[3] === 'D' || !regular ? null : m[2]})
  }
  return out
}

/** Stream blob contents in the order asked (one `git cat-file --batch`). Missing blobs yield null. */
export async function* catBlobs(store: Store, ids: string[]): AsyncGenerator<{index: number; data: Buffer | null}> {
  if (ids.length === 0) return
  const child = spawn('git', ['cat-file', '--batch'], {cwd: store.top, env: gitEnv({GIT_OPTIONAL_LOCKS: '0'}), stdio: ['pipe', 'pipe', 'pipe']})
  let stderr = ''
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
  const exited = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? 1)))
  child.stdin.on('error', () => {})
  child.stdin.end(`${ids.join('\n')}\n`)
  let buf: Buffer = Buffer.alloc(0)
  let index = 0
  let need = -1
  for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
    buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk])
    for (;;) {
      if (need < 0) {
        const nl = buf.indexOf(10)
        if (nl < 0) break
        const line = buf.toString('utf8', 0, nl)
        buf = buf.subarray(nl + 1)
        if (line.endsWith(' missing')) {
          yield {index: index++, data: null}
          continue
        }
        const size = Number(line.split(' ')[2])
        need = Number.isFinite(size) ? size : 0
      }
      if (buf.length < need + 1) break
      const data = buf.subarray(0, need)
      buf = buf.subarray(need + 1)
      need = -1
      yield {index: index++, data}
    }
  }
  const code = await exited
  if (index < ids.length) throw new Error(`git cat-file stopped early (exit ${code}): ${stderr.trim()}`)
}

// ---- parsing ------------------------------------------------------------------------

let slowParse: Promise<(text: string, label: string) => MemoryFile> | undefined

/** Same as memory.ts normaliseBody; repeated here so the common path never loads gray-matter. */
function normaliseBody(body: string): string {
  return body.replace(/\r\n?/g, '\n').replace(/\n*$/, '\n')
}

const LINE_RE = /^([A-Za-z_][A-Za-z0-9_]*): (.+)$/
const SAFE_VALUE_RE = /^(?:"|\[|null$|true$|false$|-?[0-9]+$)/

/**
 * Parse the frontmatter our own writer emits (`key: <JSON>` lines) without gray-matter,
 * giving exactly what memory.ts parseMemory gives (checked by a test); anything else —
 * hand-written YAML, odd values, invalid fields — goes to parseMemory itself.
 */
export function parseMemoryFast(text: string): MemoryFile | undefined {
  if (!text.startsWith('---\n')) return undefined
  const close = text.indexOf('\n---', 3)
  if (close < 0) return undefined
  const after = close + 4
  if (after < text.length && text[after] !== '\n' && text[after] !== '\r') return undefined
  const data: Record<string, unknown> = {}
  const block = text.slice(4, close)
  if (block.trim() === '') return undefined
  for (const line of block.split('\n')) {
    const m = LINE_RE.exec(line)
    if (!m || !SAFE_VALUE_RE.test(m[2]) || m[1] in data) return undefined
    let v: unknown
    try {
      v = JSON.parse(m[2])
    } catch {
      return undefined
    }
    if (v !== null && typeof v === 'object' && !(Array.isArray(v) && v.every((x) => typeof x === 'string'))) return undefined
    data[m[1]] = v
  }
  let body = text.slice(after)
  if (body[0] === '\r') body = body.slice(1)
  if (body[0] === '\n') body = body.slice(1)
  const str = (k: string) => (typeof data[k] === 'string' ? (data[k] as string) : undefined)
  const nullable = (k: string) => (data[k] === undefined || data[k] === null ? null : str(k))
  const strings = (k: string) => (data[k] === undefined || data[k] === null ? [] : Array.isArray(data[k]) ? (data[k] as string[]) : undefined)
  const title = data.title === undefined || data.title === null ? '' : str('title')
  const version = data.version === undefined ? 1 : data.version
  const fm = {
    id: str('id'),
    title,
    scope: str('scope'),
    tags: strings('tags'),
    author: str('author'),
    source_session: nullable('source_session'),
    origin: str('origin'),
    tainted: data.tainted === true,
    taint_reasons: strings('taint_reasons'),
    created: str('created'),
    updated: str('updated'),
    version,
    proposal: nullable('proposal'),
    reviewed_by: nullable('reviewed_by'),
    digest: nullable('digest'),
    signature: nullable('signature'),
  }
  if (Object.values(fm).some((v) => v === undefined)) return undefined
  if (!['direct_chat', 'email', 'webpage', 'document', 'readme', 'tool_output', 'dream', 'owner'].includes(fm.origin as string)) return undefined
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1) return undefined
  if (data.tainted !== undefined && typeof data.tainted !== 'boolean') return undefined
  return {frontmatter: fm as MemoryFile['frontmatter'], body: normaliseBody(body)}
}

/** Parse a memory file: the fast path, else memory.ts (loaded on first need). Throws bad-input. */
export async function parseMemoryText(text: string, label: string): Promise<MemoryFile> {
  const fast = parseMemoryFast(text)
  if (fast) return fast
  slowParse ??= import('../memory.js').then((m) => m.parseMemory)
  return (await slowParse)(text, label)
}

/** A parsed memory → its record and terms (title, tags, body fields). */
export function prepareDoc(path: string, blob: string, memory: MemoryFile): {record: DocRecord; terms: DocTerms} {
  const fm = memory.frontmatter
  const record: DocRecord = {
    path,
    blob,
    title: fm.title,
    tags: fm.tags,
    author: fm.author,
    origin: fm.origin,
    tainted: fm.tainted,
    reviewed_by: fm.reviewed_by,
    body: memory.body,
  }
  const fields = [tokenize(fm.title), tokenize(fm.tags.join(' ')), tokenize(memory.body)]
  const counts = new Map<string, [number, number, number]>()
  fields.forEach((list, f) => {
    for (const t of list) {
      let c = counts.get(t)
      if (!c) counts.set(t, (c = [0, 0, 0]))
      c[f]++
    }
  })
  const terms = new Map<string, number>()
  for (const [t, c] of counts) terms.set(t, packTf(c[0], c[1], c[2]))
  return {record, terms: {lens: [fields[0].length, fields[1].length, fields[2].length], terms}}
}
