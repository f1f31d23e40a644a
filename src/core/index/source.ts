
import {gitRead, rawDiff} from '../git/git.js'
import {MemoryFile, parseMemory} from '../memory/memory.js'
import {formatScope, parseScope, scopeDir} from '../store/scope.js'
import type {Store} from '../store/store.js'
import type {Provenance} from '../memory/memory.js'

/**
 * Where the index reads from: committed trees and blobs in git, never the work tree, so
 * a scope's index is exactly "the scope at tree X" and every hit's blob id is the one indexed.
 */

/** Files the index holds: markdown under a scope folder. */
export function isMemoryPath(path: string): boolean {
  return path.endsWith('.md')
}

/**
 * Tree id of each scope folder (null when the folder is absent) at HEAD, or at `commit`.
 * One git call. At HEAD a failure reads as "no scopes" (an unborn branch); at a named
 * commit it throws, so that an answer can be remembered as that commit's.
 */
export async function currentTrees(store: Store, scopes: string[], commit?: string): Promise<Map<string, string | null>> {
  const out = new Map<string, string | null>(scopes.map((s) => [s, null]))
  if (scopes.length === 0) return out
  const byPath = new Map(scopes.map((s) => [store.gitPath(scopeDir(s)), s]))
  const args = ['--literal-pathspecs', 'ls-tree', '-z', commit ?? 'HEAD', '--', ...byPath.keys()]
  const text = await gitRead(store.top, args, {allowFail: commit === undefined})
  for (const entry of text.split('\0')) {
    const m = /^\d+ tree ([0-9a-f]{40,64})\t(.*)$/s.exec(entry)
    if (!m) continue
    const scope = byPath.get(m[2])
    if (scope) out.set(scope, m[1])
  }
  return out
}

/** Every scope folder present at HEAD (or at `commit`, which git must know) with its tree id. One git call. */
export async function listScopes(store: Store, commit?: string): Promise<Map<string, string>> {
  const p = store.prefix
  const text = await gitRead(
    store.top,
    ['--literal-pathspecs', 'ls-tree', '-z', commit ?? 'HEAD', '--', `${p}org`, `${p}project/`, `${p}tenant/`, `${p}run/`],
    {allowFail: commit === undefined},
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
  /** the path was a regular file in the old tree */
  before: boolean
}

/** Paths that differ between two scope trees (renames as delete + add). */
export async function diffTrees(store: Store, from: string, to: string): Promise<TreeChange[]> {
  const regular = (mode: string) => mode === '100644' || mode === '100755'
  return (await rawDiff(store.top, from, to))
    .filter((c) => isMemoryPath(c.path))
    .map((c) => ({path: c.path, blob: c.blob === null || !regular(c.newMode) ? null : c.blob, before: regular(c.oldMode)}))
}

// ---- parsing ------------------------------------------------------------------------

/** Parse a memory file (memory.ts: the canonical fast path, gray-matter only for hand-written YAML). */
export async function parseMemoryText(text: string, label: string): Promise<MemoryFile> {
  return parseMemory(text, label)
}

/** What the index holds of one memory: MiniSearch's document (id: path; fields: title, tags, body). */
export interface IndexDoc extends Omit<Provenance, 'scope' | 'path'> {
  path: string
  /** git blob id of the file, so a hit can be checked against the file on disk */
  blob: string
  tags: string[]
  body: string
}

/** A parsed memory → its index document. */
export function prepareDoc(path: string, blob: string, memory: MemoryFile): IndexDoc {
  const fm = memory.frontmatter
  return {
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
}
