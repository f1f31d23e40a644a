/**
 * The record of verified manifests, kept beside the private keys (outside the store, which
 * the agent can write): "the file with this SHA-256 is a manifest of this scope and
 * serial, validly signed by this public key". Whether the key is trusted is decided
 * afresh at each use (serving.ts manifestForServing).
 */
import {sha256Hex} from '../memory/hash.js'
import {readStoreCache, writeStoreCache} from '../store/cachefile.js'
import {Manifest, inLineForm, manifestPayload} from './manifest.js'
import {parseSignature, verifyBytes} from './sign.js'
import type {Store} from '../store/store.js'

export interface VerifiedManifest {
  scope: string
  serial: number
  keyid: string
  publicKey: string
  /** the store identity the manifest was signed for (absent: none); served only where it is the one pinned now */
  store_id?: string
  /** the text is in line form (inLineForm): entries are found by binary search */
  lines: boolean
  /** the file's identity when the record was made from it, if it had been stable then (readStamped) */
  stamp?: string
}

const MAX_MANIFEST_CACHE = 256

export function readManifestCache(store: Store): Map<string, VerifiedManifest> {
  const out = new Map<string, VerifiedManifest>()
  const entries = readStoreCache('manifests', store.root)?.entries
  if (!entries || typeof entries !== 'object') return out
  for (const [digest, e] of Object.entries(entries as Record<string, Partial<VerifiedManifest>>)) {
    if (e && typeof e.scope === 'string' && Number.isInteger(e.serial) && typeof e.keyid === 'string' && typeof e.publicKey === 'string' && typeof e.lines === 'boolean' && (e.stamp === undefined || typeof e.stamp === 'string') && (e.store_id === undefined || typeof e.store_id === 'string')) {
      out.set(digest, e as VerifiedManifest)
    }
  }
  return out
}

export function writeManifestCache(store: Store, cache: Map<string, VerifiedManifest>): void {
  writeStoreCache('manifests', store.root, {entries: Object.fromEntries([...cache].slice(-MAX_MANIFEST_CACHE))})
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
  cache.set(sha256Hex(text), {scope: m.scope, serial: m.serial, keyid: key.keyid, publicKey: Buffer.from(key.publicKey).toString('base64'), ...(m.store_id === undefined ? {} : {store_id: m.store_id}), lines: inLineForm(m, text)})
  writeManifestCache(store, cache)
}
