import {createHash, createPublicKey, KeyObject, verify as nodeVerify} from 'node:crypto'
import * as ed from '@noble/ed25519'

import {EngramError} from '../store/errors.js'
import type {Keyring, KeyRole} from './keys.js'
import {MemoryFile, signingPayload} from '../memory/memory.js'

// noble's sync API needs a SHA-512; node's is native and already loaded.
ed.hashes.sha512 = (message) => new Uint8Array(createHash('sha512').update(message).digest())

export interface KeyPair {
  name: string
  keyid: string
  publicKey: Uint8Array
  /** the 32-byte Ed25519 seed */
  secretKey: Uint8Array
}

/** Key id: the first 16 hex characters of SHA-256 over the 32 public-key bytes. */
export function keyIdOf(publicKey: Uint8Array): string {
  return createHash('sha256').update(publicKey).digest('hex').slice(0, 16)
}

export function generateKeyPair(name: string): KeyPair {
  const secretKey = ed.utils.randomSecretKey()
  return keyPairFromSecret(name, secretKey)
}

export function keyPairFromSecret(name: string, secretKey: Uint8Array): KeyPair {
  if (secretKey.length !== 32) throw new EngramError('bad-input', `Key "${name}": an Ed25519 secret key is 32 bytes, got ${secretKey.length}.`)
  const publicKey = ed.getPublicKey(secretKey)
  return {name, keyid: keyIdOf(publicKey), publicKey, secretKey}
}

const toBytes = (m: string | Uint8Array): Uint8Array => (typeof m === 'string' ? Buffer.from(m, 'utf8') : m)

/**
 * Sign with noble, then check the new signature with the independent verifier before
 * returning it (as minisign does): a signature that would not verify is never written.
 */
export function signBytes(secretKey: Uint8Array, message: string | Uint8Array): Uint8Array {
  const bytes = toBytes(message)
  const sig = ed.sign(bytes, secretKey)
  if (!verifyBytes(ed.getPublicKey(secretKey), bytes, sig)) {
    throw new EngramError('verification', 'A new signature did not verify; nothing was written.', {
      nextStep: 'check the private key file (it may be damaged) and try again',
    })
  }
  return sig
}

// SPKI DER prefix for a raw 32-byte Ed25519 public key (RFC 8410).
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex')
const keyObjects = new Map<string, KeyObject>()

function keyObject(publicKey: Uint8Array): KeyObject {
  const hex = Buffer.from(publicKey).toString('hex')
  let ko = keyObjects.get(hex)
  if (!ko) {
    ko = createPublicKey({key: Buffer.concat([SPKI_PREFIX, publicKey]), format: 'der', type: 'spki'})
    keyObjects.set(hex, ko)
  }
  return ko
}

/**
 * Signatures this process has checked and found valid, by public key, SHA-256 of the
 * message and signature: the same three always give the same answer, so a long-lived
 * process (`engram mcp`) checks a memory's signature once, not once per serving gate (a
 * commit opens a new gate). Only the arithmetic is kept: whether the key is trusted is
 * decided by the caller every time (signerVerdict, ownerVerdict). Bounded.
 */
const VALID = new Set<string>()
const VALID_MAX = 100_000

/** Verify with node:crypto and a cached KeyObject (16x faster than noble for bulk checks, same RFC 8032 result). */
export function verifyBytes(publicKey: Uint8Array, message: string | Uint8Array, sig: Uint8Array): boolean {
  if (publicKey.length !== 32 || sig.length !== 64) return false
  const bytes = toBytes(message)
  const key = createHash('sha256').update(publicKey).update(bytes).update(sig).digest('base64')
  if (VALID.has(key)) return true
  let ok: boolean
  try {
    ok = nodeVerify(null, bytes, keyObject(publicKey), sig)
  } catch {
    return false
  }
  if (ok) {
    if (VALID.size >= VALID_MAX) VALID.clear()
    VALID.add(key)
  }
  return ok
}

/** `ed25519:<keyid>:<base64>` */
export function formatSignature(keyid: string, sig: Uint8Array): string {
  return `ed25519:${keyid}:${Buffer.from(sig).toString('base64')}`
}

const SIG_RE = /^ed25519:([0-9a-f]{16}):([A-Za-z0-9+/]{86}==)$/

export function parseSignature(s: string): {keyid: string; sig: Uint8Array} | undefined {
  const m = typeof s === 'string' ? SIG_RE.exec(s) : null
  if (!m) return undefined
  const sig = new Uint8Array(Buffer.from(m[2], 'base64'))
  return sig.length === 64 ? {keyid: m[1], sig} : undefined
}

/** Sign a message and return the formatted signature string. */
export function signToString(key: KeyPair, message: string | Uint8Array): string {
  return formatSignature(key.keyid, signBytes(key.secretKey, message))
}

/**
 * Sign a memory file for its store-relative path (e.g. `tenant/acme/billing.md`).
 * Returns a copy with `signature` set; the input is not mutated.
 */
export function signMemory(key: KeyPair, path: string, memory: MemoryFile): MemoryFile {
  const signature = signToString(key, signingPayload(path, memory))
  return {frontmatter: {...memory.frontmatter, signature}, body: memory.body}
}

export type MemoryVerification =
  | {ok: true; keyid: string; role: KeyRole}
  | {ok: false; problem: 'unsigned' | 'bad-signature' | 'unknown-key' | 'revoked-key' | 'not-owner'; detail: string}

/**
 * Check a memory file's signature for its store-relative path: it must be a valid
 * signature by a trusted, non-revoked owner key.
 */
export function verifyMemory(keyring: Keyring, path: string, memory: MemoryFile): MemoryVerification {
  const raw = memory.frontmatter.signature
  if (raw === null || raw === undefined || raw === '') return {ok: false, problem: 'unsigned', detail: 'no signature'}
  const parsed = parseSignature(raw)
  if (!parsed) return {ok: false, problem: 'bad-signature', detail: 'signature is not of the form ed25519:<keyid>:<base64>'}
  const info = keyring.status(parsed.keyid)
  const publicKey = keyring.publicKey(parsed.keyid)
  // an unknown or untrusted key is named as such, whatever it signed; a revoked one only once its signature checks
  if (!info || !publicKey || info.status === 'untrusted') return signerVerdict(keyring, parsed.keyid)
  if (!verifyBytes(publicKey, signingPayload(path, memory), parsed.sig)) {
    return {ok: false, problem: 'bad-signature', detail: `signature by ${info.name} (${parsed.keyid}) does not match this content at this path`}
  }
  return signerVerdict(keyring, parsed.keyid)
}

export type OwnerVerdict =
  | {ok: true; keyid: string; name: string; publicKey: Uint8Array}
  | {ok: false; problem: 'unknown-key' | 'revoked-key' | 'not-owner'; keyid: string; name?: string; role?: KeyRole; why: string}

/**
 * The one answer to "is this key a trusted, unrevoked owner of this store now", asked by
 * everything that needs an owner: curated memory's and manifests' signatures, the config
 * signature, and the key a review action is made with. `why` completes "the key is …".
 * Apart from any signature check, so that a cached "this signature is valid" never caches
 * trust.
 */
export function ownerVerdict(keyring: Keyring, keyid: string): OwnerVerdict {
  const info = keyring.status(keyid)
  const publicKey = keyring.publicKey(keyid)
  if (!info || !publicKey) return {ok: false, problem: 'unknown-key', keyid, why: 'not trusted (not known to this store)'}
  const known = {keyid, name: info.name, role: info.role}
  if (info.status === 'revoked') return {ok: false, problem: 'revoked-key', ...known, why: 'revoked'}
  if (info.status !== 'trusted') return {ok: false, problem: 'unknown-key', ...known, why: `not trusted (${info.reason})`}
  if (info.role !== 'owner') return {ok: false, problem: 'not-owner', ...known, why: `a ${info.role} key, not an owner`}
  return {ok: true, keyid, name: info.name, publicKey}
}

/** "key <name>, which is <why> (<keyid>)": a key that failed ownerVerdict, for a message. */
export function describeNotOwner(v: Extract<OwnerVerdict, {ok: false}>): string {
  return `key ${v.name ?? v.keyid}, which is ${v.why}${v.name ? ` (${v.keyid})` : ''}`
}

/** Whether a key may sign curated memory now (ownerVerdict), as a memory verification. */
export function signerVerdict(keyring: Keyring, keyid: string): MemoryVerification {
  const v = ownerVerdict(keyring, keyid)
  if (!v.ok) return {ok: false, problem: v.problem, detail: `signed by ${describeNotOwner(v)}${v.problem === 'not-owner' ? '; curated memory needs an owner' : ''}`}
  return {ok: true, keyid, role: 'owner'}
}
