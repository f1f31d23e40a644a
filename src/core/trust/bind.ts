/**
 * `engram keys bind`: give a store made before stores had an identity its identity, pin
 * it on this machine, and re-sign what is signed without it (the config in force and every
 * scope manifest), so that from then on a config or manifest signed for another store of
 * the same owner key is not in force here (identity.ts; README "Store identity").
 *
 * Only what already verifies is re-signed, with the same content: the config.yml bytes in
 * force and each manifest's own entries, one serial up. Nothing new becomes trusted.
 */
import {lstatSync, readdirSync} from 'node:fs'

import {commitChanges} from '../git/commit.js'
import {EngramError, refused, usageError} from '../store/errors.js'
import {withStoreLock} from '../store/lock.js'
import {CONFIG_FILE, CONFIG_SIG, checkConfigSignature, configSignatureText, configSignedFor, rememberConfigSerial, resolvePolicy} from '../store/policy.js'
import {ownerKey} from '../review/review.js'
import {checkDigestArg, requireReviewedDigest} from '../review/digest.js'
import {canonicalJson} from '../memory/canonical.js'
import {sha256Hex} from '../memory/hash.js'
import {blobBytes, gitRead} from '../git/git.js'
import {printable} from '../store/scope.js'
import {refuseInsideSession} from '../session/sessions.js'
import type {Store} from '../store/store.js'
import {STORE_ID_FILE, committedStoreId, isStoreId, newStoreId, storeIdText, workTreeStoreId} from './identity.js'
import {Keyring, keyringInput, pinStoreIdentity, pinnedElsewhere, pinnedRoots, rootPinFile} from './keys.js'
import {rememberSignedManifest} from './manifest-cache.js'
import {MANIFESTS_DIR, Manifest, manifestPath, parseManifest, serializeManifest, signManifest, verifyManifest} from './manifest.js'
import {raiseFromHistory, recordSerial, seenSerials} from './highwater.js'

/** What a bind re-signs, shown to the owner before it is done. */
export interface BindPlan {
  /** the config in force, re-signed with the same bytes one serial up (absent: already bound, or the built-in defaults) */
  config?: {serial: number; signed_by: string; store_id: string | null; last_change: string | null}
  /** each manifest re-signed with its own entries one serial up (store_id: the identity it is signed for now, null: none) */
  manifests: {scope: string; serial: number; files: number; store_id: string | null; last_change: string | null}[]
}

export interface BindResult {
  store: string
  /** null: a new identity, made when the store is bound */
  store_id: string | null
  /** pinned: this machine had pinned it already; committed: the id the store's history names (bound on another machine); new: made here */
  from: 'pinned' | 'committed' | 'new'
  /** false when nothing was written: the store was bound here already */
  changed: boolean
  /** the pin file on this machine */
  pin: string
  /** what is (or, without --digest, would be) re-signed, and the digest that confirms it */
  plan?: BindPlan
  digest?: string
  /** .engram/store-id was put back to the identity pinned here */
  restored_file?: boolean
  /** the config re-signed for the identity, and its new serial */
  config?: {serial: number}
  manifests: {scope: string; serial: number; previous: number}[]
  signed_by?: string
  commit?: string
}

/** The work tree's manifests, each parsed (a file that is not one fails the bind: nothing half-bound). */
function readManifests(store: Store): {rel: string; m: Manifest; text: string}[] {
  let names: string[]
  try {
    names = readdirSync(store.abs(MANIFESTS_DIR)).filter((n) => n.endsWith('.json')).sort()
  } catch {
    return []
  }
  return names.map((name) => {
    const rel = `${MANIFESTS_DIR}/${name}`
    if (!lstatSync(store.abs(rel)).isFile()) throw refused(`${rel} is not a regular file; nothing was bound.`, 'run `engram verify`, which names it, and restore the manifest from git first')
    const text = store.readText(rel)
    if (text === undefined) throw refused(`${rel} cannot be read; nothing was bound.`, 'run `engram verify`, which names each problem, and fix it first')
    const m = parseManifest(text, rel)
    if (manifestPath(m.scope) !== rel) throw refused(`${rel} holds the manifest of scope ${m.scope}; nothing was bound.`, 'run `engram verify`, and restore the file from git first')
    return {rel, m, text}
  })
}

/**
 * Without `digest`, where something must be re-signed: nothing is written, and the result
 * holds the plan and the digest to confirm it with (as `config sign`); with it, the store is bound.
 */
export async function bindStore(store: Store, opts: {id?: string; digest?: string; keyName?: string} = {}): Promise<BindResult> {
  refuseInsideSession('Binding a store\'s identity')
  if (opts.id !== undefined && !isStoreId(opts.id)) throw usageError('--id needs a store identity: 32 hexadecimal digits, as `engram status` shows it.', 'copy it from `engram status` on the machine where the store was bound')
  if (pinnedRoots(store).length === 0) {
    throw refused('This store has no root key pinned on this machine, so nothing here can be bound to it.', 'pin its root first: `engram keys trust --root <fingerprint>`')
  }
  const ring = new Keyring(keyringInput(store))
  const committed = await committedStoreId(store)
  if (ring.storeId !== undefined) {
    if (opts.id !== undefined && opts.id !== ring.storeId) {
      throw refused(`This store is bound to ${ring.storeId} on this machine, not ${opts.id}; a pinned identity is never changed.`, 'check `engram status`; a store made anew at this path is `engram init`\'s')
    }
    // bound here: only the file a clone learns the identity from is put back, when it says otherwise
    if (committed === ring.storeId && workTreeStoreId(store) === ring.storeId) {
      return {store: store.root, store_id: ring.storeId, from: 'pinned', changed: false, pin: rootPinFile(store), manifests: []}
    }
    const id = ring.storeId
    const commit = await withStoreLock(store, () => commitChanges(store, {
      subject: `Put back the store identity ${id} this machine pinned`,
      trailers: {'Engram-Operation': 'bind'},
      changes: [{path: STORE_ID_FILE, content: storeIdText(id)}],
    }))
    return {store: store.root, store_id: id, from: 'pinned', changed: true, restored_file: true, pin: rootPinFile(store), manifests: [], ...(commit ? {commit} : {})}
  }
  // A store whose history names an identity was bound on another machine (or an agent put
  // another store's id there): the owner names it, read from that machine, as a root's
  // fingerprint is checked out of band.
  if (committed !== undefined && opts.id !== committed) {
    throw refused(
      `This store's history names the identity ${committed}${opts.id ? `, not ${opts.id}` : ''}, which this machine has not pinned.`,
      `if you bound it on another machine, check \`engram status\` there, then run \`engram keys bind --id ${committed}\``,
    )
  }
  if (committed === undefined && opts.id !== undefined) {
    throw refused('This store\'s history names no identity, so there is none to pin from another machine.', 'run `engram keys bind` without --id: it makes the store\'s identity')
  }
  const from: BindResult['from'] = committed !== undefined ? 'committed' : 'new'
  if (committed !== undefined) {
    const elsewhere = pinnedElsewhere(store, committed)
    if (elsewhere.length > 0) {
      throw refused(
        `The identity ${committed} this store's history names is pinned on this machine for another store (${elsewhere.map((p) => printable(p)).join(', ')}): a store's identity is its own, so this one was copied here.`,
        'put back this store\'s own .engram/store-id (or remove it, if this store never had one), commit, then bind; if that folder is another clone of this very store, bind this clone from its own pin: see README "Store identity"',
      )
    }
  }
  // the identity the store is bound to (undefined: a new one, made when it is bound; the
  // digest below covers what is re-signed, not the id)
  const wanted = opts.id ?? committed
  const bound = new Keyring({...keyringInput(store), storeId: wanted ?? PLACEHOLDER_ID})

  // The config: signed without an identity (re-signed), already for the identity bound
  // elsewhere (kept), the built-in defaults (nothing to sign), or not in force (refused).
  const policy = await resolvePolicy(store, ring)
  const boundPolicy = wanted === undefined ? undefined : await resolvePolicy(store, bound)
  const configBytes = store.readText(CONFIG_FILE)
  let configBound: boolean
  if (boundPolicy?.state === 'signed') configBound = true
  else if (policy.state === 'signed') configBound = false
  else if (policy.state === 'default' && (boundPolicy === undefined || boundPolicy.state === 'default')) configBound = true
  else {
    throw refused(`.engram/config.yml is not the signed config in force (${policy.problem ?? boundPolicy?.problem}); nothing was bound.`, 'sign it with `engram config sign`, or put the signed version back (`engram config show` says which applies), then bind')
  }
  const manifests = readManifests(store).filter(({m}) => m.store_id === undefined || m.store_id !== bound.storeId)
  // What is re-signed must be what HEAD holds (a "last changed" commit then describes it),
  // no older than a serial seen (a rollback is not made new), and signed for no store or
  // for this one (anything else was copied from another store). Serials seen count under
  // the old rules and, for a store bound on another machine, under the identity about to
  // be pinned: a manifest put back from before that machine's bind is a rollback too.
  let seen = await raiseFromHistory(store, ring)
  if (wanted !== undefined) seen = await raiseFromHistory(store, bound)
  if (!configBound) {
    for (const rel of [CONFIG_FILE, CONFIG_SIG]) await requireCommitted(store, rel)
    const signedFor = configSignedFor(store.readText(CONFIG_SIG))
    if (signedFor !== undefined && signedFor !== wanted) throw refused(`config.sig was signed for store ${signedFor}${wanted ? `, not ${wanted}` : ''}: it was copied from another store; nothing was bound.`, 'put back this store\'s own signed config from its history (`engram config show`), or sign it again with `engram config sign`, then bind')
  }
  for (const {rel, m} of manifests) {
    const v = verifyManifest(ring, m)
    if (!v.ok) throw refused(`The manifest ${rel} does not verify (${v.problem}); nothing was bound.`, 'run `engram verify`, which names each problem, and fix it first')
    await requireCommitted(store, rel)
    if (m.store_id !== undefined && m.store_id !== wanted) throw refused(`The manifest ${rel} was signed for store ${m.store_id}${wanted ? `, not ${wanted}` : ''}: it was copied from another store; nothing was bound.`, 'put back this store\'s own manifest from its history, then bind')
    const above = seen[m.scope] ?? 0
    if (m.serial < above) throw refused(`The manifest ${rel} has serial ${m.serial}, older than serial ${above} seen (a rollback); nothing was bound.`, 'run `engram verify`, which names the commit; restore the newer manifest from git, or re-sign this one with `engram manifest resign` once the store is bound')
  }
  const plan: BindPlan = {
    ...(configBound ? {} : {config: {serial: policy.serial!, signed_by: policy.signed_by!, store_id: configSignedFor(store.readText(CONFIG_SIG)) ?? null, last_change: await lastChange(store, CONFIG_SIG)}}),
    manifests: await Promise.all(manifests.map(async ({rel, m}) => ({scope: m.scope, serial: m.serial, files: m.entries.length, store_id: m.store_id ?? null, last_change: await lastChange(store, rel)}))),
  }
  // the owner reviews what is re-signed, as `config sign` and `review accept` (README "Store identity")
  const digest = sha256Hex(canonicalJson({config: configBound ? null : sha256Hex(configBytes ?? ''), manifests: manifests.map(({rel, text}) => ({path: rel, sha256: sha256Hex(text)}))}))
  const needKey = plan.config !== undefined || plan.manifests.length > 0
  const pin = rootPinFile(store)
  if (needKey && opts.digest === undefined) {
    return {store: store.root, store_id: wanted ?? null, from, changed: false, pin, plan, digest, manifests: []}
  }
  if (needKey) requireReviewedDigest(digest, checkDigestArg(opts.digest!), 'What this store holds', 'review it again with `engram keys bind` (without --digest)')
  const id = wanted ?? newStoreId()
  const target = new Keyring({...keyringInput(store), storeId: id})
  if (!needKey && committed === id && workTreeStoreId(store) === id) {
    pinStoreIdentity(store, id)
    return {store: store.root, store_id: id, from, changed: true, pin, plan, digest, manifests: []}
  }
  const owner = needKey ? await ownerKey(store, opts.keyName) : undefined
  return withStoreLock(store, async () => {
    const changes: {path: string; content: string}[] = [{path: STORE_ID_FILE, content: storeIdText(id)}]
    const seenNow = seenSerials(store)
    let config: BindResult['config']
    if (plan.config && owner) {
      // the same bytes, checked again under the lock
      const now = await resolvePolicy(store, ring)
      if (now.state !== 'signed' || now.text !== configBytes) throw new EngramError('conflict', '.engram/config.yml changed while the store was being bound; nothing was bound.', {nextStep: 'run `engram keys bind` again'})
      const serial = Math.max(now.highest, boundPolicy?.highest ?? 0) + 1
      const sig = configSignatureText(store, configBytes!, owner.key, serial, undefined, id)
      const check = checkConfigSignature(store, target, Buffer.from(configBytes!, 'utf8'), sig)
      if (!check.ok) throw new EngramError('verification', `The new config signature does not verify (${check.problem}); nothing was bound.`)
      changes.push({path: CONFIG_SIG, content: sig})
      config = {serial}
    }
    const resigned: {scope: string; serial: number; previous: number; text: string; signed: Manifest}[] = []
    for (const {rel, m, text: before} of manifests) {
      if (store.readText(rel) !== before) throw new EngramError('conflict', `${rel} changed while the store was being bound; nothing was bound.`, {nextStep: 'run `engram keys bind` again'})
      const serial = Math.max(m.serial, seenNow[m.scope] ?? 0, seen[m.scope] ?? 0) + 1
      const signed = signManifest(owner!.key, {scope: m.scope, entries: m.entries, updated: new Date().toISOString(), serial}, id)
      const v = verifyManifest(target, signed)
      if (!v.ok) throw new EngramError('verification', `The re-signed manifest of ${m.scope} does not verify (${v.problem}); nothing was bound.`)
      const text = serializeManifest(signed)
      changes.push({path: rel, content: text})
      resigned.push({scope: m.scope, serial, previous: m.serial, text, signed})
    }
    const commit = await commitChanges(store, {
      subject: `Bind the store to its identity ${id}${config ? `, config serial ${config.serial}` : ''}${resigned.length ? `, ${resigned.length} manifest(s) re-signed` : ''}`,
      trailers: {'Engram-Operation': 'bind', ...(needKey ? {'Engram-Digest': digest} : {}), ...(owner ? {'Engram-Key': `${owner.key.name} (${owner.key.keyid})`} : {})},
      changes,
    }, {afterCommit: () => {
      if (config) rememberConfigSerial(store, config.serial)
      for (const r of resigned) {
        recordSerial(store, r.scope, r.serial)
        rememberSignedManifest(store, r.text, r.signed, owner!.key)
      }
      // the identity is pinned once its signatures are committed: a failure before leaves the store as it was
      try {
        pinStoreIdentity(store, id)
      } catch (error) {
        throw new EngramError('refused', `The store was bound to ${id} and committed, but the identity could not be pinned on this machine (${(error as Error).message}); until it is, the store is not bound here.`, {nextStep: `make ${rootPinFile(store)} writable, then run \`engram keys bind --id ${id}\` (this machine made that commit)`})
      }
    }})
    await store.loadPolicy()
    return {
      store: store.root,
      store_id: id,
      from,
      changed: true,
      pin,
      plan,
      digest,
      ...(config ? {config} : {}),
      manifests: resigned.map(({scope, serial, previous}) => ({scope, serial, previous})),
      ...(owner ? {signed_by: `${owner.key.name} (${owner.key.keyid})`} : {}),
      ...(commit ? {commit} : {}),
    }
  })
}

/** Refuse a store file whose work-tree bytes are not HEAD's (bind re-signs committed bytes only). */
async function requireCommitted(store: Store, rel: string): Promise<void> {
  let head: string | undefined
  try {
    head = (await blobBytes(store.top, `HEAD:${store.gitPath(rel)}`)).toString('utf8')
  } catch {
    head = undefined
  }
  if (head !== store.readText(rel)) {
    throw refused(`${rel} is not what HEAD holds (changed or added since the last commit); bind re-signs committed files only, and nothing was bound.`, `commit it if it is yours, or put it back with \`git checkout -- ${rel}\`, then bind`)
  }
}

/** A placeholder identity, never pinned: what a new identity will be checked against before it is made. */
const PLACEHOLDER_ID = '0'.repeat(32)

/** The commit that last changed a store file: short id and subject (what the owner sees before binding). */
async function lastChange(store: Store, rel: string): Promise<string | null> {
  const out = (await gitRead(store.top, ['log', '-1', '--format=%h %s', '--end-of-options', 'HEAD', '--', store.gitPath(rel)], {allowFail: true})).trim()
  return out === '' ? null : printable(out.slice(0, 200))
}

export interface IdentityStatus {
  /** the identity pinned on this machine (null: none) */
  id: string | null
  /** bound: pinned, and the store's file says the same; file-differs: pinned, and .engram/store-id says otherwise (or is missing); unbound: roots pinned, no identity; no-root: nothing pinned here */
  state: 'bound' | 'file-differs' | 'unbound' | 'no-root'
  /** what is wrong and the command that mends it (null when nothing is) */
  problem: string | null
}

/** This store's identity on this machine, for `status`, `verify`, `doctor` and `sync`: the pin, against the file in the work tree and in HEAD. */
export async function storeIdentity(store: Store): Promise<IdentityStatus> {
  const input = keyringInput(store)
  const id = input.storeId ?? null
  if (id === null) {
    if (input.roots.length === 0) return {id, state: 'no-root', problem: null}
    return {id, state: 'unbound', problem: 'this store has no identity pinned on this machine, so a config or manifest signed for another store of the same owner key would be in force here; run `engram keys bind`'}
  }
  const file = workTreeStoreId(store)
  const committed = await committedStoreId(store)
  if (file === id && committed === id) return {id, state: 'bound', problem: null}
  const says = (where: string, value: string | undefined) => `${where} ${value ? `says ${value}` : 'is missing or names no store identity'}`
  const what = [file === id ? '' : says(STORE_ID_FILE, file), committed === id ? '' : says(`${STORE_ID_FILE} in HEAD`, committed)].filter(Boolean).join(', and ')
  return {id, state: 'file-differs', problem: `${what}, but this machine pinned ${id} for this store (a new clone would learn the wrong identity; nothing here changes); put it back with \`engram keys bind\``}
}
