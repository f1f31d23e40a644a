import {assertCanRead, canRead} from '../session/access.js'
import {FileChange, commitChanges} from '../git/commit.js'
import {readStored} from '../memory/curated.js'
import {EngramError, badInput, notFound, refused, usageError, verificationFailed} from '../store/errors.js'
import {gitBlobHash} from '../memory/hash.js'
import {gitRead, revParse} from '../git/git.js'
import {raiseFromHistory, recordSerial, seenSerials, serialSeenIn} from '../trust/highwater.js'
import {RecheckFinding, recheckEntry, unrecordedFlags} from './recheck.js'
import {AcceptView, SignedChangePlan, planAccept, planSignedChange} from './accept-plan.js'
import {Keyring, loadKeyring} from '../trust/keys.js'
import {findPrivateKey, unlockPrivateKey} from '../trust/privatekey.js'
import {manifestEntry, manifestPath, nextManifest, readManifest, serializeManifest, signManifest, verifyManifest} from '../trust/manifest.js'
import {rememberSignedManifest} from '../trust/manifest-cache.js'
import {MemoryFile, parseMemory, serializeMemory} from '../memory/memory.js'
import {memoryRelPath} from '../store/paths.js'
import {EntryStatus, Proposal, StoredFlag, findEntry, findEntryFile, listEntries, matchEntryId, proposalDigest} from './proposal.js'
import {checkDigestArg} from './digest.js'
import {clipRedacted, redactText} from '../write/redact/index.js'
import {formatScope, parseScope, printable} from '../store/scope.js'
import {refuseInsideSession, type SessionRecord} from '../session/sessions.js'
import {KeyPair, ownerVerdict, signMemory, verifyMemory} from '../trust/sign.js'
import {withStoreLock} from '../store/lock.js'
import type {ProposalSigner} from './signed.js'
import type {Store} from '../store/store.js'

export interface QueueItem {
  id: string
  status: EntryStatus
  kind: string
  operation: string
  scope: string
  path: string
  author: string
  session: string | null
  origin: string
  tainted: boolean
  created: string
  flags: string[]
  vote: Proposal['vote']
  digest: string
}

export interface QueueListing {
  items: QueueItem[]
  /** entries whose files could not be read: named, never hiding the rest */
  broken: {file: string; error: string}[]
}

const summary = (p: Proposal): QueueItem => ({
  id: p.id, status: p.status, kind: p.kind, operation: p.operation, scope: p.scope, path: p.path, author: p.author,
  session: p.session, origin: p.origin, tainted: p.tainted, created: p.created, flags: p.flags.map((f) => f.flag), vote: p.vote,
  digest: proposalDigest(p),
})

/**
 * The review queue or quarantine, newest first, optionally for one scope. A session sees
 * only entries of scopes it may read; broken files are listed by name (to the owner only).
 */
export function listQueue(store: Store, status: EntryStatus, opts: {scope?: string; session?: SessionRecord}): QueueListing {
  const scope = opts.scope ? assertCanRead(opts.session, opts.scope) : undefined
  const out: QueueListing = {items: [], broken: []}
  for (const e of listEntries(store, status)) {
    if (!e.proposal) {
      if (!opts.session) out.broken.push({file: e.file, error: e.error ?? 'unreadable'})
      continue
    }
    if (scope && e.proposal.scope !== scope) continue
    if (!canRead(opts.session, e.proposal.scope)) continue
    out.items.push(summary(e.proposal))
  }
  out.items.sort((a, b) => b.created.localeCompare(a.created) || a.id.localeCompare(b.id))
  return out
}

export interface ShownEntry {
  proposal: Proposal
  digest: string
  /** the file as it is now at the target path (the base the change applies to), or null */
  baseText: string | null
  /** the blob id of that file now, or null */
  currentBase: string | null
  stale: boolean
  /** the full file the accept would write, before reviewer fields and signature */
  proposedText: string
  /** flags the entry's text raises now that its stored list lacks (recheck.ts); null when they could not be recomputed (flagsUnchecked says why) */
  unrecordedFlags: StoredFlag[] | null
  /** why the flags could not be recomputed (the budget ran out), or null */
  flagsUnchecked: string | null
  /** facts that disagree with what engram recomputed (recheck.ts; set by showEntryChecked) */
  recheck?: RecheckFinding[]
  quarantinedAs?: string | null
  /** the other files a merge deletes, as they are now (text null: already gone) */
  removed?: {path: string; text: string | null; blob: string | null; stale: boolean}[]
  /** who signed an entry made without a session (set by showEntryChecked); null for a session's entry */
  signer?: ProposalSigner | null
}

/** One entry with what a reviewer needs: the current base, the proposed file, staleness and the digest. */
function showEntry(store: Store, status: EntryStatus, id: string, session?: SessionRecord): Omit<ShownEntry, 'unrecordedFlags' | 'flagsUnchecked'> {
  // A session resolves ids among the entries it may read only: not even an ambiguous
  // prefix may hint that another tenant's entry exists.
  const p = session ? findReadableEntry(store, status, id, session) : findEntry(store, status, id)
  if (!canRead(session, p.scope)) {
    // same answer as a missing id (findEntry's): a session learns nothing of other scopes' queues
    throw notFound(`No ${status === 'pending' ? 'proposal' : 'quarantine entry'} ${printable(id.trim().toLowerCase())}.`, status === 'pending' ? 'see `engram review list`' : 'see `engram quarantine list`')
  }
  const current = readStored(store, p.scope, p.path)
  const proposedText = p.operation === 'delete' ? '' : serializeMemory({frontmatter: p.memory, body: p.body})
  const removed = p.removes.map((r) => {
    // a path that is not a memory path of this scope is shown, and marked by the recheck; accept refuses it
    let now: ReturnType<typeof readStored>
    try {
      now = readStored(store, p.scope, r.path)
    } catch {
      now = undefined
    }
    return {path: r.path, text: now?.text ?? null, blob: now?.blob ?? null, stale: now?.blob !== r.base}
  })
  return {
    removed,
    proposal: p,
    digest: proposalDigest(p),
    baseText: current?.text ?? null,
    currentBase: current?.blob ?? null,
    stale: (current?.blob ?? null) !== p.base || removed.some((r) => r.stale),
    proposedText,
  }
}

function findReadableEntry(store: Store, status: EntryStatus, id: string, session: SessionRecord): Proposal {
  const readable = listEntries(store, status).flatMap((e) => (e.proposal && canRead(session, e.proposal.scope) ? [e.proposal] : []))
  const hit = matchEntryId(readable.map((p) => p.id), id, status)
  return readable.find((p) => p.id === hit)!
}

/**
 * The owner key to act with, checked against the store's keyring: trusted, not revoked,
 * role owner. Never inside an agent session; the key's trust is checked before its
 * passphrase is asked, so nobody types a passphrase only to hear the key does not count.
 */
export async function ownerKey(store: Store, keyName?: string): Promise<{key: KeyPair; keyring: Keyring}> {
  // set at all, even empty, is a session (R22); the commands refuse first, this is the core's own guard
  refuseInsideSession()
  const found = findPrivateKey(keyName)
  const keyring = await loadKeyring(store)
  const v = ownerVerdict(keyring, found.keyid)
  if (!v.ok) throw refused(`Key ${found.name} (${found.keyid}) cannot act as an owner of this store: it is ${v.why}.`, 'use a trusted owner key (`engram keys list`)')
  // what committed history says of manifest serials, before anything is built on a manifest (R13)
  await raiseFromHistory(store, keyring)
  const key = await unlockPrivateKey(found)
  return {key, keyring}
}

/** What an accept or a restore may read of the store, under the lock (accept-plan.ts). */
export function storeView(store: Store, keyring: Keyring): AcceptView {
  return {
    keyring,
    recheck: (p) => recheckEntry(store, p),
    rel: (scope, path) => memoryRelPath(store, scope, path),
    read: (scope, path) => readStored(store, scope, path),
    manifest: (scope) => readManifest(store, scope),
    seenSerial: (scope) => seenSerials(store)[scope] ?? 0,
  }
}

/**
 * Sign a planned change: the memory file (or its deletion) and its re-signed manifest, as
 * changes for one atomic commit; `committed` records what must follow the commit only
 * (the serial seen, the manifest's verified-signature record), never before it.
 */
export function signChange(store: Store, key: KeyPair, keyring: Keyring, c: SignedChangePlan): {changes: FileChange[]; committed: () => void} {
  const changes: FileChange[] = c.removes.map((path) => ({path, content: null}))
  if (!c.manifest) {
    // a run: scratchpad: its files only (planSignedChange never gives it a memory to sign)
    if (c.memory) throw badInput('A run: scratchpad is never signed.')
    changes.push({path: c.rel, content: null})
    return {changes, committed: () => {}}
  }
  let next
  if (c.memory) {
    const signed = signMemory(key, c.rel, c.memory)
    const check = verifyMemory(keyring, c.rel, signed)
    if (!check.ok) throw new EngramError('verification', `The new signature does not verify (${check.detail}); nothing written.`)
    const text = serializeMemory(signed)
    changes.push({path: c.rel, content: text})
    next = nextManifest(c.prev, c.scope, {upsert: [manifestEntry(c.rel, text)], ...(c.removes.length > 0 ? {remove: c.removes} : {})})
  } else {
    changes.push({path: c.rel, content: null})
    next = nextManifest(c.prev, c.scope, {remove: [c.rel, ...c.removes]})
  }
  next.serial = c.serial
  const signed = signManifest(key, next, keyring.storeId)
  const text = serializeManifest(signed)
  changes.push({path: manifestPath(c.scope), content: text})
  const committed = () => {
    recordSerial(store, c.scope, next.serial)
    rememberSignedManifest(store, text, signed, key)
  }
  return {changes, committed}
}

/** showEntry plus the recomputed facts (recheck.ts): what `review show` and `quarantine show` print. */
export async function showEntryChecked(store: Store, status: EntryStatus, id: string, session?: SessionRecord): Promise<ShownEntry & {recheck: RecheckFinding[]; quarantinedAs: string | null; signer: ProposalSigner | null}> {
  const e = showEntry(store, status, id, session)
  const check = await recheckEntry(store, e.proposal)
  const budget = store.config.vote.budget_ms
  const flags = await unrecordedFlags(e.proposal, store.config.max_body_bytes, budget)
  const flagsUnchecked = flags === undefined ? `recomputing this text's flags did not finish within ${budget} ms of CPU time (vote.budget_ms): the flags shown are the entry's own, unchecked` : null
  return {...e, unrecordedFlags: flags ?? null, flagsUnchecked, recheck: check.findings, quarantinedAs: check.quarantinedAs, signer: check.signer}
}

export interface AcceptResult {
  id: string
  scope: string
  path: string
  operation: string
  digest: string
  commit?: string
  reviewed_by: string
  version: number | null
}

/**
 * Accept exactly what was reviewed (STANDARD R12): recompute the digest from the proposal
 * as it is now and refuse when it differs from the reviewed one ("does not match"), when
 * a recomputed fact disagrees with the shown one (recheck.ts), or when the file moved
 * since the proposal was made ("stale") — the plan (accept-plan.ts), from what the store
 * holds under the lock; then sign the file and the re-signed manifest, remove the
 * proposal, and make one commit with the provenance.
 */
export async function acceptProposal(store: Store, id: string, digestArg: string, opts: {keyName?: string} = {}): Promise<AcceptResult> {
  const digest = checkDigestArg(digestArg)
  const {key, keyring} = await ownerKey(store, opts.keyName)
  return withStoreLock(store, async () => {
    const plan = await planAccept(findEntry(store, 'pending', id), digest, key, storeView(store, keyring))
    const {proposal: p, change} = plan
    const {changes, committed} = signChange(store, key, keyring, change)
    // file, manifest, the proposal's removal and the commit: all or nothing (commitChanges)
    const commit = await commitChanges(store, {
      subject: plan.subject,
      trailers: plan.trailers,
      changes: [...changes, {path: plan.entry, content: null}],
    }, {afterCommit: committed})
    return {id: p.id, scope: change.scope, path: p.path, operation: p.operation, digest: plan.digest, commit, reviewed_by: key.name, version: change.memory?.frontmatter.version ?? null}
  })
}

/** Reject: record who and why in the commit, remove the entry. Works for pending and quarantined entries (purge). */
export async function rejectEntry(store: Store, status: EntryStatus, id: string, reason: string, opts: {keyName?: string} = {}) {
  const why = redactText(reason.trim(), store.config.redaction.extra)
  if (!why) throw usageError('A reason is required.', 'e.g. --reason "not a fact"')
  const {key} = await ownerKey(store, opts.keyName)
  return withStoreLock(store, async () => {
    const found = findEntryFile(store, status, id)
    // A broken or tampered entry can still be rejected: it is removed, and the commit says so.
    let p: Proposal | undefined
    let problem: string | undefined
    try {
      p = findEntry(store, status, found.id)
    } catch (error) {
      problem = error instanceof Error ? error.message : String(error)
    }
    const verb = status === 'pending' ? 'Reject' : 'Purge'
    const what = status === 'pending' ? 'proposal' : 'quarantine entry'
    const commit = await commitChanges(store, {
      subject: p ? `${verb} ${what} ${p.id} for ${p.scope}/${p.path}` : `${verb} unreadable ${what} ${found.id}`,
      body: `Reason: ${clipRedacted(why, 1000, store.config.redaction.extra)}${problem ? `\n\nThe entry did not parse: ${clipRedacted(problem, 300, store.config.redaction.extra)}` : ''}`,
      trailers: {
        'Engram-Operation': status === 'pending' ? 'reject' : 'purge', 'Engram-Proposal': found.id, 'Engram-Digest': p ? proposalDigest(p) : undefined,
        'Engram-Author': p?.memory.author, 'Engram-Session': p?.memory.source_session ?? undefined, 'Engram-Reviewed-By': `${key.name} (${key.keyid})`,
      },
      changes: [{path: found.file, content: null}],
    })
    // An entry only in the work tree (planted, never committed): removing it changes no
    // commit, so there is none to record the rejection in; the file is gone, nothing else changed.
    return {id: found.id, scope: p?.scope ?? null, path: p?.path ?? null, reason: why, commit: commit ?? null, never_committed: commit === undefined, reviewed_by: key.name, unreadable: problem ?? null}
  })
}

const REV_RE = /^[A-Za-z0-9_][A-Za-z0-9_.~^/@{}-]{0,200}$/

/**
 * Restore one memory to its content at an earlier revision, as a new version: signed,
 * added to the manifest, committed with the revision it came from. Only a version that
 * verifies by a trusted owner key now can be restored.
 */
export async function restoreMemory(store: Store, scopeText: string, path: string, rev: string, opts: {keyName?: string} = {}) {
  if (!REV_RE.test(rev)) throw badInput(`"${printable(rev)}" is not a revision.`, 'e.g. --to HEAD~3 or a commit id from `engram history`')
  const scope = formatScope(parseScope(scopeText))
  if (scope.startsWith('run:')) throw badInput('run: scopes are scratchpads; restore curated memory (org, project:, tenant:).')
  const {key, keyring} = await ownerKey(store, opts.keyName)
  const rel = memoryRelPath(store, scope, path)
  const commitId = (await revParse(store.top, `${rev}^{commit}`)) ?? ''
  if (!commitId) throw notFound(`No revision ${printable(rev)} in this repository.`, 'see `engram history <path> --scope <scope>`')
  const old = await gitRead(store.top, ['cat-file', 'blob', `${commitId}:${store.gitPath(rel)}`], {allowFail: true})
  if (!old) throw notFound(`${scope}/${path} did not exist at ${rev}.`, 'see `engram history <path> --scope <scope>`')
  const oldMemory = parseMemory(old, `${rel}@${rev}`)
  // Restore re-signs what it restores: only a version a trusted owner key signed (checked
  // against the keyring as it is now) may be re-signed. Commit trailers prove nothing: a
  // plain `git commit` can carry any of them (STANDARD R23).
  const check = verifyMemory(keyring, rel, oldMemory)
  if (!check.ok) {
    throw verificationFailed(`${scope}/${path} at ${printable(rev)} does not carry a valid owner signature (${check.problem}: ${check.detail}); restoring it would sign content nobody reviewed. Nothing written.`, 'pick a version that `engram history` shows as "reviewed by" (signature verified)')
  }
  return withStoreLock(store, async () => {
    const current = readStored(store, scope, path)
    const memory: MemoryFile = {
      frontmatter: {
        ...oldMemory.frontmatter,
        scope,
        version: Math.max(current?.memory.frontmatter.version ?? 0, oldMemory.frontmatter.version) + 1,
        updated: new Date().toISOString(),
        reviewed_by: key.name,
        proposal: null,
        digest: null,
        signature: null,
      },
      body: oldMemory.body,
    }
    const {changes, committed} = signChange(store, key, keyring, planSignedChange(storeView(store, keyring), scope, rel, memory))
    const commit = await commitChanges(store, {
      subject: `Restore ${scope}/${path} to its version at ${rev} (${commitId.slice(0, 10)})`,
      trailers: {
        'Engram-Operation': 'restore', 'Engram-Restored-From': commitId, 'Engram-Author': oldMemory.frontmatter.author,
        'Engram-Origin': oldMemory.frontmatter.origin, 'Engram-Tainted': oldMemory.frontmatter.tainted, 'Engram-Reviewed-By': `${key.name} (${key.keyid})`,
      },
      changes,
    }, {afterCommit: committed})
    return {scope, path, restored_from: commitId, version: memory.frontmatter.version, commit}
  })
}

/**
 * Re-sign a scope's current manifest above the highest serial seen (R13): the way out when
 * an owner-signed manifest with a higher serial than the scope's real one was committed by
 * mistake (e.g. an old manifest put back by hand after later accepts) and `verify` reports a
 * rollback for good. The owner says the manifest as it stands is the scope's truth, so it
 * is refused unless every file it lists is present with exactly the listed bytes.
 */
export async function resignManifest(store: Store, scopeText: string, opts: {keyName?: string} = {}) {
  const scope = formatScope(parseScope(scopeText))
  if (scope.startsWith('run:')) throw badInput('run: scopes have no manifest.')
  const {key, keyring} = await ownerKey(store, opts.keyName)
  return withStoreLock(store, async () => {
    const m = readManifest(store, scope)
    if (!m) throw notFound(`Scope ${scope} has no manifest.`, 'see `engram verify`')
    const v = verifyManifest(keyring, m)
    if (!v.ok) throw verificationFailed(`The manifest of ${scope} does not verify (${v.problem}); refusing to re-sign it.`, 'restore it from git first')
    for (const e of m.entries) {
      const bytes = store.readText(e.path)
      if (bytes === undefined || gitBlobHash(bytes) !== e.blob) {
        throw verificationFailed(`${e.path} is not the content the manifest of ${scope} lists; refusing to re-sign it.`, 'restore the scope\'s files from git first (`engram verify` names each problem)')
      }
    }
    const above = seenSerials(store)[scope] ?? 0
    const seenIn = serialSeenIn(store, scope)
    const signed = signManifest(key, {scope, entries: m.entries, updated: new Date().toISOString(), serial: Math.max(m.serial, above) + 1}, keyring.storeId)
    const mrel = manifestPath(scope)
    const text = serializeManifest(signed)
    // the manifest and its commit, all or nothing; the serial is recorded only after the commit (R24)
    const commit = await commitChanges(store, {
      subject: `Re-sign the manifest of ${scope} at serial ${signed.serial} (was ${m.serial}; serial ${above} seen${seenIn ? ` in ${seenIn.slice(0, 10)}` : ''})`,
      trailers: {'Engram-Operation': 'resign-manifest', 'Engram-Reviewed-By': `${key.name} (${key.keyid})`},
      changes: [{path: mrel, content: text}],
    }, {afterCommit: () => {
      recordSerial(store, scope, signed.serial)
      rememberSignedManifest(store, text, signed, key)
    }})
    return {scope, serial: signed.serial, previous: m.serial, above, commit, reviewed_by: key.name}
  })
}
