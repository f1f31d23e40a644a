import {assertCanRead, visibleScopes} from '../session/access.js'
import {listScopeFiles} from '../memory/curated.js'
import {memoryRelPath} from '../store/paths.js'
import {notFound} from '../store/errors.js'
import {RunLabel, RunLabels, isRunScope} from '../session/runlabels.js'
import {MemoryFrontmatter, Provenance} from '../memory/memory.js'
import {printable} from '../store/scope.js'
import {ServingGate} from '../trust/serving.js'
import type {SessionRecord} from '../session/sessions.js'
import type {Store} from '../store/store.js'

export interface ReadResult {
  scope: string
  path: string
  blob: string
  frontmatter: MemoryFrontmatter
  body: string
  /** run: memory only: the proven labels (also put into `frontmatter`) and what the file claimed */
  labels?: RunLabel
  claimed?: Pick<MemoryFrontmatter, 'author' | 'source_session' | 'origin' | 'tainted' | 'reviewed_by'>
}

/**
 * Read one memory the session may read. Curated memory that does not verify is not
 * served: the answer is the same "not found" a missing file gets, plus a warning naming
 * the problem for the owner to fix with `engram verify`.
 */
export async function readMemory(store: Store, session: SessionRecord | undefined, scopeText: string, path: string): Promise<ReadResult & {warning?: string}> {
  const scope = assertCanRead(session, scopeText)
  // the path is the caller's: checked (no "..", no links) before anything is read
  memoryRelPath(store, scope, path)
  const missing = () => notFound(`No memory ${printable(path)} in ${scope}.`, `see \`engram list --scope ${scope}\``)
  const gate = await ServingGate.open(store)
  const stored = gate.serveFile(scope, path)
  if (!stored.ok) {
    const err = missing()
    if (!stored.missing) (err as {nextStep?: string}).nextStep = `${stored.rel} is not served: ${stored.problem}; the owner can run \`engram verify\``
    throw err
  }
  const fm = stored.memory.frontmatter
  if (isRunScope(scope)) {
    // a scratchpad's frontmatter claims nothing: its labels are what its commit proves (runlabels.ts)
    const l = await new RunLabels(store).label(scope, stored.rel, stored.blob)
    return {
      scope, path, blob: stored.blob, body: stored.memory.body,
      frontmatter: {...fm, author: l.author, source_session: l.session, origin: l.origin as MemoryFrontmatter['origin'], tainted: l.tainted, reviewed_by: null},
      labels: l, claimed: {author: fm.author, source_session: fm.source_session, origin: fm.origin, tainted: fm.tainted, reviewed_by: fm.reviewed_by},
    }
  }
  return {scope, path, blob: stored.blob, frontmatter: fm, body: stored.memory.body}
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
  let labels: RunLabels | undefined
  for (const scope of scopes) {
    for (const path of listScopeFiles(store, scope)) {
      const served = gate.serveFile(scope, path)
      if (!served.ok) {
        result.skipped++
        result.skippedFiles.push({scope, path, problem: served.problem})
        continue
      }
      const fm = served.memory.frontmatter
      const l = isRunScope(scope) ? await (labels ??= new RunLabels(store)).label(scope, served.rel, served.blob) : undefined
      result.memories.push({
        scope, path, title: fm.title, author: l?.author ?? fm.author, origin: l?.origin ?? fm.origin, tainted: l?.tainted ?? fm.tainted,
        reviewed_by: l ? null : fm.reviewed_by, updated: fm.updated, version: fm.version,
      })
    }
  }
  return result
}
