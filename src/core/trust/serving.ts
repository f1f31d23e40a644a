import {readdirSync, readFileSync, statSync} from 'node:fs'
import {join} from 'node:path'

import {changedLongAgo, fileIdentity} from '../store/fsutil.js'
import {gitBlobHash} from '../memory/hash.js'
import {configDir, Keyring, KEYS_DIR, loadKeyring} from './keys.js'
import {seenSerials} from './highwater.js'
import {ManifestLookup, manifestForServing, manifestPath, raiseFromHistory} from './manifest.js'
import {MemoryFile, parseMemory} from '../memory/memory.js'
import {verifyMemory} from './sign.js'
import {scopeDir} from '../store/scope.js'
import type {Store} from '../store/store.js'

export type ServeCheck = {ok: true} | {ok: false; problem: string}

/** A memory file as served (ServingGate.serveFile): its bytes, blob id and parsed form, or why not. */
export type ServedFile =
  | {ok: true; rel: string; text: string; blob: string; readonly memory: MemoryFile}
  | {ok: false; rel: string; problem: string; missing: boolean}

interface ScopeState {
  /** the verified manifest's blob per path, or null when the scope has no valid one */
  blobs: ManifestLookup | null
  /** what the decision was made from: the manifest file's identity and the serial seen */
  stamp: string
  /** decisions per `rel\0blob` (warm gates only), valid while `stamp` holds */
  verdicts: Map<string, ServeCheck>
  /**
   * The file changed so recently that another change within the file system's timestamp
   * granularity could leave the same stamp (git's "racy" case): used for this request only.
   */
  racy: boolean
}

const MAX_VERDICTS = 200_000

/**
 * Decides whether a memory file may be served (README "Serving"): a run: scratchpad is its
 * session's own and unsigned; curated memory is served only when it carries a trusted
 * owner's signature for its path and scope and matches its entry in the scope's signed
 * manifest (so a rollback, a move or a deletion is caught).
 *
 * A gate holds one keyring for its whole life. A warm gate (WarmServing) also remembers
 * its decisions per path and blob; they are dropped with the scope's manifest whenever the
 * manifest file or the highest serial seen changes (`revalidate`), and with the whole gate
 * when HEAD or any key or trust file changes.
 */
export class ServingGate {
  private keyring?: Keyring
  /** the highest serials in committed history when the gate opened (also recorded in the state, when it can be written) */
  private history: Record<string, number> = {}
  private readonly scopes = new Map<string, ScopeState>()

  constructor(
    private readonly store: Store,
    private readonly remember = false,
  ) {}

  static async open(store: Store, opts: {remember?: boolean} = {}): Promise<ServingGate> {
    const gate = new ServingGate(store, opts.remember ?? false)
    gate.keyring = await loadKeyring(store)
    // a machine without state (a new host, CI) still refuses a committed rollback (R13)
    gate.history = await raiseFromHistory(store, gate.keyring)
    return gate
  }

  private scope(scope: string, seen?: Record<string, number>): ScopeState {
    let state = this.scopes.get(scope)
    if (!state) {
      const serial = this.highest(seen ?? seenSerials(this.store), scope)
      // the identity is taken before the read: a file changed in between only looks stale
      const {stamp: fileStamp, stable} = manifestStamp(this.store, scope)
      const stamp = `${fileStamp}|${serial}`
      const racy = !stable
      let blobs: ManifestLookup | null = null
      try {
        const read = manifestForServing(this.store, this.keyring!, scope)
        // a validly signed but older manifest than this machine has seen is a rollback
        if (read && read.serial >= serial) blobs = read
      } catch {
        blobs = null
      }
      state = {blobs, stamp, verdicts: new Map(), racy}
      this.scopes.set(scope, state)
    }
    return state
  }

  /**
   * Forget every scope whose manifest file or highest seen serial changed since it was
   * read (a warm gate calls this before each request; a one-shot gate lives too briefly).
   */
  revalidate(): void {
    if (this.scopes.size === 0) return
    const seen = seenSerials(this.store)
    for (const [scope, state] of this.scopes) {
      if (state.racy || state.stamp !== `${manifestStamp(this.store, scope).stamp}|${this.highest(seen, scope)}`) this.scopes.delete(scope)
    }
  }

  /** The highest serial a scope's manifest must reach: what this machine has seen, or history holds. */
  private highest(seen: Record<string, number>, scope: string): number {
    return Math.max(seen[scope] ?? 0, this.history[scope] ?? 0)
  }

  /**
   * Read the memory file at scope/path (scope-relative) from the work tree, hash and parse
   * it once, and decide whether it may be served: the one read-hash-gate of every command
   * that shows memory (read, list, context, the write's neighbours). With `blob` (an index
   * hit's), a file whose bytes are no longer that blob is not served either. A user-given
   * path is checked by the caller first (memoryRelPath).
   */
  serveFile(scope: string, path: string, opts: {blob?: string} = {}): ServedFile {
    const rel = `${scopeDir(scope)}/${path}`
    const text = this.store.readText(rel)
    if (text === undefined) return {ok: false, rel, problem: 'no such file', missing: true}
    const blob = gitBlobHash(text)
    if (opts.blob !== undefined && blob !== opts.blob) return {ok: false, rel, problem: 'changed since it was indexed', missing: false}
    // parsed at most once, and only when needed: a warm gate's remembered verdict needs no parse
    let memory: MemoryFile | undefined
    const parse = () => (memory ??= parseMemory(text, rel))
    const check = this.check(scope, rel, text, parse, blob)
    if (!check.ok) return {ok: false, rel, problem: check.problem, missing: false}
    return {
      ok: true, rel, text, blob,
      get memory() {
        return parse()
      },
    }
  }

  /**
   * `rel` is store-relative; `text` the file's bytes as read; `memory` its parsed form (or
   * a function that parses it once) when the caller has it; `blob` the git blob id of
   * exactly `text` when the caller computed it. Most callers want serveFile.
   */
  check(scope: string, rel: string, text: string, memory?: MemoryFile | (() => MemoryFile), blob?: string): ServeCheck {
    if (!this.remember) return this.decide(scope, rel, text, memory, blob)
    const state = this.scope(scope)
    const key = `${rel}\0${blob ?? gitBlobHash(text)}`
    let verdict = state.verdicts.get(key)
    if (!verdict) {
      verdict = this.decide(scope, rel, text, memory, blob)
      if (state.verdicts.size >= MAX_VERDICTS) state.verdicts.clear()
      state.verdicts.set(key, verdict)
    }
    return verdict
  }

  private decide(scope: string, rel: string, text: string, memory?: MemoryFile | (() => MemoryFile), blob?: string): ServeCheck {
    let mem: MemoryFile
    try {
      mem = typeof memory === 'function' ? memory() : (memory ?? parseMemory(text, rel))
    } catch (error) {
      return {ok: false, problem: (error as Error).message}
    }
    if (mem.frontmatter.scope !== scope) return {ok: false, problem: `frontmatter scope ${mem.frontmatter.scope} is not ${scope}`}
    if (scope.startsWith('run:')) return {ok: true}
    const sig = verifyMemory(this.keyring!, rel, mem)
    if (!sig.ok) return {ok: false, problem: `${sig.problem}: ${sig.detail}`}
    const blobs = this.scope(scope).blobs
    if (!blobs) return {ok: false, problem: `scope ${scope} has no valid signed manifest`}
    const entry = blobs.blob(rel)
    if (entry === undefined) return {ok: false, problem: 'not in the signed manifest (moved or planted)'}
    if (entry !== (blob ?? gitBlobHash(text))) return {ok: false, problem: 'does not match the signed manifest (rolled back or edited)'}
    return {ok: true}
  }
}

/** The manifest file's identity: a rewrite (atomic rename or in place) changes inode, size or change time. */
function manifestStamp(store: Store, scope: string): {stamp: string; stable: boolean} {
  try {
    const st = statSync(store.abs(manifestPath(scope)), {bigint: true})
    return {stamp: fileIdentity(st), stable: changedLongAgo(st.ctimeNs)}
  } catch (error) {
    // a missing file can appear at any time: never trusted for longer than a request
    return {stamp: `missing:${(error as NodeJS.ErrnoException).code ?? ''}`, stable: false}
  }
}

/**
 * Everything a keyring is made from besides git history: the store's key records and
 * revocations and the local trust pins, by name and content. Small files, read in full:
 * a cached keyring is reused only while this is byte-for-byte the same.
 */
function keyMaterial(store: Store): string {
  const parts: string[] = []
  for (const dir of [store.abs(KEYS_DIR), join(configDir(), 'trust')]) {
    let names: string[]
    try {
      names = readdirSync(dir).sort()
    } catch (error) {
      parts.push(`${dir}\0${(error as NodeJS.ErrnoException).code ?? 'unreadable'}`)
      continue
    }
    parts.push(dir)
    for (const name of names) {
      let text: string
      try {
        text = readFileSync(join(dir, name), 'utf8')
      } catch (error) {
        text = `\0${(error as NodeJS.ErrnoException).code ?? 'unreadable'}`
      }
      parts.push(`${name}\0${text.length}\0${text}`)
    }
  }
  return parts.join('\0\0')
}

/**
 * The serving gate of a long-lived process. The keyring comes from git history (root
 * keys, as of HEAD) and from files (records, revocations, pins): the gate is reused only
 * while HEAD and that key material are unchanged, so no trust decision outlives a commit
 * or a key change; manifests are revalidated on every request.
 */
export class WarmServing {
  private gate: ServingGate | undefined
  private key: string | undefined

  constructor(private readonly store: Store) {}

  /** `head`: the commit HEAD points at now (undefined when unknown: nothing is reused). */
  async open(head: string | undefined): Promise<ServingGate> {
    // the key is taken before the keyring is loaded: a change in between only looks stale
    const key = head === undefined ? undefined : `${head}\0${keyMaterial(this.store)}`
    if (key !== undefined && key === this.key && this.gate) {
      this.gate.revalidate()
      return this.gate
    }
    const gate = await ServingGate.open(this.store, {remember: key !== undefined})
    this.gate = key === undefined ? undefined : gate
    this.key = key
    return gate
  }
}
