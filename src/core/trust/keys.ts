/**
 * Keys and the keyring.
 *
 * File formats are tiny and line-oriented, like minisign's: a comment line that a human
 * can read, then one line of JSON that is the record. The comment line is informational
 * but must agree with the record (so `cat` never misleads a reviewer).
 *
 *   ~/.config/engram/keys/<name>.key  (0600, dir 0700; never in the store; encrypted:
 *     see privatekey.ts)
 *
 *   .engram/keys/<name>.pub
 *     engram public key <keyid> name=<name> role=<owner|dreamer>
 *     {"created":…,"endorsement":"ed25519:<endorser keyid>:<base64>","keyid":…,"name":…,"public_key":"<base64>","role":…,"v":1}
 *
 *   .engram/keys/<name>.revoked
 *     engram key revocation <keyid> name=<name>
 *     {"keep":[…],"keyid":…,"name":…,"reason":…,"revoked_at":…,"signature":"ed25519:<revoker keyid>:<base64>","v":1}
 *
 * Trust model: anyone (the agent included) can write files into the store and its git
 * history, so a record is never trusted because it exists. The roots of trust are the keys
 * pinned for this store on this machine (`$ENGRAM_CONFIG_DIR/trust/store-<id>.json`,
 * STANDARD R19): `engram init` pins its owner key; a clone shows the fingerprint of the
 * owner key of the store's initial key commit and trusts nothing until the user pins it
 * (`engram keys trust --root <fingerprint>`). A key is trusted when its
 * record is endorsed by a trusted owner key; chains are allowed; dreamer keys cannot
 * endorse. Endorsements by a revoked owner no longer count, except for the keys its
 * revocation record lists in `keep` (so an owner can rotate to a new key it endorsed).
 * A revocation counts when signed by an owner reachable from a root, or by the key itself;
 * revocations only ever remove trust, so conflicting ones fail closed.
 */
import {lstatSync, readdirSync, readFileSync, rmSync} from 'node:fs'
import {join} from 'node:path'

import {configDir, readStoreCache, writeStoreCache} from '../store/cachefile.js'
import {writeFileAtomic} from '../store/fsutil.js'
import {canonicalJson} from '../memory/canonical.js'
import {badInput} from '../store/errors.js'
import {firstParentFromFiles, gitRead} from '../git/git.js'
import {readHeadFromFiles} from '../index/head.js'
import {sha256Hex} from '../memory/hash.js'
import {isStoreId} from './identity.js'
import {printable} from '../store/scope.js'
import {KeyPair, keyIdOf, ownerVerdict, parseSignature, signToString, verifyBytes} from './sign.js'
import type {Store} from '../store/store.js'

export {configDir} from '../store/cachefile.js'

export type KeyRole = 'owner' | 'dreamer'
export type KeyStatus = 'trusted' | 'untrusted' | 'revoked'
export const KEY_ROLES: readonly KeyRole[] = ['owner', 'dreamer']
export const KEY_NAME_RE = /^[a-z0-9][a-z0-9._-]{0,62}$/
export const KEYS_DIR = '.engram/keys'

export interface KeyInfo {
  name: string
  keyid: string
  role: KeyRole
  status: KeyStatus
  /** why the key has its status, in a sentence fragment */
  reason: string
  /** store-relative path of its record, when there is one in the work tree */
  path?: string
  /** keyid of the key that endorsed this record (itself for a root) */
  endorsedBy?: string
  created?: string
  root: boolean
  /** SHA-256 of the public key (hex): what `keys trust --root` pins */
  fingerprint?: string
}

export interface PublicKeyRecord {
  v: 1
  name: string
  keyid: string
  role: KeyRole
  public_key: string
  created: string
  endorsement: string
}

export interface RevocationRecord {
  v: 1
  name: string
  keyid: string
  revoked_at: string
  reason: string
  keep: string[]
  signature: string
}


export function checkKeyName(name: string): string {
  if (typeof name !== 'string' || !KEY_NAME_RE.test(name)) {
    throw badInput(`Bad key name "${printable(String(name))}".`, 'key names are lowercase: a letter or digit, then up to 62 of [a-z0-9._-]')
  }
  return name
}

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64')
const fromB64 = (s: unknown, len: number): Uint8Array | undefined => {
  if (typeof s !== 'string' || !/^[A-Za-z0-9+/]+={0,2}$/.test(s)) return undefined
  const bytes = new Uint8Array(Buffer.from(s, 'base64'))
  return bytes.length === len && Buffer.from(bytes).toString('base64') === s ? bytes : undefined
}

/** Split a two-line record file into its comment and its JSON object. */
export function readRecordLines(text: string, label: string): {comment: string; json: Record<string, unknown>} {
  const lines = text.split('\n').filter((l, i, all) => l.length > 0 || i < all.length - 1)
  if (lines.length !== 2) throw badInput(`${label}: expected a comment line and one line of JSON.`)
  let json: unknown
  try {
    json = JSON.parse(lines[1])
  } catch {
    throw badInput(`${label}: the second line is not JSON.`)
  }
  if (!json || typeof json !== 'object' || Array.isArray(json)) throw badInput(`${label}: the second line must be a JSON object.`)
  return {comment: lines[0], json: json as Record<string, unknown>}
}

// ---------------------------------------------------------------- public key records

export function publicKeyPath(name: string): string {
  return `${KEYS_DIR}/${checkKeyName(name)}.pub`
}

export function revocationPath(name: string): string {
  return `${KEYS_DIR}/${checkKeyName(name)}.revoked`
}

function endorsementPayload(r: {keyid: string; name: string; role: string; public_key: string; created: string}): string {
  return canonicalJson({kind: 'engram-key/1', keyid: r.keyid, name: r.name, role: r.role, public_key: r.public_key, created: r.created})
}

function revocationPayload(r: {keyid: string; name: string; revoked_at: string; reason: string; keep: string[]}): string {
  return canonicalJson({kind: 'engram-revocation/1', keyid: r.keyid, name: r.name, revoked_at: r.revoked_at, reason: r.reason, keep: r.keep})
}

/**
 * The text of `.engram/keys/<name>.pub`: `key` endorsed with `role` by `endorser` (an owner
 * key; the key itself for the store's first owner, which is then a root only if it is in
 * the store's initial key commit).
 */
export function publicKeyRecord(
  key: {name: string; publicKey: Uint8Array},
  role: KeyRole,
  endorser: KeyPair,
  created: string = new Date().toISOString(),
): string {
  checkKeyName(key.name)
  if (!KEY_ROLES.includes(role)) throw badInput(`Unknown key role "${printable(String(role))}".`, 'use owner or dreamer')
  const body = {v: 1 as const, name: key.name, keyid: keyIdOf(key.publicKey), role, public_key: b64(key.publicKey), created}
  const rec: PublicKeyRecord = {...body, endorsement: signToString(endorser, endorsementPayload(body))}
  return `engram public key ${rec.keyid} name=${rec.name} role=${rec.role}\n${canonicalJson(rec)}\n`
}

/** Parse a `.pub` file. Checks its form and self-consistency, not its endorsement. */
export function parsePublicKeyRecord(text: string, label: string): PublicKeyRecord {
  const {comment, json: j} = readRecordLines(text, label)
  const pub = fromB64(j.public_key, 32)
  if (j.v !== 1 || typeof j.name !== 'string' || !KEY_NAME_RE.test(j.name) || !KEY_ROLES.includes(j.role as KeyRole) || !pub ||
    typeof j.created !== 'string' || typeof j.endorsement !== 'string') {
    throw badInput(`${label} is not an engram public key record.`)
  }
  if (j.keyid !== keyIdOf(pub)) throw badInput(`${label}: key id ${printable(String(j.keyid))} does not belong to its public key.`)
  if (comment !== `engram public key ${j.keyid} name=${j.name} role=${j.role}`) throw badInput(`${label}: the comment line does not match the record.`)
  return {v: 1, name: j.name, keyid: j.keyid, role: j.role as KeyRole, public_key: j.public_key as string, created: j.created, endorsement: j.endorsement}
}

/**
 * A public key given by a user for `keys trust`: a `.pub` record (its endorsement is
 * ignored: the owner is about to make their own), or the raw base64 public key.
 */
export function parsePublicKeyInput(text: string): Uint8Array {
  const trimmed = text.trim()
  const raw = fromB64(trimmed, 32)
  if (raw) return raw
  try {
    const rec = parsePublicKeyRecord(trimmed, 'the public key')
    return fromB64(rec.public_key, 32) as Uint8Array
  } catch {
    throw badInput('That is not an engram public key.', 'pass the .pub file made by `engram keys generate`, or the base64 public key')
  }
}

/**
 * The text of `.engram/keys/<name>.revoked`, signed by `revoker` (an owner, or the key
 * itself). `keep` lists keys endorsed by the revoked key that stay trusted.
 */
export function revocationRecord(
  target: {name: string; keyid: string},
  revoker: KeyPair,
  opts: {reason?: string; keep?: string[]; revokedAt?: string} = {},
): string {
  checkKeyName(target.name)
  const body = {v: 1 as const, name: target.name, keyid: target.keyid, revoked_at: opts.revokedAt ?? new Date().toISOString(), reason: opts.reason ?? '', keep: [...(opts.keep ?? [])].sort()}
  const rec: RevocationRecord = {...body, signature: signToString(revoker, revocationPayload(body))}
  return `engram key revocation ${rec.keyid} name=${rec.name}\n${canonicalJson(rec)}\n`
}

export function parseRevocationRecord(text: string, label: string): RevocationRecord {
  const {comment, json: j} = readRecordLines(text, label)
  if (j.v !== 1 || typeof j.name !== 'string' || typeof j.keyid !== 'string' || !/^[0-9a-f]{16}$/.test(j.keyid) ||
    typeof j.revoked_at !== 'string' || typeof j.reason !== 'string' || !Array.isArray(j.keep) ||
    !j.keep.every((k) => typeof k === 'string') || typeof j.signature !== 'string') {
    throw badInput(`${label} is not an engram key revocation.`)
  }
  if (comment !== `engram key revocation ${j.keyid} name=${j.name}`) throw badInput(`${label}: the comment line does not match the record.`)
  return {v: 1, name: j.name, keyid: j.keyid, revoked_at: j.revoked_at, reason: j.reason, keep: j.keep as string[], signature: j.signature}
}

// ---------------------------------------------------------------- the keyring

interface Node {
  keyid: string
  name: string
  role: KeyRole
  publicKey?: Uint8Array
  record?: PublicKeyRecord
  path?: string
  /** why the record cannot be used at all (malformed, conflicting) */
  problem?: string
  root?: string
}

export interface KeyringInput {
  /** working-tree records: store-relative path → text */
  records: {path: string; text: string}[]
  revocations: {path: string; text: string}[]
  /** root keys: from the initial key commit, or a local pin */
  roots: {keyid: string; name: string; publicKey: Uint8Array; reason: string}[]
  /** the store's identity pinned on this machine (identity.ts): what config signatures and manifests must bind; undefined for a store pinned before stores had one */
  storeId?: string
}

/** What a keyring decides: every key's status, the public keys it knows, and the records it cannot use. */
export interface KeyDecisions {
  infos: Map<string, KeyInfo>
  keys: Map<string, Uint8Array>
  /** malformed records that name no usable key id */
  broken: KeyInfo[]
}

/**
 * Which keys are trusted, from the store's records and revocations and the roots (pins):
 * no I/O, so the whole trust model can be tested from plain values. The gathering is
 * keyringInput's.
 */
export function decideKeys(input: KeyringInput): KeyDecisions {
  const infos = new Map<string, KeyInfo>()
  const keys = new Map<string, Uint8Array>()
  const broken: KeyInfo[] = []
  const nodes = new Map<string, Node>()
  const seen = new Map<string, string[]>()
  for (const {path, text} of input.records) {
    const file = path.split('/').pop() as string
    let rec: PublicKeyRecord
    try {
      rec = parsePublicKeyRecord(text, path)
      if (`${rec.name}.pub` !== file) throw badInput(`${path}: the record names key "${rec.name}", not the file's name.`)
    } catch (error) {
      broken.push({name: file.replace(/\.pub$/, ''), keyid: '', role: 'dreamer', status: 'untrusted', reason: (error as Error).message, path, root: false})
      continue
    }
    seen.set(rec.keyid, [...(seen.get(rec.keyid) ?? []), path])
    const publicKey = fromB64(rec.public_key, 32) as Uint8Array
    nodes.set(rec.keyid, {keyid: rec.keyid, name: rec.name, role: rec.role, publicKey, record: rec, path})
  }
  // two records for one key: which role was meant is unknowable, so neither counts
  for (const [keyid, paths] of seen) {
    if (paths.length > 1) (nodes.get(keyid) as Node).problem = `${paths.length} records claim this key (${paths.join(', ')}); keep one`
  }
  for (const r of input.roots) {
    const n = nodes.get(r.keyid)
    if (n) {
      n.root = r.reason
      n.role = 'owner'
      n.publicKey = r.publicKey
      n.problem = undefined
    } else {
      nodes.set(r.keyid, {keyid: r.keyid, name: r.name, role: 'owner', publicKey: r.publicKey, root: r.reason})
    }
  }
  for (const n of nodes.values()) if (n.publicKey) keys.set(n.keyid, n.publicKey)

  const endorser = (n: Node): string | undefined => (n.record ? parseSignature(n.record.endorsement)?.keyid : undefined)
  const endorsementValid = (n: Node): boolean => {
    const sig = n.record ? parseSignature(n.record.endorsement) : undefined
    const pk = sig ? keys.get(sig.keyid) : undefined
    return !!(sig && pk && n.record && verifyBytes(pk, endorsementPayload(n.record), sig.sig))
  }
  const usable = (n: Node) => !n.root && !n.problem && endorsementValid(n) && endorser(n) !== n.keyid

  // Keys reachable from a root if nothing were revoked: who may sign revocations.
  const reach = (mayEndorse: (signer: string, target: string) => boolean): Set<string> => {
    const out = new Set<string>()
    for (const n of nodes.values()) if (n.root) out.add(n.keyid)
    for (let grew = true; grew; ) {
      grew = false
      for (const n of nodes.values()) {
        if (out.has(n.keyid) || !usable(n)) continue
        const s = endorser(n) as string
        const sn = nodes.get(s)
        if (out.has(s) && sn && sn.role === 'owner' && mayEndorse(s, n.keyid)) {
          out.add(n.keyid)
          grew = true
        }
      }
    }
    return out
  }
  const everTrusted = reach(() => true)

  const revoked = new Map<string, {keep: Set<string>; reasons: string[]}>()
  for (const {path, text} of input.revocations) {
    let rv: RevocationRecord
    try {
      rv = parseRevocationRecord(text, path)
    } catch {
      continue
    }
    const sig = parseSignature(rv.signature)
    if (!sig || !everTrusted.has(sig.keyid)) continue
    const signer = nodes.get(sig.keyid) as Node
    if (signer.role !== 'owner' && sig.keyid !== rv.keyid) continue
    if (!verifyBytes(signer.publicKey as Uint8Array, revocationPayload(rv), sig.sig)) continue
    const prev = revoked.get(rv.keyid)
    const keep = new Set(rv.keep.filter((k) => !prev || prev.keep.has(k)))
    const by = sig.keyid === rv.keyid ? 'itself' : signer.name
    revoked.set(rv.keyid, {keep, reasons: [...(prev?.reasons ?? []), `revoked by ${by} at ${rv.revoked_at}${rv.reason ? `: ${rv.reason}` : ''}`]})
  }

  const trusted = reach((signer, target) => !revoked.has(signer) || (revoked.get(signer) as {keep: Set<string>}).keep.has(target))

  for (const n of nodes.values()) {
    const rv = revoked.get(n.keyid)
    let status: KeyStatus
    let reason: string
    if (rv) {
      status = 'revoked'
      reason = rv.reasons.join('; ')
    } else if (trusted.has(n.keyid)) {
      status = 'trusted'
      reason = n.root ?? `endorsed by ${nodes.get(endorser(n) as string)?.name ?? endorser(n)}`
    } else {
      status = 'untrusted'
      reason = whyUntrusted(n, nodes, endorser(n), endorsementValid(n), revoked, trusted)
    }
    infos.set(n.keyid, {
      name: n.name,
      keyid: n.keyid,
      role: n.role,
      status,
      reason,
      path: n.path,
      endorsedBy: n.root ? n.keyid : endorser(n),
      created: n.record?.created,
      root: !!n.root,
      fingerprint: n.publicKey ? fingerprintOf(n.publicKey) : undefined,
    })
  }
  return {infos, keys, broken}
}

function whyUntrusted(n: Node, nodes: Map<string, Node>, by: string | undefined, valid: boolean, revoked: Map<string, unknown>, trusted: Set<string>): string {
  if (n.problem) return n.problem
  if (!by) return 'its endorsement is malformed'
  if (by === n.keyid) return 'self-endorsed, but not a root key pinned on this machine'
  const e = nodes.get(by)
  if (!e) return `endorsed by unknown key ${by}`
  if (!valid) return `its endorsement by ${e.name} does not verify`
  if (e.role !== 'owner') return `endorsed by ${e.name}, a ${e.role} key (only owners endorse)`
  if (revoked.has(by)) return `endorsed by ${e.name}, which is revoked`
  if (!trusted.has(by)) return `endorsed by ${e.name}, which is not trusted`
  return 'not endorsed by a trusted owner'
}

export class Keyring {
  private readonly infos: Map<string, KeyInfo>
  private readonly keys: Map<string, Uint8Array>
  /** malformed records that name no usable key id, for `list()` and verify */
  private readonly broken: KeyInfo[]
  /** the store identity pinned on this machine, which signed configs and manifests must name (undefined: none pinned, README "Store identity") */
  readonly storeId?: string

  constructor(input: KeyringInput) {
    this.storeId = input.storeId
    const decided = decideKeys(input)
    this.infos = decided.infos
    this.keys = decided.keys
    this.broken = decided.broken
  }

  /** The key, when it is trusted and not revoked. */
  trusted(keyid: string): {name: string; role: KeyRole; publicKey: Uint8Array} | undefined {
    const info = this.infos.get(keyid)
    if (!info || info.status !== 'trusted') return undefined
    return {name: info.name, role: info.role, publicKey: this.keys.get(keyid) as Uint8Array}
  }

  /** A trusted, unrevoked owner now (ownerVerdict, the one home of that question). */
  isOwner(keyid: string): boolean {
    return ownerVerdict(this, keyid).ok
  }

  /** Status of any key the store knows of, trusted or not. */
  status(keyid: string): KeyInfo | undefined {
    return this.infos.get(keyid)
  }

  /** The public key of any known key (for telling a revoked signature from a forged one). */
  publicKey(keyid: string): Uint8Array | undefined {
    return this.keys.get(keyid)
  }

  /** Every key and every unusable record, by name. */
  list(): KeyInfo[] {
    return [...this.infos.values(), ...this.broken].sort((a, b) => a.name.localeCompare(b.name) || a.keyid.localeCompare(b.keyid))
  }

  /** Trusted owners (e.g. to tell a user which keys may accept). */
  owners(): KeyInfo[] {
    return this.list().filter((k) => this.infos.get(k.keyid) === k && this.isOwner(k.keyid))
  }

  /** The set of trusted owners and the pinned store identity as one stable string: what a cached history scan was counted under. */
  ownersKey(): string {
    return `${this.owners().map((k) => `${k.keyid}:${k.fingerprint ?? ''}`).sort().join(',')};store=${this.storeId ?? '-'}`
  }
}

/** Regular files (not symlinks) directly in a folder, by suffix. */
function regularFiles(dir: string, suffix: string): string[] {
  let names: string[]
  try {
    names = readdirSync(dir)
  } catch {
    return []
  }
  return names.filter((f) => f.endsWith(suffix) && lstatSync(join(dir, f)).isFile()).sort()
}

/**
 * The root owner keys the store's history names: the self-endorsed owner records of the
 * first commit on the first-parent line that added anything under `.engram/keys/`. They
 * grant no trust (only a pin does): they are what a fresh clone offers to pin, by
 * fingerprint, and what `keys trust --root` looks a fingerprint up in.
 */
export async function initialKeyRoots(store: Store): Promise<KeyringInput['roots']> {
  // What HEAD's history says never changes for that commit: a cached answer for the very
  // commit HEAD is at now saves three git spawns in every command that loads the keyring.
  const head = readHeadFromFiles(store.top)
  const cached = head === undefined ? undefined : readRootsCache(store)
  if (cached && cached.head === head) return cached.roots
  // A commit on top of the cached one (an accept, a write) has the same first key commit
  // on its first-parent line, so the same roots.
  if (cached && cached.roots.length > 0 && head !== undefined && firstParentFromFiles(store.top, head) === cached.head) {
    writeRootsCache(store, head, cached.roots)
    return cached.roots
  }
  const roots = await rootsAt(store, head ?? 'HEAD')
  if (head !== undefined) writeRootsCache(store, head, roots)
  return roots
}

async function rootsAt(store: Store, rev: string): Promise<KeyringInput['roots']> {
  const keysDir = store.gitPath(KEYS_DIR)
  // the first commit that added a key record (not merely the folder's placeholder)
  const log = await gitRead(store.top, ['log', '--first-parent', '--no-renames', '--diff-filter=A', '--format=%H', '--reverse', '--end-of-options', rev, '--', `${keysDir}/*.pub`], {allowFail: true})
  const commit = log.split('\n')[0]?.trim()
  if (!commit || !/^[0-9a-f]{40,64}$/.test(commit)) return []
  const files = (await gitRead(store.top, ['ls-tree', '-r', '--name-only', commit, '--', `${keysDir}/`])).split('\n').filter((f) => f.endsWith('.pub'))
  const roots: KeyringInput['roots'] = []
  for (const f of files) {
    const text = await gitRead(store.top, ['cat-file', 'blob', `${commit}:${f}`], {allowFail: true})
    let rec: PublicKeyRecord
    try {
      rec = parsePublicKeyRecord(text, f)
    } catch {
      continue
    }
    const sig = parseSignature(rec.endorsement)
    const pk = fromB64(rec.public_key, 32) as Uint8Array
    if (rec.role !== 'owner' || !sig || sig.keyid !== rec.keyid || !verifyBytes(pk, endorsementPayload(rec), sig.sig)) continue
    roots.push({keyid: rec.keyid, name: rec.name, publicKey: pk, reason: `root: owner key of the store's initial key commit ${commit.slice(0, 7)}`})
  }
  return roots
}

/**
 * The root keys found at one commit, kept beside the private keys (outside the store, which
 * the agent can write): one record per store, for the commit HEAD was last seen at.
 */
function readRootsCache(store: Store): {head: string; roots: KeyringInput['roots']} | undefined {
  const data = readStoreCache('history-roots', store.root)
  if (!data || data.prefix !== store.prefix || typeof data.head !== 'string' || !Array.isArray(data.roots)) return undefined
  const roots: KeyringInput['roots'] = []
  for (const r of data.roots as Record<string, unknown>[]) {
    const pk = fromB64(r?.public_key, 32)
    if (!pk || keyIdOf(pk) !== r.keyid || typeof r.name !== 'string' || typeof r.reason !== 'string') return undefined
    roots.push({keyid: r.keyid, name: r.name, publicKey: pk, reason: r.reason})
  }
  return {head: data.head, roots}
}

function writeRootsCache(store: Store, head: string, roots: KeyringInput['roots']): void {
  const list = roots.map((r) => ({keyid: r.keyid, name: r.name, public_key: Buffer.from(r.publicKey).toString('base64'), reason: r.reason}))
  writeStoreCache('history-roots', store.root, {prefix: store.prefix, head, roots: list})
}

/** A key's fingerprint: the SHA-256 of its 32 public-key bytes, in hex (its key id is the first 16 digits). */
export function fingerprintOf(publicKey: Uint8Array): string {
  return sha256Hex(Buffer.from(publicKey))
}

/**
 * Where this machine pins a store's root keys and its identity: `$ENGRAM_CONFIG_DIR/trust/store-<id>.json`,
 * keyed by the store's real path (a clone elsewhere, or a store moved, is a new store here).
 * `{"v":1,"store":<path>,"store_id":<identity.ts id>,"roots":[{"keyid","name","public_key","fingerprint","pinned_at"}]}`;
 * `store_id` is absent in a pin made before stores had an identity.
 */
export function rootPinFile(store: Store): string {
  return pinFileFor(store.root)
}

/** The pin file of the store whose real path is `root` (whether a store is there yet or not). */
export function pinFileFor(root: string): string {
  return join(configDir(), 'trust', `store-${sha256Hex(root).slice(0, 16)}.json`)
}

interface PinEntry {keyid: string; name: string; public_key: string; fingerprint: string; pinned_at: string}

interface Pin {roots: PinEntry[]; storeId?: string}

function readPin(store: Store): Pin {
  const file = rootPinFile(store)
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {roots: []}
    throw error
  }
  let data: {v?: unknown; store?: unknown; store_id?: unknown; roots?: unknown}
  try {
    data = JSON.parse(text)
  } catch {
    throw badInput(`Trust pin ${file} is not valid JSON.`, 'fix or remove it, then pin the root again with `engram keys trust --root <fingerprint>`')
  }
  if (!data || data.v !== 1 || data.store !== store.root || !Array.isArray(data.roots)) {
    throw badInput(`Trust pin ${file} is not a root pin of the store at ${store.root}.`, 'remove it, then pin the root again with `engram keys trust --root <fingerprint>`')
  }
  if (data.store_id !== undefined && !isStoreId(data.store_id)) {
    throw badInput(`Trust pin ${file}: "store_id" is not a store identity (32 hexadecimal digits).`, 'put back the identity `engram status` showed, or remove the pin and pin the root again with `engram keys trust --root <fingerprint>`')
  }
  for (const p of data.roots as Partial<PinEntry>[]) {
    const pk = fromB64(p?.public_key, 32)
    if (!pk || keyIdOf(pk) !== p.keyid || typeof p.name !== 'string') {
      throw badInput(`Trust pin ${file}: each root needs a "keyid", a "name" and the matching base64 "public_key".`, 'fix or remove it')
    }
  }
  return {roots: data.roots as PinEntry[], ...(data.store_id === undefined ? {} : {storeId: data.store_id as string})}
}

function writePin(store: Store, pin: Pin): string {
  const file = rootPinFile(store)
  writeFileAtomic(file, `${JSON.stringify({v: 1, store: store.root, ...(pin.storeId ? {store_id: pin.storeId} : {}), roots: pin.roots}, null, 2)}\n`, 0o600)
  return file
}

/**
 * The roots of trust of this store on this machine: the keys pinned for it in the config
 * folder, and nothing else (STANDARD R19). Nothing in the store or its history can add one:
 * `engram init` pins its owner key, a fresh clone pins by fingerprint (`keys trust --root`).
 */
export function pinnedRoots(store: Store): KeyringInput['roots'] {
  return rootsOf(store, readPin(store))
}

function rootsOf(store: Store, pin: Pin): KeyringInput['roots'] {
  return pin.roots.map((p) => ({keyid: p.keyid, name: p.name, publicKey: fromB64(p.public_key, 32) as Uint8Array, reason: `root: pinned on this machine (${rootPinFile(store)})`}))
}

/** The store identity pinned on this machine (undefined: none yet; README "Store identity"). */
export function pinnedStoreId(store: Store): string | undefined {
  return readPin(store).storeId
}

/**
 * Pin a key as a root of this store on this machine (owner only; never from inside a
 * session), and with it the store's identity when none is pinned yet. A pinned identity
 * is never replaced here: only `init` (a new store at the path) forgets it.
 */
export function pinRoot(store: Store, key: {name: string; publicKey: Uint8Array}, opts: {replace?: boolean; storeId?: string} = {}): string {
  const pin = readPin(store)
  const keep = opts.replace ? [] : pin.roots
  // the identity comes with the first root only: a second root added to a store pinned
  // without one never adopts what the store's file says (that is `keys bind`'s, reviewed)
  const storeId = pin.storeId ?? (pin.roots.length === 0 ? opts.storeId : undefined)
  const keyid = keyIdOf(key.publicKey)
  if (keep.some((p) => p.keyid === keyid) && storeId === pin.storeId) return rootPinFile(store)
  const entry: PinEntry = {keyid, name: key.name, public_key: b64(key.publicKey), fingerprint: fingerprintOf(key.publicKey), pinned_at: new Date().toISOString()}
  const roots = keep.some((p) => p.keyid === keyid) ? keep : [...keep, entry]
  return writePin(store, {roots, ...(storeId ? {storeId} : {})})
}

/** Pin this store's identity on this machine, where roots are pinned and no identity is yet (keys bind). */
export function pinStoreIdentity(store: Store, storeId: string): string {
  const pin = readPin(store)
  if (pin.storeId !== undefined && pin.storeId !== storeId) throw new Error(`store ${store.root} already has identity ${pin.storeId} pinned`)
  return writePin(store, {...pin, storeId})
}

/**
 * The other stores on this machine whose pin names this identity (their paths): a store's
 * identity is its own, so one pinned for another path is a copy, or another clone of the
 * same store kept under the same config folder.
 */
export function pinnedElsewhere(store: Store, storeId: string): string[] {
  const dir = join(configDir(), 'trust')
  const mine = rootPinFile(store)
  const out: string[] = []
  for (const name of regularFiles(dir, '.json')) {
    const file = join(dir, name)
    if (!name.startsWith('store-') || file === mine) continue
    try {
      const data = JSON.parse(readFileSync(file, 'utf8'))
      if (data?.store_id === storeId && typeof data.store === 'string') out.push(data.store)
    } catch {
      // an unreadable pin names nothing here
    }
  }
  return out
}

/** Forget this machine's root pins of a store (a new store made at the same path). */
export function unpinRoots(store: Store): void {
  rmSync(rootPinFile(store), {force: true})
}

/** A store whose root key is in its history but not pinned on this machine: what to tell the user. */
export interface RootNotPinned {
  store: string
  /** the owner keys of the store's initial key commit, to pin after checking the fingerprint out of band */
  roots: {name: string; keyid: string; fingerprint: string}[]
  message: string
  command: string
}

/** Why this store serves no curated memory here, when its root is not pinned; undefined when it is (or it has no key at all). */
export async function rootNotPinned(store: Store): Promise<RootNotPinned | undefined> {
  if (pinnedRoots(store).length > 0) return undefined
  const roots = (await initialKeyRoots(store)).map((r) => ({name: r.name, keyid: r.keyid, fingerprint: fingerprintOf(r.publicKey)}))
  if (roots.length === 0) return undefined
  const command = `engram keys trust --root ${roots[0].fingerprint}`
  const list = roots.map((r) => `${r.name} ${r.fingerprint}`).join(', ')
  return {
    store: store.root,
    roots,
    command,
    message: `this store's root key is not pinned on this machine, so no curated memory is served; root owner key ${list}. Check the fingerprint with the store's owner, then run \`${command}\``,
  }
}

/** The store's key records (`.pub`, or `.revoked` with that suffix) in the work tree: regular files only. */
export function regularKeyRecords(store: Store, suffix = '.pub'): {path: string; text: string}[] {
  const dir = store.abs(KEYS_DIR)
  return regularFiles(dir, suffix).map((f) => ({path: `${KEYS_DIR}/${f}`, text: readFileSync(join(dir, f), 'utf8')}))
}

/** What a keyring is made from: the store's key records and revocations in the work tree, and this machine's root pins. */
export function keyringInput(store: Store): KeyringInput {
  const pin = readPin(store)
  return {records: regularKeyRecords(store), revocations: regularKeyRecords(store, '.revoked'), roots: rootsOf(store, pin), ...(pin.storeId ? {storeId: pin.storeId} : {})}
}

/** Read every key record and revocation in the store and decide what is trusted, from this machine's root pins. */
export async function loadKeyring(store: Store): Promise<Keyring> {
  return new Keyring(keyringInput(store))
}
