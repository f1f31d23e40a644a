/**
 * Whole-store verification: every curated file, manifest and key of the store (`engram
 * verify`, and what decides which files may be served).
 */
import {Dirent, readdirSync, readFileSync} from 'node:fs'

import {gitBlobHash} from '../memory/hash.js'
import {readStoreCache, writeStoreCache} from '../store/cachefile.js'
import {Keyring, rootNotPinned} from './keys.js'
import {raiseFromHistory, recordSerial, serialSeenIn} from './highwater.js'
import {storeIdentity} from './bind.js'
import {STORE_ID_FILE} from './identity.js'
import {MANIFESTS_DIR, Manifest, ManifestEntry, manifestPath, parseManifest, verifyManifest} from './manifest.js'
import {parseMemory} from '../memory/memory.js'
import {scopeDir, scopeOfPath} from '../store/scope.js'
import {listScopes} from '../memory/curated.js'
import {signerVerdict, verifyMemory} from './sign.js'
import type {Store} from '../store/store.js'
import {gitRead} from '../git/git.js'

/** How verify names the root pin, which lives on this machine, not in the store. */
const KEYS_PIN_PATH = '(root pin on this machine)'

export type ProblemKind =
  | 'unsigned'
  | 'bad-signature'
  | 'unknown-key'
  | 'revoked-key'
  | 'not-owner'
  | 'moved'
  | 'rolled-back'
  | 'mismatch'
  | 'missing'
  | 'extra'
  | 'manifest-bad-signature'
  | 'manifest-missing'
  | 'key-untrusted'
  | 'config-unsigned'
  | 'root-not-pinned'
  | 'store-identity'
  | 'not-in-head'

export interface VerifyProblem {
  kind: ProblemKind
  scope?: string
  /** store-relative path of the file, manifest or key record */
  path: string
  detail: string
}

export interface VerifyReport {
  problems: VerifyProblem[]
  /** curated files examined */
  checked: number
  /** store-relative paths of curated files that verify (the only ones that may be served) */
  servable: Set<string>
}

/** Curated scopes: org, project/<name>, tenant/<id>. Run scopes are an agent's own scratchpad and are not signed. */
function scopeFolders(store: Store): {scope: string; dir: string}[] {
  return listScopes(store).filter((scope) => !scope.startsWith('run:')).map((scope) => ({scope, dir: scopeDir(scope)}))
}

/** Every `.md` file under a folder (store-relative); symbolic links are returned apart, never followed. */
function walk(store: Store, dir: string, files: string[], links: string[]): void {
  let entries: Dirent[]
  try {
    entries = readdirSync(store.abs(dir), {withFileTypes: true})
  } catch {
    return
  }
  for (const d of entries) {
    const rel = `${dir}/${d.name}`
    if (d.isSymbolicLink()) links.push(rel)
    else if (d.isDirectory()) walk(store, rel, files, links)
    else if (d.isFile() && d.name.endsWith('.md')) files.push(rel)
  }
}

/**
 * What verification reads of a store, read-only: gathered by `storeView` (two git-backed
 * facts up front, files on demand), so that `checkStore` decides without I/O.
 */
export interface VerifyView {
  /** why this store's root is not pinned on this machine, if it is not */
  unpinned?: string
  /** what is wrong with the store's identity on this machine (bind.ts storeIdentity), if anything */
  identity?: string
  /** the entries of the manifests folder */
  manifestFiles: {name: string; regular: boolean}[]
  /** a manifest file's text (throws when it cannot be read) */
  manifestText(rel: string): string
  /** the highest manifest serial per scope seen here or in committed history (raiseFromHistory) */
  seenSerial: Record<string, number>
  /** the commit that highest serial was seen in, if any */
  seenIn(scope: string): string | undefined
  /** curated scope folders */
  folders: {scope: string; dir: string}[]
  /** the `.md` files and the symbolic links under a scope folder (store-relative) */
  walk(dir: string): {files: string[]; links: string[]}
  /** a file's bytes */
  bytes(rel: string): Buffer
  /** what an earlier run found of these bytes at this path (`rel\0blob`): a valid signature by this key */
  signedBefore(key: string): SignedFile | undefined
  /**
   * The blob HEAD's tree holds at each path under the curated scope folders (store-relative):
   * search and a write's vote read HEAD's tree, serving reads the work tree, so a signed
   * memory HEAD does not hold (a commit removed it without the owner) is named. Absent: not checked.
   */
  headBlobs?: Map<string, string>
}

/** What a check found, with what it leaves to record: the serials it accepted and the signatures it saw. */
export interface VerifyOutcome {
  report: VerifyReport
  /** serial per scope of each manifest that verified (recordSerial) */
  serials: Record<string, number>
  /** `rel\0blob` → signature, for every file whose signature holds now */
  signed: Map<string, SignedFile>
  /** the scopes walked */
  scopes: Set<string>
}

/**
 * Check every curated file, manifest and key of the store. A file is servable when its
 * signature is by a trusted owner for its path and scope, and its blob id matches its
 * entry in a manifest whose owner signature verifies. `scopes` limits the check (e.g. to
 * the scopes a session may read, so a report never names another tenant's files).
 */
export async function verifyStore(store: Store, keyring: Keyring, opts: {scopes?: string[]; cache?: boolean} = {}): Promise<VerifyReport> {
  const cache = opts.cache === false ? new Map<string, SignedFile>() : readVerifiedCache(store)
  const out = checkStore(keyring, await storeView(store, keyring, cache), opts.scopes)
  for (const [scope, serial] of Object.entries(out.serials)) recordSerial(store, scope, serial)
  if (opts.cache !== false) writeVerifiedCache(store, cache, out.signed, out.scopes)
  return out.report
}

/** The store as verification reads it: the root pin and committed history first, files as they are asked for; `signed` is what earlier runs found (the cache below). */
export async function storeView(store: Store, keyring: Keyring, signed: Map<string, SignedFile> = new Map()): Promise<VerifyView> {
  const unpinned = (await rootNotPinned(store))?.message
  const identity = (await storeIdentity(store)).problem ?? undefined
  let manifestFiles: Dirent[] = []
  try {
    manifestFiles = readdirSync(store.abs(MANIFESTS_DIR), {withFileTypes: true})
  } catch {
    // no manifests yet
  }
  const seenSerial = await raiseFromHistory(store, keyring)
  const folders = scopeFolders(store)
  let headBlobs: Map<string, string> | undefined
  if (folders.length > 0) {
    headBlobs = new Map()
    const text = await gitRead(store.top, ['--literal-pathspecs', 'ls-tree', '-r', '-z', 'HEAD', '--', ...folders.map((f) => store.gitPath(f.dir))], {allowFail: true})
    for (const entry of text.split('\0')) {
      const m = /^\d+ blob ([0-9a-f]{40,64})\t(.*)$/s.exec(entry)
      if (m && m[2].startsWith(store.prefix)) headBlobs.set(m[2].slice(store.prefix.length), m[1])
    }
  }
  return {
    headBlobs,
    unpinned,
    ...(identity ? {identity} : {}),
    manifestFiles: manifestFiles.map((d) => ({name: d.name, regular: d.isFile() && !d.isSymbolicLink()})),
    manifestText: (rel) => readFileSync(store.abs(rel), 'utf8'),
    seenSerial,
    seenIn: (scope) => serialSeenIn(store, scope),
    folders,
    walk: (dir) => {
      const files: string[] = []
      const links: string[] = []
      walk(store, dir, files, links)
      return {files, links}
    },
    bytes: (rel) => readFileSync(store.abs(rel)),
    signedBefore: (key) => signed.get(key),
  }
}

/** The whole-store check over a view: no I/O but the view's. */
export function checkStore(keyring: Keyring, view: VerifyView, only?: string[]): VerifyOutcome {
  const problems: VerifyProblem[] = []
  const servable = new Set<string>()
  const wanted = only ? new Set(only) : undefined
  const serials: Record<string, number> = {}
  let checked = 0

  if (view.unpinned) problems.push({kind: 'root-not-pinned', path: KEYS_PIN_PATH, detail: view.unpinned})
  // the owner's whole-store check only: a session's (only its scopes) is not told of the store's identity
  if (view.identity && !only) problems.push({kind: 'store-identity', path: STORE_ID_FILE, detail: view.identity})
  for (const k of keyring.list()) {
    if (k.status === 'untrusted') problems.push({kind: 'key-untrusted', path: k.path ?? `key ${k.keyid}`, detail: `key ${k.name}${k.keyid ? ` (${k.keyid})` : ''}: ${k.reason}`})
  }

  // Manifests: good ones by scope; scopes whose manifest exists but cannot be used.
  const manifests = new Map<string, Map<string, ManifestEntry>>()
  const badManifest = new Set<string>()
  const seenSerial = view.seenSerial
  for (const d of view.manifestFiles) {
    if (!d.name.endsWith('.json')) continue
    const rel = `${MANIFESTS_DIR}/${d.name}`
    const fileScope = d.name.slice(0, -5).replace('_', ':')
    if (wanted && !wanted.has(fileScope)) continue
    if (fileScope.startsWith('run:')) continue
    const fail = (detail: string) => {
      badManifest.add(fileScope)
      problems.push({kind: 'manifest-bad-signature', scope: fileScope, path: rel, detail})
    }
    if (!d.regular) {
      fail('not a regular file')
      continue
    }
    let m: Manifest
    try {
      m = parseManifest(view.manifestText(rel), rel)
    } catch (error) {
      fail((error as Error).message)
      continue
    }
    if (manifestPath(m.scope) !== rel) {
      fail(`holds the manifest of scope ${m.scope}, not ${fileScope}`)
      continue
    }
    const v = verifyManifest(keyring, m)
    if (!v.ok) {
      fail(v.problem as string)
      continue
    }
    const highest = seenSerial[m.scope] ?? 0
    if (m.serial < highest) {
      badManifest.add(fileScope)
      const where = view.seenIn(m.scope)
      problems.push({
        kind: 'rolled-back', scope: fileScope, path: rel,
        detail: `manifest serial ${m.serial} is older than serial ${highest} seen ${where ? `in commit ${where.slice(0, 10)}` : 'on this machine'} ` +
          `(an old manifest was put back): restore the newer manifest and files from git; if serial ${highest} was never this store's ` +
          `(an owner-signed manifest committed by mistake), check what that commit held, then re-sign the scope above it: \`engram manifest resign --scope ${m.scope}\``,
      })
      continue
    }
    serials[m.scope] = m.serial
    manifests.set(m.scope, new Map(m.entries.map((e) => [e.path, e])))
  }
  // blob id → path it is listed at, to name a signed file that was moved or copied
  const listedAt = new Map<string, string>()
  for (const entries of manifests.values()) for (const e of entries.values()) listedAt.set(e.blob, e.path)

  const folders = view.folders.filter((f) => !wanted || wanted.has(f.scope))
  const scopes = new Set([...folders.map((f) => f.scope), ...manifests.keys()])
  const seen = new Map<string, SignedFile>()
  for (const scope of [...scopes].sort()) {
    const {files, links} = view.walk(scopeDir(scope))
    files.sort()
    const entries = manifests.get(scope)
    for (const rel of links) problems.push({kind: 'extra', scope, path: rel, detail: 'a symbolic link in a curated folder (not followed, not served)'})
    if (!entries && !badManifest.has(scope) && files.length > 0) {
      problems.push({kind: 'manifest-missing', scope, path: manifestPath(scope), detail: `scope ${scope} has ${files.length} curated file(s) but no manifest`})
    }
    for (const rel of files) {
      checked++
      const bytes = view.bytes(rel)
      const blob = gitBlobHash(bytes)
      const add = (kind: ProblemKind, detail: string) => problems.push({kind, scope, path: rel, detail})
      const cacheKey = `${rel}\0${blob}`
      let signed = view.signedBefore(cacheKey)
      if (signed) {
        // these bytes at this path were seen with a valid signature by this key; its trust is checked now
        const v = signerVerdict(keyring, signed.keyid)
        if (!v.ok) {
          add(v.problem, v.detail)
          continue
        }
      } else {
        let mem
        try {
          mem = parseMemory(bytes.toString('utf8'), rel)
        } catch (error) {
          add('bad-signature', `not a readable memory file: ${(error as Error).message}`)
          continue
        }
        const elsewhere = listedAt.get(blob)
        if (mem.frontmatter.scope !== scope) {
          add('moved', `its frontmatter says scope ${mem.frontmatter.scope}, but it is in the folder of ${scope}${elsewhere && elsewhere !== rel ? `; the manifests list it at ${elsewhere}` : ''}`)
          continue
        }
        const v = verifyMemory(keyring, rel, mem)
        if (!v.ok) {
          if (v.problem === 'bad-signature' && elsewhere && elsewhere !== rel) add('moved', `signed for ${elsewhere}, not for this path`)
          else add(v.problem, v.detail)
          continue
        }
        signed = {keyid: v.keyid, version: mem.frontmatter.version}
      }
      seen.set(cacheKey, signed)
      if (!entries) continue
      const entry = entries.get(rel)
      if (!entry) {
        add('extra', `validly signed, but the manifest of ${scope} does not list it (deleted or retired, then restored?)`)
      } else if (entry.blob !== blob) {
        if (signed.version < entry.version) add('rolled-back', `version ${signed.version}; the manifest lists version ${entry.version}`)
        else add('mismatch', `validly signed version ${signed.version}, but not the content the manifest lists (version ${entry.version})`)
      } else {
        servable.add(rel)
      }
    }
    if (entries) {
      const present = new Set(files)
      for (const e of entries.values()) {
        if (!present.has(e.path)) problems.push({kind: 'missing', scope, path: e.path, detail: `listed in the manifest of ${scope} (version ${e.version}) but not in the work tree`})
        // named for a file served from the work tree (a problem there is named already)
        const head = view.headBlobs?.get(e.path)
        if (view.headBlobs && head !== e.blob && servable.has(e.path)) {
          problems.push({
            kind: 'not-in-head', scope, path: e.path,
            detail: `listed in the signed manifest of ${scope} (version ${e.version}), but HEAD's tree holds ${head === undefined ? 'no such file' : 'another version of it'}: ` +
              'a commit changed it without the owner, or an accept was not committed; search and the vote on a write read HEAD, so they do not see the signed version',
          })
        }
      }
    }
  }
  return {report: {problems, checked, servable}, serials, signed: seen, scopes}
}

// ---------------------------------------------------------------- verified-signature cache

/** A file whose signature verified: by which key, at which version. */
export interface SignedFile {
  keyid: string
  version: number
}

/**
 * Ed25519 checks dominate verify (about 0.1 ms a file). The fact "these bytes at this path
 * carry a valid signature by key K" never changes, so it is cached, keyed by path and blob
 * id; the key's trust is checked afresh on every run. The cache lives beside the private
 * keys, outside the store: anything able to write there could read the owner's key too,
 * whereas the store's own folders are writable by the agent.
 */
function readVerifiedCache(store: Store): Map<string, SignedFile> {
  const out = new Map<string, SignedFile>()
  const entries = readStoreCache('verified', store.root)?.entries
  if (!entries || typeof entries !== 'object') return out
  for (const [k, v] of Object.entries(entries as Record<string, unknown>)) {
    if (Array.isArray(v) && typeof v[0] === 'string' && Number.isInteger(v[1])) out.set(k, {keyid: v[0], version: v[1]})
  }
  return out
}

function writeVerifiedCache(store: Store, old: Map<string, SignedFile>, seen: Map<string, SignedFile>, walked: Set<string>): void {
  const entries: Record<string, [string, number]> = {}
  let changed = false
  for (const [k, v] of old) {
    // keep what this run did not look at (other scopes); drop what it walked past
    if (walked.has(scopeOfPath(k.split('\0')[0])?.scope ?? '')) changed ||= !seen.has(k)
    else entries[k] = [v.keyid, v.version]
  }
  for (const [k, v] of seen) {
    changed ||= !old.has(k)
    entries[k] = [v.keyid, v.version]
  }
  if (changed) writeStoreCache('verified', store.root, {entries})
}
