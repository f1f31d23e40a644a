/**
 * Scope manifests and whole-store verification.
 *
 * A manifest (`.engram/manifests/<scope with : as _>.json`) lists every curated file of a
 * scope with its git blob id and version, and is signed by an owner and re-signed at
 * each accept. Memory signatures alone bind content to a path and scope; the manifest
 * adds what they cannot: that a file was deleted, rolled back to an older validly-signed
 * version, or is a signed file that no longer belongs (TUF's rollback and mix-and-match).
 */
import {closeSync, Dirent, fstatSync, openSync, readdirSync, readFileSync} from 'node:fs'

import {canonicalJson} from '../memory/canonical.js'
import {badInput} from '../store/errors.js'
import {changedLongAgo, fileIdentity} from '../store/fsutil.js'
import {gitBlobHash, sha256Hex} from '../memory/hash.js'
import {readStoreCache, writeStoreCache} from '../store/cachefile.js'
import {Keyring, rootNotPinned} from './keys.js'
import {historyScanned, markHistoryScanned, recordSerial, seenSerials, serialSeenIn} from './highwater.js'
import {catBlobs, gitRead, headCommit} from '../git/git.js'
import {readHeadFromFiles} from '../index/head.js'
import {verificationFailed} from '../store/errors.js'
import {parseMemory} from '../memory/memory.js'
import {listScopes} from '../memory/curated.js'
import {parseScope, scopeDir, scopeOfPath} from '../store/scope.js'
import {KeyPair, describeNotOwner, ownerVerdict, parseSignature, signerVerdict, signToString, verifyBytes, verifyMemory} from './sign.js'
import type {Store} from '../store/store.js'

export const MANIFESTS_DIR = '.engram/manifests'
/** How verify names the root pin, which lives on this machine, not in the store. */
const KEYS_PIN_PATH = '(root pin on this machine)'

export interface ManifestEntry {
  /** store-relative path, e.g. `tenant/acme/billing.md` */
  path: string
  /** git blob id of the file's bytes */
  blob: string
  version: number
  id: string
}

export interface Manifest {
  scope: string
  entries: ManifestEntry[]
  updated: string
  /** grows by one at each re-signing */
  serial: number
  signature: string
}

export type UnsignedManifest = Omit<Manifest, 'signature'>

export function manifestPath(scope: string): string {
  parseScope(scope)
  return `${MANIFESTS_DIR}/${scope.replace(':', '_')}.json`
}

function manifestPayload(m: UnsignedManifest): string {
  return canonicalJson({kind: 'engram-manifest/1', scope: m.scope, serial: m.serial, updated: m.updated, entries: m.entries})
}

function checkEntries(scope: string, entries: ManifestEntry[], label: string): void {
  const dir = `${scopeDir(scope)}/`
  const seen = new Set<string>()
  for (const e of entries) {
    if (!e || typeof e.path !== 'string' || !e.path.startsWith(dir) || !e.path.endsWith('.md') || e.path.split('/').includes('..')) {
      throw badInput(`${label}: entry path "${String(e?.path)}" is not a memory file of scope ${scope}.`)
    }
    if (typeof e.blob !== 'string' || !/^[0-9a-f]{40}$/.test(e.blob)) throw badInput(`${label}: entry ${e.path} has no valid blob id.`)
    if (!Number.isInteger(e.version) || e.version < 1) throw badInput(`${label}: entry ${e.path} has no valid version.`)
    if (typeof e.id !== 'string' || e.id.length === 0) throw badInput(`${label}: entry ${e.path} has no id.`)
    if (seen.has(e.path)) throw badInput(`${label}: ${e.path} is listed twice.`)
    seen.add(e.path)
  }
}

/** Sign a manifest (entries sorted by path); the new signature is checked before it is returned. */
export function signManifest(key: KeyPair, m: UnsignedManifest): Manifest {
  parseScope(m.scope)
  const entries = m.entries.map((e) => ({path: e.path, blob: e.blob, version: e.version, id: e.id})).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  checkEntries(m.scope, entries, `manifest of ${m.scope}`)
  const unsigned = {scope: m.scope, entries, updated: m.updated, serial: m.serial}
  return {...unsigned, signature: signToString(key, manifestPayload(unsigned))}
}

/** The next manifest of a scope: `prev` with files added, replaced or removed, serial + 1. */
export function nextManifest(
  prev: Manifest | undefined,
  scope: string,
  changes: {upsert?: ManifestEntry[]; remove?: string[]},
  now: string = new Date().toISOString(),
): UnsignedManifest {
  const byPath = new Map((prev?.entries ?? []).map((e) => [e.path, e]))
  for (const p of changes.remove ?? []) byPath.delete(p)
  for (const e of changes.upsert ?? []) byPath.set(e.path, e)
  return {scope, entries: [...byPath.values()], updated: now, serial: (prev?.serial ?? 0) + 1}
}

/** The manifest entry for a curated file's exact bytes at a store-relative path. */
export function manifestEntry(path: string, content: string | Buffer): ManifestEntry {
  const mem = parseMemory(typeof content === 'string' ? content : content.toString('utf8'), path)
  return {path, blob: gitBlobHash(content), version: mem.frontmatter.version, id: mem.frontmatter.id}
}

/** Whether a manifest signed by `keyid` (with this public key, when given) may be trusted now, signature aside. */
function ownerKeyNow(keyring: Keyring, keyid: string, publicKey?: Uint8Array): boolean {
  const v = ownerVerdict(keyring, keyid)
  return v.ok && (publicKey === undefined || Buffer.from(v.publicKey).equals(Buffer.from(publicKey)))
}

export function verifyManifest(keyring: Keyring, m: Manifest): {ok: boolean; problem?: string; keyid?: string} {
  const sig = parseSignature(m.signature)
  if (!sig) return {ok: false, problem: 'signature is not of the form ed25519:<keyid>:<base64>'}
  const info = keyring.status(sig.keyid)
  const pk = keyring.publicKey(sig.keyid)
  const v = ownerVerdict(keyring, sig.keyid)
  // an unknown or untrusted key is named as such; a revoked or non-owner one only once its signature checks
  if (!info || !pk || (!v.ok && v.problem === 'unknown-key')) return {ok: false, problem: `signed by key ${sig.keyid}, which is not trusted`, keyid: sig.keyid}
  if (!verifyBytes(pk, manifestPayload(m), sig.sig)) return {ok: false, problem: `signature by ${info.name} does not match the manifest's content`, keyid: sig.keyid}
  if (!v.ok) return {ok: false, problem: `signed by ${describeNotOwner(v)}${v.problem === 'not-owner' ? '; manifests need an owner' : ''}`, keyid: sig.keyid}
  return {ok: true, keyid: sig.keyid}
}

/** JSON with one entry per line, so a manifest's git diff shows exactly which files changed. */
export function serializeManifest(m: Manifest): string {
  const entries = m.entries.map((e) => `    ${JSON.stringify({path: e.path, id: e.id, version: e.version, blob: e.blob})}`)
  return [
    '{',
    `  "scope": ${JSON.stringify(m.scope)},`,
    `  "serial": ${m.serial},`,
    `  "updated": ${JSON.stringify(m.updated)},`,
    entries.length ? `  "entries": [\n${entries.join(',\n')}\n  ],` : '  "entries": [],',
    `  "signature": ${JSON.stringify(m.signature)}`,
    '}',
    '',
  ].join('\n')
}

export function parseManifest(text: string, label: string): Manifest {
  let j: Record<string, unknown>
  try {
    j = JSON.parse(text)
  } catch {
    throw badInput(`${label} is not valid JSON.`)
  }
  if (!j || typeof j !== 'object' || typeof j.scope !== 'string' || !Number.isInteger(j.serial) || typeof j.updated !== 'string' ||
    !Array.isArray(j.entries) || typeof j.signature !== 'string') {
    throw badInput(`${label} is not an engram manifest (scope, serial, updated, entries, signature).`)
  }
  parseScope(j.scope)
  const entries = (j.entries as Record<string, unknown>[]).map((e) => ({path: e?.path, blob: e?.blob, version: e?.version, id: e?.id}) as ManifestEntry)
  checkEntries(j.scope, entries, label)
  return {scope: j.scope, entries, updated: j.updated, serial: j.serial as number, signature: j.signature}
}

/** The scope's manifest in the work tree, or undefined when there is none. */
export function readManifest(store: Store, scope: string): Manifest | undefined {
  const rel = manifestPath(scope)
  const text = store.readText(rel)
  return text === undefined ? undefined : parseManifest(text, rel)
}

// ---------------------------------------------------------------- serving lookups

/** What serving needs of a scope's manifest: its serial and the signed blob id of a path. */
export interface ManifestLookup {
  serial: number
  blob(path: string): string | undefined
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
  if (known && known.scope === scope) {
    if (!byStamp && stable && stamp !== undefined) {
      cache.set(digest, {...known, stamp})
      writeManifestCache(store, cache)
    }
    if (!ownerKeyNow(keyring, known.keyid, Buffer.from(known.publicKey, 'base64'))) return undefined
    if (known.lines) return {serial: known.serial, blob: (path) => blobFromLines(bytes, path)}
    return byPath(parseManifest(bytes.toString('utf8'), rel))
  }
  const text = bytes.toString('utf8')
  const m = parseManifest(text, rel)
  const v = verifyManifest(keyring, m)
  if (!v.ok || m.scope !== scope) return undefined
  const pk = keyring.publicKey(v.keyid!)!
  cache.set(digest, {scope, serial: m.serial, keyid: v.keyid!, publicKey: Buffer.from(pk).toString('base64'), lines: inLineForm(m, text), ...(stable ? {stamp} : {})})
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

/** serializeManifest's exact output with entries in strictly ascending path order: entries can be found by binary search. */
function inLineForm(m: Manifest, text: string): boolean {
  for (let i = 1; i < m.entries.length; i++) if (!(m.entries[i - 1].path < m.entries[i].path)) return false
  return serializeManifest(m) === text
}

/**
 * Record a manifest this process has just signed and written (accept, restore), so that
 * the next search need not verify it again: the record says only that these bytes carry a
 * valid signature by this public key; whether the key is trusted is decided at each use.
 */
export function rememberSignedManifest(store: Store, text: string, m: Manifest, key: {keyid: string; publicKey: Uint8Array}): void {
  const sig = parseSignature(m.signature)
  if (!sig || sig.keyid !== key.keyid || !verifyBytes(key.publicKey, manifestPayload(m), sig.sig)) return
  const cache = readManifestCache(store)
  cache.set(sha256Hex(text), {scope: m.scope, serial: m.serial, keyid: key.keyid, publicKey: Buffer.from(key.publicKey).toString('base64'), lines: inLineForm(m, text)})
  writeManifestCache(store, cache)
}

function byPath(m: Manifest): ManifestLookup {
  const blobs = new Map(m.entries.map((e) => [e.path, e.blob]))
  return {serial: m.serial, blob: (path) => blobs.get(path)}
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

interface VerifiedManifest {
  scope: string
  serial: number
  keyid: string
  publicKey: string
  /** the text is in line form (inLineForm): entries are found by binary search */
  lines: boolean
  /** the file's identity when the record was made from it, if it had been stable then (readStamped) */
  stamp?: string
}

const MAX_MANIFEST_CACHE = 256

function readManifestCache(store: Store): Map<string, VerifiedManifest> {
  const out = new Map<string, VerifiedManifest>()
  const entries = readStoreCache('manifests', store.root)?.entries
  if (!entries || typeof entries !== 'object') return out
  for (const [digest, e] of Object.entries(entries as Record<string, Partial<VerifiedManifest>>)) {
    if (e && typeof e.scope === 'string' && Number.isInteger(e.serial) && typeof e.keyid === 'string' && typeof e.publicKey === 'string' && typeof e.lines === 'boolean' && (e.stamp === undefined || typeof e.stamp === 'string')) {
      out.set(digest, e as VerifiedManifest)
    }
  }
  return out
}

function writeManifestCache(store: Store, cache: Map<string, VerifiedManifest>): void {
  writeStoreCache('manifests', store.root, {entries: Object.fromEntries([...cache].slice(-MAX_MANIFEST_CACHE))})
}

// ---------------------------------------------------------------- committed history

/**
 * The highest serial of each scope's manifest in the store's committed history (every
 * ancestor of HEAD, both sides of a merge: a newer accept hidden as the second parent of a
 * `merge -s ours` still counts), counting only versions whose signature verifies under a
 * trusted owner key now: an unsigned or agent-signed "serial 10^9" committed and reverted
 * counts for nothing. Each counted serial is recorded in this machine's state, so a machine
 * with no state (a new host, CI) refuses a committed rollback (STANDARD R13). Returns the
 * state's serials raised by history.
 *
 * One `git log -p` of the manifests folder reads each version's serial line from its diff
 * (not every version's whole file); only versions above what is known are fetched and
 * verified, highest first, until one verifies. The scan is remembered in the same state
 * file, per HEAD and set of trusted owners, and resumed from the last HEAD scanned
 * (`last..HEAD`, i.e. every ancestor of HEAD not reachable from the last one, side branches
 * merged since included): state only grows, so what an earlier scan counted stays counted. A history git cannot read (a shallow
 * clone, which engram reads without its shallow file) fails closed.
 */
export async function raiseFromHistory(store: Store, keyring: Keyring): Promise<Record<string, number>> {
  const head = readHeadFromFiles(store.top) ?? (await headCommit(store.top))
  if (head === undefined) return seenSerials(store)
  // The scan mode is part of the key: a scan made when only the first parent was read is not trusted.
  const owners = `ancestry;${keyring.ownersKey()}`
  const cached = historyScanned(store)
  if (cached && cached.head === head && cached.owners === owners) return seenSerials(store)
  const dir = store.gitPath(MANIFESTS_DIR)
  const args = (range: string) => ['log', '--full-history', '--diff-merges=separate', '-p', '--unified=0', '--no-renames', '--no-color', '--no-ext-diff', '--no-textconv', '--format=%x00%H', range, '--', `${dir}/`]
  let out: string | undefined
  if (cached && cached.owners === owners && /^[0-9a-f]{40,64}$/.test(cached.head)) {
    try {
      out = await gitRead(store.top, args(`${cached.head}..${head}`))
    } catch {
      out = undefined // the old HEAD is gone (history rewritten): scan it all
    }
  }
  if (out === undefined) {
    try {
      out = await gitRead(store.top, args(head))
    } catch {
      throw verificationFailed(
        'The history of this store\'s manifests cannot be read (a shallow clone?), so a rollback cannot be ruled out; no curated memory is served.',
        'fetch the full history (`git fetch --unshallow`), or clone without --depth',
      )
    }
  }
  const seen = seenSerials(store)
  const candidates: {scope: string; rel: string; serial: number; commit: string}[] = []
  for (const chunk of out.split('\0')) {
    const lines = chunk.split('\n')
    const commit = lines[0]?.trim()
    if (!commit || !/^[0-9a-f]{40,64}$/.test(commit)) continue
    let rel: string | undefined
    for (const line of lines) {
      if (line.startsWith('+++ ')) {
        const f = line.slice(4).replace(/^b\//, '')
        rel = f.startsWith(store.prefix) && f.endsWith('.json') ? f.slice(store.prefix.length) : undefined
        continue
      }
      const m = rel ? /^\+ {2}"serial": (\d{1,15}),$/.exec(line) : null
      if (!m || !rel) continue
      const scope = rel.slice(MANIFESTS_DIR.length + 1, -5).replace('_', ':')
      const serial = Number(m[1])
      if (serial > (seen[scope] ?? 0)) candidates.push({scope, rel, serial, commit})
    }
  }
  candidates.sort((a, b) => b.serial - a.serial)
  const done = new Set<string>()
  const specs = candidates.map((c) => `${c.commit}:${store.gitPath(c.rel)}`)
  for await (const {index, data} of catBlobs(store, specs)) {
    const c = candidates[index]
    if (done.has(c.scope) || !data) continue
    try {
      const m = parseManifest(data.toString('utf8'), `${c.rel} at ${c.commit.slice(0, 10)}`)
      if (m.scope !== c.scope || manifestPath(m.scope) !== c.rel || m.serial !== c.serial || !verifyManifest(keyring, m).ok) continue
    } catch {
      continue
    }
    done.add(c.scope)
    recordSerial(store, c.scope, c.serial, c.commit)
    seen[c.scope] = Math.max(seen[c.scope] ?? 0, c.serial)
  }
  markHistoryScanned(store, head, owners)
  return seen
}

// ---------------------------------------------------------------- verify

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
 * Check every curated file, manifest and key of the store. A file is servable when its
 * signature is by a trusted owner for its path and scope, and its blob id matches its
 * entry in a manifest whose owner signature verifies. `scopes` limits the check (e.g. to
 * the scopes a session may read, so a report never names another tenant's files).
 */
export async function verifyStore(store: Store, keyring: Keyring, opts: {scopes?: string[]; cache?: boolean} = {}): Promise<VerifyReport> {
  const problems: VerifyProblem[] = []
  const servable = new Set<string>()
  const wanted = opts.scopes ? new Set(opts.scopes) : undefined
  let checked = 0

  const unpinned = await rootNotPinned(store)
  if (unpinned) problems.push({kind: 'root-not-pinned', path: KEYS_PIN_PATH, detail: unpinned.message})
  for (const k of keyring.list()) {
    if (k.status === 'untrusted') problems.push({kind: 'key-untrusted', path: k.path ?? `key ${k.keyid}`, detail: `key ${k.name}${k.keyid ? ` (${k.keyid})` : ''}: ${k.reason}`})
  }

  // Manifests: good ones by scope; scopes whose manifest exists but cannot be used.
  const manifests = new Map<string, Map<string, ManifestEntry>>()
  const badManifest = new Set<string>()
  let manifestFiles: Dirent[] = []
  try {
    manifestFiles = readdirSync(store.abs(MANIFESTS_DIR), {withFileTypes: true})
  } catch {
    // no manifests yet
  }
  const seenSerial = await raiseFromHistory(store, keyring)
  for (const d of manifestFiles) {
    if (!d.name.endsWith('.json')) continue
    const rel = `${MANIFESTS_DIR}/${d.name}`
    const fileScope = d.name.slice(0, -5).replace('_', ':')
    if (wanted && !wanted.has(fileScope)) continue
    if (fileScope.startsWith('run:')) continue
    const fail = (detail: string) => {
      badManifest.add(fileScope)
      problems.push({kind: 'manifest-bad-signature', scope: fileScope, path: rel, detail})
    }
    if (!d.isFile() || d.isSymbolicLink()) {
      fail('not a regular file')
      continue
    }
    let m: Manifest
    try {
      m = parseManifest(readFileSync(store.abs(rel), 'utf8'), rel)
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
      const where = serialSeenIn(store, m.scope)
      problems.push({
        kind: 'rolled-back', scope: fileScope, path: rel,
        detail: `manifest serial ${m.serial} is older than serial ${highest} seen ${where ? `in commit ${where.slice(0, 10)}` : 'on this machine'} ` +
          `(an old manifest was put back): restore the newer manifest and files from git; if serial ${highest} was never this store's ` +
          `(an owner-signed manifest committed by mistake), check what that commit held, then re-sign the scope above it: \`engram manifest resign --scope ${m.scope}\``,
      })
      continue
    }
    recordSerial(store, m.scope, m.serial)
    manifests.set(m.scope, new Map(m.entries.map((e) => [e.path, e])))
  }
  // blob id → path it is listed at, to name a signed file that was moved or copied
  const listedAt = new Map<string, string>()
  for (const entries of manifests.values()) for (const e of entries.values()) listedAt.set(e.blob, e.path)

  const folders = scopeFolders(store).filter((f) => !wanted || wanted.has(f.scope))
  const scopes = new Set([...folders.map((f) => f.scope), ...manifests.keys()])
  const cache = opts.cache === false ? new Map<string, SignedFile>() : readVerifiedCache(store)
  const seen = new Map<string, SignedFile>()
  for (const scope of [...scopes].sort()) {
    const dir = scopeDir(scope)
    const files: string[] = []
    const links: string[] = []
    walk(store, dir, files, links)
    files.sort()
    const entries = manifests.get(scope)
    for (const rel of links) problems.push({kind: 'extra', scope, path: rel, detail: 'a symbolic link in a curated folder (not followed, not served)'})
    if (!entries && !badManifest.has(scope) && files.length > 0) {
      problems.push({kind: 'manifest-missing', scope, path: manifestPath(scope), detail: `scope ${scope} has ${files.length} curated file(s) but no manifest`})
    }
    for (const rel of files) {
      checked++
      const bytes = readFileSync(store.abs(rel))
      const blob = gitBlobHash(bytes)
      const add = (kind: ProblemKind, detail: string) => problems.push({kind, scope, path: rel, detail})
      const cacheKey = `${rel}\0${blob}`
      let signed = cache.get(cacheKey)
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
      }
    }
  }
  if (opts.cache !== false) writeVerifiedCache(store, cache, seen, scopes)
  return {problems, checked, servable}
}

// ---------------------------------------------------------------- verified-signature cache

/** A file whose signature verified: by which key, at which version. */
interface SignedFile {
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
