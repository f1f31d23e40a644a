/**
 * Scope manifests: their format, signing and parsing.
 *
 * A manifest (`.engram/manifests/<scope with : as _>.json`) lists every curated file of a
 * scope with its git blob id and version, and is signed by an owner and re-signed at
 * each accept. Memory signatures alone bind content to a path and scope; the manifest
 * adds what they cannot: that a file was deleted, rolled back to an older validly-signed
 * version, or is a signed file that no longer belongs (TUF's rollback and mix-and-match).
 * Whole-store verification is in verify.ts, the serving lookup in serving.ts, the record
 * of verified manifests in manifest-cache.ts, the rollback witness in highwater.ts.
 */
import {canonicalJson} from '../memory/canonical.js'
import {badInput} from '../store/errors.js'
import {gitBlobHash} from '../memory/hash.js'
import type {Keyring} from './keys.js'
import {parseMemory} from '../memory/memory.js'
import {parseScope, scopeDir} from '../store/scope.js'
import {isStoreId, storeBindingProblem} from './identity.js'
import {KeyPair, describeNotOwner, ownerVerdict, parseSignature, signToString, verifyBytes} from './sign.js'
import type {Store} from '../store/store.js'

export const MANIFESTS_DIR = '.engram/manifests'

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
  /** the store identity it was signed for (identity.ts); absent in a manifest signed before stores had one */
  store_id?: string
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

export function manifestPayload(m: UnsignedManifest): string {
  return canonicalJson({kind: 'engram-manifest/1', scope: m.scope, ...(m.store_id === undefined ? {} : {store_id: m.store_id}), serial: m.serial, updated: m.updated, entries: m.entries})
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

/**
 * Sign a manifest (entries sorted by path) for the store identity `storeId` (the keyring's:
 * the one pinned on this machine; undefined where none is); the new signature is checked
 * before it is returned.
 */
export function signManifest(key: KeyPair, m: Omit<UnsignedManifest, 'store_id'>, storeId: string | undefined): Manifest {
  parseScope(m.scope)
  const entries = m.entries.map((e) => ({path: e.path, blob: e.blob, version: e.version, id: e.id})).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  checkEntries(m.scope, entries, `manifest of ${m.scope}`)
  const unsigned = {scope: m.scope, ...(storeId === undefined ? {} : {store_id: storeId}), entries, updated: m.updated, serial: m.serial}
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
  // a genuine owner signature, for another store (or for none, where this one has an identity)
  const bound = storeBindingProblem('the manifest', m.store_id, keyring.storeId)
  if (bound) return {ok: false, problem: bound, keyid: sig.keyid}
  return {ok: true, keyid: sig.keyid}
}

/** JSON with one entry per line, so a manifest's git diff shows exactly which files changed. */
export function serializeManifest(m: Manifest): string {
  const entries = m.entries.map((e) => `    ${JSON.stringify({path: e.path, id: e.id, version: e.version, blob: e.blob})}`)
  return [
    '{',
    `  "scope": ${JSON.stringify(m.scope)},`,
    ...(m.store_id === undefined ? [] : [`  "store_id": ${JSON.stringify(m.store_id)},`]),
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
    !Array.isArray(j.entries) || typeof j.signature !== 'string' || (j.store_id !== undefined && !isStoreId(j.store_id))) {
    throw badInput(`${label} is not an engram manifest (scope, serial, updated, entries, signature).`)
  }
  parseScope(j.scope)
  const entries = (j.entries as Record<string, unknown>[]).map((e) => ({path: e?.path, blob: e?.blob, version: e?.version, id: e?.id}) as ManifestEntry)
  checkEntries(j.scope, entries, label)
  return {scope: j.scope, ...(j.store_id === undefined ? {} : {store_id: j.store_id as string}), entries, updated: j.updated, serial: j.serial as number, signature: j.signature}
}

/** The scope's manifest in the work tree, or undefined when there is none. */
export function readManifest(store: Store, scope: string): Manifest | undefined {
  const rel = manifestPath(scope)
  const text = store.readText(rel)
  return text === undefined ? undefined : parseManifest(text, rel)
}

/** serializeManifest's exact output with entries in strictly ascending path order: entries can be found by binary search. */
export function inLineForm(m: Manifest, text: string): boolean {
  for (let i = 1; i < m.entries.length; i++) if (!(m.entries[i - 1].path < m.entries[i].path)) return false
  return serializeManifest(m) === text
}
