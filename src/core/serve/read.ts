import {assertCanRead, visibleScopes} from '../session/access.js'
import {listScopeFiles, readStored} from '../memory/curated.js'
import {notFound} from '../store/errors.js'
import {gitBlobHash} from '../memory/hash.js'
import {RunLabel, RunLabels, isRunScope} from '../session/runlabels.js'
import {MemoryFile, MemoryFrontmatter, Provenance, parseMemory} from '../memory/memory.js'
import {printable, scopeDir} from '../store/scope.js'
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
  const fm = stored.memory.frontmatter
  if (isRunScope(scope)) {
    // a scratchpad's frontmatter claims nothing: its labels are what its commit proves (runlabels.ts)
    const l = await new RunLabels(store).label(scope, stored.rel, stored.blob)
    return {
      scope, path: stored.path, blob: stored.blob, body: stored.memory.body,
      frontmatter: {...fm, author: l.author, source_session: l.session, origin: l.origin as MemoryFrontmatter['origin'], tainted: l.tainted, reviewed_by: null},
      labels: l, claimed: {author: fm.author, source_session: fm.source_session, origin: fm.origin, tainted: fm.tainted, reviewed_by: fm.reviewed_by},
    }
  }
  return {scope, path: stored.path, blob: stored.blob, frontmatter: fm, body: stored.memory.body}
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
      const l = isRunScope(scope) ? await (labels ??= new RunLabels(store)).label(scope, rel, gitBlobHash(text)) : undefined
      result.memories.push({
        scope, path, title: fm.title, author: l?.author ?? fm.author, origin: l?.origin ?? fm.origin, tainted: l?.tainted ?? fm.tainted,
        reviewed_by: l ? null : fm.reviewed_by, updated: fm.updated, version: fm.version,
      })
    }
  }
  return result
}
