import {gitBlobHash} from './hash.js'
import {Keyring, loadKeyring} from './keys.js'
import {seenSerials} from './highwater.js'
import {Manifest, readManifest, verifyManifest} from './manifest.js'
import {MemoryFile, parseMemory} from './memory.js'
import {verifyMemory} from './sign.js'
import type {Store} from './store.js'

export type ServeCheck = {ok: true} | {ok: false; problem: string}

/**
 * Decides whether a memory file may be served (DESIGN.md §6): a run: scratchpad is its
 * session's own and unsigned; curated memory is served only when it carries a trusted
 * owner's signature for its path and scope and matches its entry in the scope's signed
 * manifest (so a rollback, a move or a deletion is caught).
 */
export class ServingGate {
  private keyring?: Keyring
  private readonly manifests = new Map<string, Manifest | null>()

  constructor(private readonly store: Store) {}

  static async open(store: Store): Promise<ServingGate> {
    const gate = new ServingGate(store)
    gate.keyring = await loadKeyring(store)
    return gate
  }

  private manifest(scope: string): Manifest | null {
    if (!this.manifests.has(scope)) {
      let m: Manifest | null = null
      try {
        const read = readManifest(this.store, scope)
        // a validly signed but older manifest than this machine has seen is a rollback
        if (read && verifyManifest(this.keyring!, read).ok && read.serial >= (seenSerials(this.store)[scope] ?? 0)) m = read
      } catch {
        m = null
      }
      this.manifests.set(scope, m)
    }
    return this.manifests.get(scope)!
  }

  /** `rel` is store-relative; `text` the file's bytes as read. */
  check(scope: string, rel: string, text: string, memory?: MemoryFile): ServeCheck {
    let mem = memory
    try {
      mem ??= parseMemory(text, rel)
    } catch (error) {
      return {ok: false, problem: (error as Error).message}
    }
    if (mem.frontmatter.scope !== scope) return {ok: false, problem: `frontmatter scope ${mem.frontmatter.scope} is not ${scope}`}
    if (scope.startsWith('run:')) return {ok: true}
    const sig = verifyMemory(this.keyring!, rel, mem)
    if (!sig.ok) return {ok: false, problem: `${sig.problem}: ${sig.detail}`}
    const manifest = this.manifest(scope)
    if (!manifest) return {ok: false, problem: `scope ${scope} has no valid signed manifest`}
    const entry = manifest.entries.find((e) => e.path === rel)
    if (!entry) return {ok: false, problem: 'not in the signed manifest (moved or planted)'}
    if (entry.blob !== gitBlobHash(text)) return {ok: false, problem: 'does not match the signed manifest (rolled back or edited)'}
    return {ok: true}
  }
}
