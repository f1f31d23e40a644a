import {assertCanRead, visibleScopes} from './access.js'
import {listScopeFiles, readStored} from './curated.js'
import {notFound} from './errors.js'
import {gitRead} from './git.js'
import {MemoryFile, MemoryFrontmatter, Provenance, parseMemory} from './memory.js'
import {printable, scopeDir} from './scope.js'
import {ServingGate} from './serving.js'
import type {SessionRecord} from './sessions.js'
import type {Store} from './store.js'

export interface ReadResult {
  scope: string
  path: string
  blob: string
  frontmatter: MemoryFrontmatter
  body: string
}

/**
 * Read one memory the session may read. Curated memory that does not verify is not
 * served: the answer is the same "not found" a missing file gets, plus a warning naming
 * the problem for the owner to fix with `engram verify`.
 */
export async function readMemory(store: Store, session: SessionRecord | undefined, scopeText: string, path: string): Promise<ReadResult & {warning?: string}> {
  const scope = assertCanRead(session, scopeText)
  const stored = readStored(store, scope, path)
  const missing = () => notFound(`No memory ${printable(path)} in ${scope}.`, `see \`engram list --scope ${scope}\``)
  if (!stored) throw missing()
  const gate = await ServingGate.open(store)
  const check = gate.check(scope, stored.rel, stored.text, stored.memory)
  if (!check.ok) {
    const err = missing()
    ;(err as {nextStep?: string}).nextStep = `${stored.rel} is not served: ${check.problem}; the owner can run \`engram verify\``
    throw err
  }
  return {scope, path: stored.path, blob: stored.blob, frontmatter: stored.memory.frontmatter, body: stored.memory.body}
}

export interface ListedMemory extends Provenance {
  updated: string
  version: number
}

export interface ListResult {
  memories: ListedMemory[]
  /** curated files present but not served because they do not verify */
  skipped: number
  skippedFiles: {scope: string; path: string; problem: string}[]
}

/** Every servable memory in the scopes the session may read (or in one scope). */
export async function listMemories(store: Store, session: SessionRecord | undefined, scopeText?: string): Promise<ListResult> {
  const scopes = visibleScopes(store, session, scopeText || undefined)
  const gate = await ServingGate.open(store)
  const result: ListResult = {memories: [], skipped: 0, skippedFiles: []}
  for (const scope of scopes) {
    for (const path of listScopeFiles(store, scope)) {
      const rel = `${scopeDir(scope)}/${path}`
      const text = store.readText(rel) ?? ''
      // one read and one parse per file: the gate checks the parsed memory it is given
      let memory: MemoryFile | undefined
      let problem: string | undefined
      try {
        memory = parseMemory(text, rel)
        const check = gate.check(scope, rel, text, memory)
        if (!check.ok) problem = check.problem
      } catch (error) {
        problem = (error as Error).message
      }
      if (problem !== undefined || !memory) {
        result.skipped++
        result.skippedFiles.push({scope, path, problem: problem ?? 'unreadable'})
        continue
      }
      const fm = memory.frontmatter
      result.memories.push({
        scope, path, title: fm.title, author: fm.author, origin: fm.origin, tainted: fm.tainted,
        reviewed_by: fm.reviewed_by, updated: fm.updated, version: fm.version,
      })
    }
  }
  return result
}

export interface HistoryEntry {
  commit: string
  date: string
  subject: string
  author: string | null
  session: string | null
  origin: string | null
  tainted: boolean | null
  proposal: string | null
  digest: string | null
  reviewed_by: string | null
  operation: string | null
  restored_from: string | null
}

const TRAILERS = ['Engram-Author', 'Engram-Session', 'Engram-Origin', 'Engram-Tainted', 'Engram-Proposal', 'Engram-Digest', 'Engram-Reviewed-By', 'Engram-Operation', 'Engram-Restored-From']

/** The commits that touched one memory, newest first, with their provenance trailers. */
export async function memoryHistory(store: Store, session: SessionRecord | undefined, scopeText: string, path: string): Promise<HistoryEntry[]> {
  const scope = assertCanRead(session, scopeText)
  const stored = readStored(store, scope, path) // validates the path and refuses symlinks
  const rel = stored?.rel ?? `${scopeDir(scope)}/${path}`
  const fmt = ['%H', '%aI', '%s', ...TRAILERS.map((t) => `%(trailers:key=${t},valueonly,separator=%x2C)`)].join('%x1f')
  const out = await gitRead(store.top, ['log', `--format=${fmt}%x1e`, '--', store.gitPath(rel)], {allowFail: true})
  const entries = out
    .split('\x1e')
    .map((r) => r.trim())
    .filter(Boolean)
    .map((r) => {
      const [commit, date, subject, author, sess, origin, tainted, proposal, digest, reviewer, operation, restored] = r.split('\x1f').map((s) => s.trim())
      const orNull = (s: string | undefined) => (s ? s : null)
      return {
        commit, date, subject, author: orNull(author), session: orNull(sess), origin: orNull(origin),
        tainted: tainted === 'true' ? true : tainted === 'false' ? false : null,
        proposal: orNull(proposal), digest: orNull(digest), reviewed_by: orNull(reviewer), operation: orNull(operation), restored_from: orNull(restored),
      }
    })
  if (entries.length === 0) throw notFound(`No history for ${printable(path)} in ${scope}.`, `see \`engram list --scope ${scope}\``)
  return entries
}
