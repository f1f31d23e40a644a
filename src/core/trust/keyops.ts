/**
 * Key operations behind `engram keys …`: generate a key pair, trust a public key with a
 * role, revoke a key, list the keyring. Formats and the trust model live in keys.ts; this
 * module only decides what to write, checks that the store's keyring reads it as meant,
 * and commits it.
 */
import {closeSync, constants, existsSync, fstatSync, openSync, readdirSync, readFileSync, unlinkSync} from 'node:fs'
import {join} from 'node:path'

import {commitPaths} from '../git/commit.js'
import {EngramError, badInput, notFound, refused, usageError} from '../store/errors.js'
import {writeFileAtomic} from '../store/fsutil.js'
import {
  KEY_ROLES, KeyInfo, KeyRole, Keyring, checkKeyName, loadKeyring, parsePublicKeyInput, parsePublicKeyRecord,
  publicKeyPath, publicKeyRecord, revocationPath, revocationRecord,
  fingerprintOf, initialKeyRoots, pinnedElsewhere, pinnedRoots, pinnedStoreId, pinRoot, regularKeyRecords, rootPinFile,
} from './keys.js'
import {
  checkPublicOut, confirmReplace, findPrivateKey, privateKeyDir, privateKeyId, privateKeyPath, refuseAsFirstOwner, unlockPrivateKey, writePrivateKey, writePublicOut,
} from './privatekey.js'
import {withStoreLock} from '../store/lock.js'
import {ownerKey} from '../review/review.js'
import {clipRedacted, redactText} from '../write/redact/index.js'
import {printable} from '../store/scope.js'
import {refuseInsideSession} from '../session/sessions.js'
import {KeyPair, generateKeyPair, keyIdOf} from './sign.js'
import {committedStoreId} from './identity.js'
import type {Store} from '../store/store.js'

export interface GeneratedKey {
  name: string
  keyid: string
  /** base64 of the 32 public-key bytes */
  publicKey: string
  /** absolute path of the private key file (0600) */
  privateKeyFile: string
  /** where the public record was written (`--out`), or null when only printed */
  publicKeyFile: string | null
  /** the self-endorsed public record, to hand to an owner for `engram keys trust` */
  record: string
}

/**
 * Make a key pair: the private half encrypted, 0600, in the key folder; the public half as
 * a self-endorsed record. The record proves possession of the key; trust comes only from an
 * owner's `keys trust`. Never inside an agent session. An existing key is replaced only
 * with `force` and the owner typing its name at the terminal. `out` must be a new *.pub file
 * outside every store and outside the key and trust folders (see checkPublicOut).
 */
export async function generateKey(name: string, opts: {force?: boolean; out?: string} = {}): Promise<GeneratedKey> {
  refuseInsideSession('Making a key')
  checkKeyName(name)
  // refuse before asking anything or making a key, so a refusal leaves nothing behind
  const out = opts.out === undefined ? null : checkPublicOut(opts.out)
  const file = privateKeyPath(name)
  const replace = existsSync(file)
  if (replace) {
    if (!opts.force) throw refused(`A private key named "${name}" already exists at ${file}; it was not overwritten.`, 'choose another name, or pass --force to replace it (the old key is lost)')
    await confirmReplace(name, file)
  }
  const key = generateKeyPair(name)
  const record = publicKeyRecord({name, publicKey: key.publicKey}, 'owner', key)
  const privateKeyFile = await writePrivateKey(key, {replace})
  if (out) writePublicOut(out, record)
  return {name, keyid: key.keyid, publicKey: Buffer.from(key.publicKey).toString('base64'), privateKeyFile, publicKeyFile: out, record}
}

export interface TrustResult {
  name: string
  keyid: string
  role: KeyRole
  path: string
  endorsed_by: string
  /** false when the store already trusted this key with this role (nothing committed) */
  changed: boolean
  commit?: string
}

/**
 * Trust a public key with a role (owner only): write `.engram/keys/<name>.pub` endorsed by
 * the owner key, check that the keyring now trusts it as that role, commit.
 * `input` is the text of a `.pub` record (its own endorsement is ignored) or a base64 key.
 */
export async function trustKey(
  store: Store,
  input: string,
  opts: {role: string; name?: string; keyName?: string},
): Promise<TrustResult> {
  const role = opts.role as KeyRole
  if (!KEY_ROLES.includes(role)) throw usageError(`Unknown role "${printable(String(opts.role))}".`, 'use --role owner or --role dreamer')
  const publicKey = parsePublicKeyInput(input)
  const keyid = keyIdOf(publicKey)
  const name = checkKeyName(opts.name ?? recordName(input) ?? '')
  const owner = await endorser(store, keyid, role, opts.keyName, name)
  return withStoreLock(store, async () => {
    const keyring = await loadKeyring(store)
    const known = keyring.status(keyid)
    if (known?.status === 'revoked') {
      throw refused(`Key ${known.name} (${keyid}) is revoked in this store; a revoked key is not trusted again.`, 'generate a new key and trust that')
    }
    if (known?.root && role !== 'owner') throw refused(`Key ${known.name} (${keyid}) is a root owner key; its role cannot change.`)
    const rel = publicKeyPath(name)
    const existing = store.readText(rel)
    if (existing !== undefined) {
      let other: string | undefined
      try {
        other = parsePublicKeyRecord(existing, rel).keyid
      } catch {
        other = undefined
      }
      if (other !== keyid) {
        throw refused(`${rel} already holds ${other ? `another key (${other})` : 'a record that does not parse'}.`, 'choose another --name, or revoke the old key first')
      }
    }
    const elsewhere = keyring.list().find((k) => k.keyid === keyid && k.path && k.path !== rel)
    if (elsewhere) throw refused(`Key ${keyid} is already recorded as ${elsewhere.path}.`, `use --name ${elsewhere.name}`)
    if (known?.status === 'trusted' && known.role === role && known.path === rel) {
      return {name, keyid, role, path: rel, endorsed_by: known.endorsedBy ?? '', changed: false}
    }
    writeFileAtomic(store.abs(rel), publicKeyRecord({name, publicKey}, role, owner))
    // check the store reads the new record as meant before committing it
    const after = (await loadKeyring(store)).status(keyid)
    if (after?.status !== 'trusted' || after.role !== role) {
      restore(store, rel, existing)
      throw new EngramError('verification', `The new record for ${name} does not make it a trusted ${role} (${after?.reason ?? 'not read'}); nothing written.`)
    }
    const commit = await commitPaths(store, {
      subject: `Trust key ${name} (${keyid}) as ${role}`,
      trailers: {'Engram-Operation': 'trust-key', 'Engram-Key': keyid, 'Engram-Role': role, 'Engram-Reviewed-By': `${owner.name} (${owner.keyid})`},
      paths: [rel],
    })
    return {name, keyid, role, path: rel, endorsed_by: owner.keyid, changed: true, commit}
  })
}

/**
 * Who endorses the new key: a trusted owner — or, in a store that has no owner key at all
 * yet (made with `init --no-key`: no root pinned here, none in its history), the new owner
 * key itself, when its private half is at hand. That first self-endorsed record becomes
 * the store's root: pinned on this machine, and the one a clone offers to pin.
 */
async function endorser(store: Store, keyid: string, role: KeyRole, ownerName: string | undefined, newName: string): Promise<KeyPair> {
  const keyring = await loadKeyring(store)
  if (keyring.owners().length > 0 || role !== 'owner' || pinnedRoots(store).length > 0) return (await ownerKey(store, ownerName)).key
  refuseInsideSession()
  const history = await initialKeyRoots(store)
  if (history.length > 0) {
    // a clone whose root is not pinned here: the root is pinned by fingerprint, never replaced
    throw refused(
      `This store's root key (${history.map((r) => `${r.name} ${fingerprintOf(r.publicKey)}`).join(', ')}) is not pinned on this machine.`,
      `check the fingerprint with the store's owner, then run \`engram keys trust --root ${fingerprintOf(history[0].publicKey)}\``,
    )
  }
  const privateName = ownerName ?? newName
  const found = findPrivateKey(privateName, ownerName === undefined)
  refuseAsFirstOwner(found)
  const own = await unlockPrivateKey(found)
  if (own.keyid !== keyid) {
    throw refused('This store has no trusted owner yet: its first owner must be trusted with its own private key at hand.', `run this where ${privateName}.key is in your key folder, or set ENGRAM_KEY to it`)
  }
  // the first owner pins the store's identity with it (the one init made, as committed)
  pinRoot(store, own, {storeId: await committedStoreId(store)})
  return own
}

export interface PinResult {
  store: string
  name: string
  keyid: string
  fingerprint: string
  /** the pin file on this machine */
  pin: string
  /** false when it was pinned already */
  changed: boolean
  /** the store identity pinned on this machine (null: none; README "Store identity"): compare it with \`engram status\` where the store was made */
  store_id: string | null
  /** other stores on this machine pinned with the same identity: right for another clone of this store, wrong for any other store */
  also_pinned_for: string[]
}

/**
 * Pin a store's root key on this machine by its fingerprint (as ssh asks about a new host
 * key): the fingerprint, checked with the owner out of band, names the key; its public key
 * comes from the store's initial key commit or an owner record in the work tree, and the
 * full SHA-256 makes a forged key with the same fingerprint out of reach. Writes only the
 * config folder, never the store.
 */
export async function pinStoreRoot(store: Store, fingerprintArg: string): Promise<PinResult> {
  if (process.env.ENGRAM_SESSION) throw refused('Pinning a root cannot run inside an agent session (ENGRAM_SESSION is set).', 'run this as the owner, outside the agent session')
  const fingerprint = fingerprintArg.trim().toLowerCase().replace(/^sha256:/, '')
  if (!/^[0-9a-f]{64}$/.test(fingerprint)) {
    throw usageError('--root needs the key\'s full fingerprint: 64 hexadecimal digits.', 'copy it from the message a read prints in a fresh clone, or from `engram keys list --json` on the owner\'s machine')
  }
  const candidates: {name: string; publicKey: Uint8Array}[] = [...(await initialKeyRoots(store))]
  for (const r of regularKeyRecords(store)) {
    try {
      const rec = parsePublicKeyRecord(r.text, r.path)
      if (rec.role === 'owner') candidates.push({name: rec.name, publicKey: new Uint8Array(Buffer.from(rec.public_key, 'base64'))})
    } catch {
      // an unreadable record names no key
    }
  }
  const hit = candidates.find((c) => fingerprintOf(c.publicKey) === fingerprint)
  if (!hit) {
    throw notFound(`No owner key with fingerprint ${fingerprint} in this store.`, 'check the fingerprint; `engram keys list` shows the store\'s keys')
  }
  const keyid = keyIdOf(hit.publicKey)
  const changed = !pinnedRoots(store).some((r) => r.keyid === keyid)
  // a clone learns the store's identity with its root: the one committed (README "Store identity")
  const pin = changed ? pinRoot(store, hit, {storeId: await committedStoreId(store)}) : rootPinFile(store)
  const storeId = pinnedStoreId(store) ?? null
  return {store: store.root, name: hit.name, keyid, fingerprint, pin, changed, store_id: storeId, also_pinned_for: storeId ? pinnedElsewhere(store, storeId) : []}
}

function recordName(input: string): string | undefined {
  try {
    return parsePublicKeyRecord(input.trim(), 'the public key').name
  } catch {
    return undefined
  }
}

function restore(store: Store, rel: string, previous: string | undefined): void {
  if (previous !== undefined) writeFileAtomic(store.abs(rel), previous)
  else {
    try {
      unlinkSync(store.abs(rel))
    } catch {
      // already gone
    }
  }
}

export interface RevokeResult {
  name: string
  keyid: string
  reason: string
  keep: string[]
  path: string
  revoked_by: string
  commit?: string
}

/**
 * Revoke a key (owner only): write `.engram/keys/<name>.revoked` signed by the owner key.
 * `keep` names keys the revoked owner endorsed that stay trusted (key rotation). Refuses
 * to leave the store with no trusted owner unless `force`.
 */
export async function revokeKey(
  store: Store,
  target: string,
  opts: {reason: string; keep?: string[]; keyName?: string; force?: boolean},
): Promise<RevokeResult> {
  const reason = redactText(opts.reason.trim(), store.config.redaction.extra)
  if (!reason) throw usageError('A reason is required.', 'e.g. --reason "laptop lost"')
  const {key: owner} = await ownerKey(store, opts.keyName)
  return withStoreLock(store, async () => {
    const keyring = await loadKeyring(store)
    const info = findKey(keyring, target)
    if (info.status === 'revoked') throw refused(`Key ${info.name} (${info.keyid}) is already revoked: ${info.reason}.`)
    const keep = (opts.keep ?? []).map((k) => {
      const kept = findKey(keyring, k)
      if (kept.keyid === info.keyid) throw usageError('--keep cannot name the key being revoked.')
      return kept.keyid
    })
    const rel = revocationPath(info.name)
    // a file there does not revoke the key (else we would have stopped above): a planted or
    // broken record must not block a real revocation, so it is replaced
    const existing = store.readText(rel)
    writeFileAtomic(store.abs(rel), revocationRecord(info, owner, {reason, keep}))
    const after = await loadKeyring(store)
    if (after.status(info.keyid)?.status !== 'revoked') {
      restore(store, rel, existing)
      throw new EngramError('verification', `The revocation of ${info.name} does not take effect; nothing written.`)
    }
    if (after.owners().length === 0 && !opts.force) {
      restore(store, rel, existing)
      throw refused(`Revoking ${info.name} would leave this store with no trusted owner key; nothing written.`, 'trust another owner key first (`engram keys trust`), or pass --force')
    }
    const commit = await commitPaths(store, {
      subject: `Revoke key ${info.name} (${info.keyid})`,
      body: `Reason: ${clipRedacted(reason, 1000, store.config.redaction.extra)}`,
      trailers: {'Engram-Operation': 'revoke-key', 'Engram-Key': info.keyid, 'Engram-Reviewed-By': `${owner.name} (${owner.keyid})`},
      paths: [rel],
    })
    return {name: info.name, keyid: info.keyid, reason, keep, path: rel, revoked_by: owner.keyid, commit}
  })
}

/** A key the store knows of, by name or key id. */
function findKey(keyring: Keyring, nameOrId: string): KeyInfo {
  const hits = keyring.list().filter((k) => k.keyid && (k.name === nameOrId || k.keyid === nameOrId))
  if (hits.length === 0) throw notFound(`No key ${printable(nameOrId)} in this store.`, 'see `engram keys list`')
  if (hits.length > 1) throw usageError(`"${printable(nameOrId)}" names ${hits.length} keys: ${hits.map((k) => k.keyid).join(', ')}.`, 'give the key id')
  return hits[0]
}

export interface ListedKey {
  name: string
  keyid: string
  role: KeyRole
  status: KeyInfo['status']
  reason: string
  path: string | null
  root: boolean
  created: string | null
  fingerprint: string | null
  /** this machine holds the private half (in the key folder or ENGRAM_KEY) */
  local: boolean
}

/** Every key the store knows of, with its status and why. */
export async function listKeys(store: Store): Promise<ListedKey[]> {
  const keyring = await loadKeyring(store)
  const local = localKeyIds()
  return keyring.list().map((k) => ({
    name: k.name, keyid: k.keyid, role: k.role, status: k.status, reason: k.reason, path: k.path ?? null,
    root: k.root, created: k.created ?? null, fingerprint: k.fingerprint ?? null, local: local.has(k.keyid),
  }))
}

/** Key ids of the private keys on this machine; unreadable files are skipped. */
function localKeyIds(): Set<string> {
  const ids = new Set<string>()
  const files: string[] = []
  const dir = privateKeyDir()
  try {
    for (const f of readdirSync(dir)) if (f.endsWith('.key')) files.push(join(dir, f))
  } catch {
    // no key folder
  }
  if (process.env.ENGRAM_KEY) files.push(process.env.ENGRAM_KEY)
  for (const f of files) {
    // what the file says of itself, unopened: listing never asks for a passphrase
    const id = privateKeyId(f)
    if (id) ids.add(id)
  }
  return ids
}

/** Read a public key given as a file path, or `-` for stdin text already read by the caller. */
/** The most a public key record may hold: a record is a few hundred bytes. */
export const MAX_KEY_RECORD_BYTES = 64 * 1024

export function readKeyInput(pathOrDash: string, stdin?: string): string {
  const tooLarge = () => badInput(`That is not a public key record: more than ${MAX_KEY_RECORD_BYTES / 1024} KiB.`, 'pass the .pub file made by `engram keys generate --out`')
  if (pathOrDash === '-') {
    if (stdin === undefined) throw badInput('No public key on stdin.')
    if (Buffer.byteLength(stdin) > MAX_KEY_RECORD_BYTES) throw tooLarge()
    return stdin
  }
  let fd: number
  try {
    // non-blocking: a FIFO nobody writes to would block a plain open before fstat can refuse it
    fd = openSync(pathOrDash, constants.O_RDONLY | constants.O_NONBLOCK)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw notFound(`No file ${printable(pathOrDash)}.`, 'pass the .pub file made by `engram keys generate --out`')
    throw error
  }
  try {
    // a device or a pipe (/dev/zero, a FIFO) may never end: only a regular file of a key's size is read
    const st = fstatSync(fd)
    if (!st.isFile()) throw badInput(`${printable(pathOrDash)} is not a file.`, 'pass the .pub file made by `engram keys generate --out`')
    if (st.size > MAX_KEY_RECORD_BYTES) throw tooLarge()
    return readFileSync(fd, 'utf8')
  } finally {
    closeSync(fd)
  }
}
