import {type StatedValue, recalledValues} from '../session/prompts.js'
import type {Store} from '../store/store.js'
import {ServingGate} from '../trust/serving.js'
import type {MemoryFile} from '../memory/memory.js'

/**
 * Which of a direct_chat write's untyped values (prompts.ts `unattestedFound`) the update recalls
 * from the curated memory at its own path: those stated by the lines of that memory it keeps word
 * for word (prompts.ts `recalledValues`), compared as themselves (`exacts`: a whole link, a number
 * with all its digits). An update that keeps a line keeps what the line says of its value; one
 * that moves a value elsewhere brings it in anew (README "What the user typed"). The memory is read
 * only as the serving gate serves it (its signature checked; a file edited in the work tree counts
 * as its signed version, from git); a memory marked tainted, or one naming any value to warn
 * against it or as past, vouches for nothing. One path, so review's recheck reads exactly what the
 * write read.
 */
export async function recalledFromMemory(store: Store, scope: string, path: string, values: readonly StatedValue[], writtenBody: string): Promise<StatedValue[]> {
  if (values.length === 0 || scope.startsWith('run:') || scope === 'org') return []
  let gate: ServingGate
  try {
    gate = await ServingGate.open(store)
  } catch {
    return []
  }
  const memory = await signedMemory(gate, scope, path)
  if (!memory || memory.frontmatter.tainted) return []
  const recalled = recalledValues({title: memory.frontmatter.title, tags: memory.frontmatter.tags, body: memory.body}, writtenBody)
  return values.filter((v) => v.exacts.every((e) => recalled.has(e)))
}

/** A curated memory as served (its signature checked), or its signed version from git. */
async function signedMemory(gate: ServingGate, scope: string, path: string): Promise<MemoryFile | undefined> {
  try {
    const served = gate.serveFile(scope, path)
    if (served.ok) return served.memory
  } catch {
    // a folder where the file belongs, or a file that no longer parses: as a file not served
  }
  try {
    return (await gate.signedVersion(scope, path))?.memory
  } catch {
    return undefined
  }
}
