import {type StatedValue, claimText, vouchedValues} from '../session/prompts.js'
import type {Store} from '../store/store.js'
import {ServingGate} from '../trust/serving.js'
import type {MemoryFile} from '../memory/memory.js'

/**
 * Which of a direct_chat write's untyped values (prompts.ts `unattestedFound`) the curated memory
 * at the write's own path already states: an update restating what the memory it changes says
 * recalls the value, it does not bring it in (README "What the user typed"). Compared by the value
 * itself (`exact`: a link with its path and query, a number with all its digits), never by its
 * host or a part of it; read only as the serving gate serves the memory (its signature checked; a
 * file edited in the work tree counts as its signed version, from git); a memory marked tainted,
 * and a sentence that names the value to warn against it or as past (`vouchedValues`), vouch for
 * nothing. One path, so review's recheck reads exactly what the write read: no other memory of
 * the scope is looked up (a memory that states a value is not one that vouches for it here).
 */
export async function recalledFromMemory(store: Store, scope: string, path: string, values: readonly StatedValue[]): Promise<StatedValue[]> {
  if (values.length === 0 || scope.startsWith('run:') || scope === 'org') return []
  let gate: ServingGate
  try {
    gate = await ServingGate.open(store)
  } catch {
    return []
  }
  const memory = await signedMemory(gate, scope, path)
  if (!memory || memory.frontmatter.tainted) return []
  const vouched = vouchedValues(claimText(memory.frontmatter.title, memory.frontmatter.tags, memory.body, path))
  return values.filter((v) => vouched.has(v.exact))
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
