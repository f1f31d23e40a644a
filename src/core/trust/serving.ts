import {closeSync, fstatSync, openSync, readdirSync, readFileSync, statSync} from 'node:fs'
import {join} from 'node:path'

import {changedLongAgo, fileIdentity} from '../store/fsutil.js'
import {blobBytes} from '../git/git.js'
import {gitBlobHash, sha256Hex} from '../memory/hash.js'
import {configDir, Keyring, KEYS_DIR, loadKeyring} from './keys.js'
import {raiseFromHistory, seenSerials} from './highwater.js'
import {Manifest, ManifestEntry, inLineForm, manifestPath, parseManifest, verifyManifest} from './manifest.js'
import {storeBindingProblem} from './identity.js'
import {readManifestCache, writeManifestCache} from './manifest-cache.js'
import {MemoryFile, parseMemory} from '../memory/memory.js'
import {ownerVerdict, verifyMemory} from './sign.js'
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
/** Parsed files a warm gate keeps (the most a server's searches show again and again). */
const MAX_PARSED = 20_000

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
  /** HEAD's manifests, read only when the work tree's do not verify (signedVersion) */
  private readonly committed = new Map<string, Promise<ManifestLookup | undefined>>()
  constructor(
    private readonly store: Store,
    private readonly remember = false,
    /** a warm gate's parsed files, kept by its WarmServing across gates */
    private readonly files: FileMemo = new FileMemo(),
  ) {}

  static async open(store: Store, opts: {remember?: boolean; files?: FileMemo} = {}): Promise<ServingGate> {
    const gate = new ServingGate(store, opts.remember ?? false, opts.files)
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
    const parse = (): MemoryFile => {
      if (memory) return memory
      return (memory = (this.remember ? this.files.get(rel, blob) : undefined) ?? parseMemory(text, rel))
    }
    const check = this.check(scope, rel, text, parse, blob)
    if (!check.ok) return {ok: false, rel, problem: check.problem, missing: false}
    // only a file that passed is kept parsed: what fails verification is never held on to
    const files = this.remember ? this.files : undefined
    return {
      ok: true, rel, text, blob,
      get memory() {
        const m = parse()
        files?.keep(rel, blob, m)
        return m
      },
    }
  }

  /**
   * The signed version of a curated memory whose file in the work tree is missing or not
   * served (moved, edited, replaced by a folder): the blob its scope's signed manifest
   * names, read from git and checked as the file would be (its signature, its scope). For
   * the vote's neighbours: whoever can write the work tree must not be able to hide from a
   * write the memory it contradicts. Undefined when the manifest names no blob for the
   * path or git does not have it.
   */
  async signedVersion(scope: string, path: string): Promise<{memory: MemoryFile; blob: string} | undefined> {
    if (scope.startsWith('run:')) return undefined
    const rel = `${scopeDir(scope)}/${path}`
    // the manifest in the work tree, or where that is missing or broken, the one HEAD holds
    const manifest = this.scope(scope).blobs ?? (await this.committedManifest(scope))
    const blob = manifest?.blob(rel)
    if (blob === undefined) return undefined
    let text: string
    try {
      text = (await blobBytes(this.store.top, blob)).toString('utf8')
    } catch {
      return undefined
    }
    if (gitBlobHash(text) !== blob) return undefined
    let memory: MemoryFile
    try {
      memory = parseMemory(text, rel)
    } catch {
      return undefined
    }
    return this.decide(scope, rel, text, memory, blob, manifest).ok ? {memory, blob} : undefined
  }

  /**
   * The scope's signed manifest as signedVersion reads it (the work tree's, or where that is
   * missing or broken, HEAD's, verified alike) with a key that changes whenever it may have
   * changed (undefined: do not keep anything made from it); undefined for a run: scope or
   * a scope with no signed manifest.
   */
  async signedManifest(scope: string): Promise<{lookup: ManifestLookup; key?: string} | undefined> {
    if (scope.startsWith('run:')) return undefined
    const state = this.scope(scope)
    if (state.blobs) return {lookup: state.blobs, key: this.remember && !state.racy ? `work\0${state.stamp}` : undefined}
    const committed = await this.committedManifest(scope)
    return committed ? {lookup: committed, key: undefined} : undefined
  }

  /**
   * A scope's manifest as HEAD holds it, verified as the work tree's would be (signed by an
   * owner now, of this scope, not older than this machine has seen): for signedVersion when
   * the work tree's manifest is missing or does not verify. Once per gate and scope.
   */
  private committedManifest(scope: string): Promise<ManifestLookup | undefined> {
    let got = this.committed.get(scope)
    if (!got) {
      got = (async () => {
        const rel = manifestPath(scope)
        let m: Manifest
        try {
          m = parseManifest((await blobBytes(this.store.top, `HEAD:${this.store.gitPath(rel)}`)).toString('utf8'), rel)
        } catch {
          return undefined
        }
        if (m.scope !== scope || !verifyManifest(this.keyring!, m).ok) return undefined
        if (m.serial < this.highest(seenSerials(this.store), scope)) return undefined
        return byPath(m)
      })()
      this.committed.set(scope, got)
    }
    return got
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

  private decide(scope: string, rel: string, text: string, memory?: MemoryFile | (() => MemoryFile), blob?: string, manifest?: ManifestLookup): ServeCheck {
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
    const blobs = manifest ?? this.scope(scope).blobs
    if (!blobs) return {ok: false, problem: `scope ${scope} has no valid signed manifest`}
    const entry = blobs.blob(rel)
    if (entry === undefined) return {ok: false, problem: 'not in the signed manifest (moved or planted)'}
    if (entry !== (blob ?? gitBlobHash(text))) return {ok: false, problem: 'does not match the signed manifest (rolled back or edited)'}
    return {ok: true}
  }
}

/**
 * A warm gate's parsed memory files, by path and blob, kept by its WarmServing across the
 * gates it opens (a commit moves HEAD and opens a new gate; a parse depends on the bytes
 * only). What a hit shows is read from its file (search.ts): parsing the same bytes again
 * is most of what showing one costs besides the ranking. Only files a gate served are
 * kept, so an agent cannot fill it with files that do not verify. Not a trust decision:
 * each gate decides on the bytes it read. Callers read a served memory and never change it.
 */
export class FileMemo {
  private readonly parsed = new Map<string, MemoryFile>()

  get(rel: string, blob: string): MemoryFile | undefined {
    return this.parsed.get(`${rel}\0${blob}`)
  }

  /** Called only for a file its gate served (signed, in the signed manifest). */
  keep(rel: string, blob: string, memory: MemoryFile): void {
    const key = `${rel}\0${blob}`
    if (this.parsed.has(key)) return
    if (this.parsed.size >= MAX_PARSED) this.parsed.clear()
    this.parsed.set(key, memory)
  }
}

/** The manifest file's identity: a rewrite (atomic rename or in place) changes inode, size or change time. */
function manifestStamp(store: Store, scope: string): {stamp: string; stable: boolean} {
  try {
    // no exception for the common case of a scope without a manifest (checked on every request)
    const st = statSync(store.abs(manifestPath(scope)), {bigint: true, throwIfNoEntry: false})
    if (st === undefined) return {stamp: 'missing:ENOENT', stable: false}
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
  /** parsed files: they depend on the bytes only, so they outlive a gate (a commit moves HEAD) */
  private readonly files = new FileMemo()

  constructor(private readonly store: Store) {}

  /** `head`: the commit HEAD points at now (undefined when unknown: nothing is reused). */
  async open(head: string | undefined): Promise<ServingGate> {
    // the key is taken before the keyring is loaded: a change in between only looks stale
    const key = head === undefined ? undefined : `${head}\0${keyMaterial(this.store)}`
    if (key !== undefined && key === this.key && this.gate) {
      this.gate.revalidate()
      return this.gate
    }
    const gate = await ServingGate.open(this.store, {remember: key !== undefined, files: this.files})
    this.gate = key === undefined ? undefined : gate
    this.key = key
    return gate
  }
}

// ---------------------------------------------------------------- serving lookups

/** What serving needs of a scope's manifest: its serial and the signed blob id of a path. */
export interface ManifestLookup {
  serial: number
  blob(path: string): string | undefined
  /** every entry's path and blob (parsed on first use) */
  entries(): Map<string, string>
}

/**
 * The scope's manifest in the work tree as the serving gate uses it, or undefined when
 * there is none or it does not verify under `keyring` now (throws on a malformed one).
 *
 * A signature check needs the canonical payload of every entry (about 40 ms for a 10,000
 * entry manifest), paid by every search of a fresh process. So the fact "the file with
 * this SHA-256 is a manifest of this scope and serial, validly signed by this public key"
 * is cached beside the private keys (outside the store, which the agent can write), like
 * the verified-signature cache. The key's trust is decided afresh from the keyring on every
 * use. When the file is exactly in the one-entry-per-line form engram writes, a path's
 * entry is then found by searching the text for that line instead of parsing every entry.
 */
export function manifestForServing(store: Store, keyring: Keyring, scope: string): ManifestLookup | undefined {
  const rel = manifestPath(scope)
  const read = readStamped(store.abs(rel))
  if (!read) return undefined
  const {bytes, stamp, stable} = read
  const cache = readManifestCache(store)
  // the file's identity stands for its bytes when it has not changed since a record was
  // made from it (see readStamped); otherwise the bytes are hashed
  let digest = stamp === undefined ? undefined : [...cache].find(([, e]) => e.stamp === stamp && e.scope === scope)?.[0]
  const byStamp = digest !== undefined
  digest ??= sha256Hex(bytes)
  const known = cache.get(digest)
  // a record made for another store identity than the one pinned now is verified afresh (and fails there)
  if (known && known.scope === scope && storeBindingProblem('the manifest', known.store_id, keyring.storeId) === undefined) {
    if (!byStamp && stable && stamp !== undefined) {
      cache.set(digest, {...known, stamp})
      writeManifestCache(store, cache)
    }
    if (!ownerKeyNow(keyring, known.keyid, Buffer.from(known.publicKey, 'base64'))) return undefined
    if (known.lines) {
      let all: Map<string, string> | undefined
      return {serial: known.serial, blob: (path) => blobFromLines(bytes, path), entries: () => (all ??= byPath(parseManifest(bytes.toString('utf8'), rel)).entries())}
    }
    return byPath(parseManifest(bytes.toString('utf8'), rel))
  }
  const text = bytes.toString('utf8')
  const m = parseManifest(text, rel)
  const v = verifyManifest(keyring, m)
  if (!v.ok || m.scope !== scope) return undefined
  const pk = keyring.publicKey(v.keyid!)!
  cache.set(digest, {scope, serial: m.serial, keyid: v.keyid!, publicKey: Buffer.from(pk).toString('base64'), ...(m.store_id === undefined ? {} : {store_id: m.store_id}), lines: inLineForm(m, text), ...(stable ? {stamp} : {})})
  writeManifestCache(store, cache)
  return byPath(m)
}

/**
 * A file's bytes with its identity (device, inode, size, modification and change times),
 * taken before and after the read on the same descriptor: `stamp` is undefined when they
 * differ (the file changed while it was read). Any write to the file changes its change
 * time, which no unprivileged process can set back, so a stamp seen again means the same
 * bytes — unless the file had changed within the timestamps' granularity of the moment
 * the stamp was taken (git's "racy" case): `stable` says it had not, and only a stable
 * stamp is ever recorded.
 */
function readStamped(file: string): {bytes: Buffer; stamp: string | undefined; stable: boolean} | undefined {
  let fd: number
  // a scope without a manifest is common and asked about on every request: no exception for
  // it (statSync is undefined for ENOENT only, and throws what openSync would; a file that
  // appears or goes between the two calls is read, or found missing, by openSync)
  if (statSync(file, {throwIfNoEntry: false}) === undefined) return undefined
  try {
    fd = openSync(file, 'r')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
  try {
    const before = fstatSync(fd, {bigint: true})
    const bytes = readFileSync(fd)
    const after = fstatSync(fd, {bigint: true})
    const same = fileIdentity(before) === fileIdentity(after)
    return {bytes, stamp: same ? fileIdentity(after) : undefined, stable: same && changedLongAgo(after.ctimeNs)}
  } finally {
    closeSync(fd)
  }
}


function byPath(m: Manifest): ManifestLookup {
  const blobs = new Map(m.entries.map((e) => [e.path, e.blob]))
  return {serial: m.serial, blob: (path) => blobs.get(path), entries: () => blobs}
}

const ENTRY = Buffer.from('\n    {"path":"')
const PATH_END = Buffer.from('","id":')

/**
 * A path's blob id from a manifest known to be in line form (inLineForm): each entry is a
 * line `    {"path":<JSON string>,"id":…,"blob":…}`, sorted by path. A JSON string holds no
 * unescaped quote or newline, so a line start followed by `{"path":"` begins an entry and
 * the first `","id":` after it ends that entry's path. Binary search over the bytes: a
 * dozen entries decoded instead of every one.
 */
function blobFromLines(bytes: Buffer, path: string): string | undefined {
  let lo = bytes.indexOf(ENTRY)
  let hi = bytes.length
  const pathAt = (at: number): string => {
    const start = at + ENTRY.length - 1
    return JSON.parse(bytes.toString('utf8', start, bytes.indexOf(PATH_END, start) + 1)) as string
  }
  while (lo >= 0 && lo < hi) {
    let at = bytes.indexOf(ENTRY, lo + ((hi - lo) >>> 1))
    if (at < 0 || at >= hi) at = lo
    const p = pathAt(at)
    if (p === path) {
      const end = bytes.indexOf(10, at + 1)
      const entry = JSON.parse(bytes.toString('utf8', at + 5, end < 0 ? bytes.length : end).replace(/,$/, '')) as Partial<ManifestEntry>
      return entry.path === path && typeof entry.blob === 'string' ? entry.blob : undefined
    }
    if (path < p) hi = at
    else {
      const next = bytes.indexOf(ENTRY, at + 1)
      lo = next < 0 ? hi : next
    }
  }
  return undefined
}

/** Whether a manifest signed by `keyid` (with this public key, when given) may be trusted now, signature aside. */
function ownerKeyNow(keyring: Keyring, keyid: string, publicKey?: Uint8Array): boolean {
  const v = ownerVerdict(keyring, keyid)
  return v.ok && (publicKey === undefined || Buffer.from(v.publicKey).equals(Buffer.from(publicKey)))
}
