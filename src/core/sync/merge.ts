/**
 * Integrating a remote's history with the store's, path by path (README "Sync"). No
 * content merge and no merge driver ever runs (a driver is a program the repository's
 * config names, STANDARD R18): every store file is a whole unit. A path changed on one
 * side only takes that side; a path both sides changed alike is that change. What both
 * changed differently:
 * - a scope's manifest: both hosts accepted into the scope since they last synced. The
 *   merged manifest is the remote's, with this host's own changes of entries the remote
 *   did not touch, at a serial above both, signed by the owner key (only the owner can
 *   sync such a change; anyone else is refused, with nothing changed);
 * - a curated memory: the remote's version stays and this host's becomes a proposal
 *   against it, signed by the owner (kind conflict): never overwritten, never dropped.
 *   The same reviewed proposal accepted on both hosts is one change, not a conflict;
 * - anything else (config, keys, session records, queue entries): refused, with the paths.
 */
import {catBlobs, gitRead, rawDiff} from '../git/git.js'
import type {FileChange} from '../git/commit.js'
import {newProposalId} from '../store/ids.js'
import {EngramError, refused} from '../store/errors.js'
import {scopeOfPath} from '../store/scope.js'
import type {Store} from '../store/store.js'
import type {Keyring} from '../trust/keys.js'
import {MANIFESTS_DIR, Manifest, ManifestEntry, parseManifest, serializeManifest, signManifest, verifyManifest} from '../trust/manifest.js'
import type {KeyPair} from '../trust/sign.js'
import {parseMemory} from '../memory/memory.js'
import {Proposal, entryFile, listEntries, proposalDigest, serializeProposal} from '../review/proposal.js'
import {signProposal} from '../review/signed.js'

/** One side's change of a path since the merge base: its new blob (null: deleted) and mode. */
interface SideChange {
  blob: string | null
  mode: string
}

/** Paths that differ between two commits, with the new blob and mode (renames as delete + add). */
export async function changedPaths(store: Store, from: string, to: string): Promise<Map<string, SideChange>> {
  const out = new Map<string, SideChange>()
  for (const c of await rawDiff(store.top, from, to)) out.set(c.path, c.blob === null ? {blob: null, mode: c.oldMode} : {blob: c.blob, mode: c.newMode})
  return out
}

/** A conflict this host's change lost: its content is kept as proposal `proposal`. */
export interface Demoted {
  scope: string
  path: string
  proposal: string
  digest: string
  /** what this host had accepted: a new version, or a deletion */
  ours: 'update' | 'delete'
}

/** A demoted change's proposal, committed on its own before the merge (review's recheck reads the commit that added it). */
export interface DemotedEntry {
  demoted: Demoted
  /** undefined when an earlier, interrupted sync already committed this very proposal */
  change?: FileChange
  trailers: Record<string, string | boolean>
  subject: string
}

export interface Integration {
  /** the changes that turn HEAD (plus the demoted entries' files) into the merged tree */
  changes: FileChange[]
  entries: DemotedEntry[]
  /** scopes whose manifest was merged and re-signed */
  resigned: {scope: string; serial: number}[]
  demoted: Demoted[]
  /** what must follow the commit only (manifest serials seen) */
  committed: {scope: string; serial: number}[]
}

export interface MergeInput {
  head: string
  tip: string
  base: string
  /** the keyrings this host's HEAD and the remote's commit make (a manifest is checked against its own side's keys) */
  keyrings: {ours: Keyring; theirs: Keyring}
  /** the owner key, when this sync may sign (outside a session, unlocked) */
  owner?: KeyPair
  /** the highest serial per scope this machine has seen */
  seenSerial: Record<string, number>
  /** asked for the owner key the first time a merge needs it; undefined when it may not */
  unlock?: () => Promise<KeyPair>
  /** an agent session runs this sync: messages name no path or scope (it may not see them all, R7) */
  session?: boolean
}

const MANIFEST_RE = new RegExp(`^${MANIFESTS_DIR.replace('.', '\\.')}/[^/]+\\.json$`)

function sameEntry(a: ManifestEntry | undefined, b: ManifestEntry | undefined): boolean {
  return a === undefined ? b === undefined : b !== undefined && a.blob === b.blob && a.version === b.version && a.id === b.id
}

export async function integrate(store: Store, m: MergeInput): Promise<Integration> {
  // a session is never told a path or scope: it may be another tenant's (R7)
  const named = (what: string, generic = 'a file') => (m.session ? generic : what)
  const ours = await changedPaths(store, m.base, m.head)
  const theirs = await changedPaths(store, m.base, m.tip)
  for (const [path, c] of theirs) {
    if (c.blob !== null && c.mode !== '100644') {
      throw new EngramError('verification', `The remote's history holds ${named(path)} as a ${c.mode === '120000' ? 'symbolic link' : c.mode === '160000' ? 'submodule' : `file of mode ${c.mode}`}; a store holds regular files only, so nothing was taken from it.`, {
        nextStep: 'look at the remote\'s last commits (`git log --stat`) with the store\'s owner',
      })
    }
  }
  const changes: FileChange[] = []
  const wanted: {path: string; blob: string}[] = []
  const manifestScopes: string[] = []
  const curatedConflicts: string[] = []
  const other: string[] = []
  for (const [path, t] of theirs) {
    const o = ours.get(path)
    if (o === undefined) {
      if (t.blob === null) changes.push({path, content: null})
      else wanted.push({path, blob: t.blob})
      continue
    }
    if (o.blob === t.blob) continue
    if (MANIFEST_RE.test(path)) manifestScopes.push(path)
    else if (scopeOfPath(path) && !path.startsWith('run/') && path.endsWith('.md')) curatedConflicts.push(path)
    else other.push(path)
  }
  if (other.length > 0) {
    throw refused(
      `This host and the remote both changed ${other.length} file(s) that engram does not merge${m.session ? '' : `: ${other.slice(0, 5).join(', ')}${other.length > 5 ? ', …' : ''}`}; nothing was changed.`,
      'keep one side\'s version (e.g. sign one config with `engram config sign` on the synced store), then sync again',
    )
  }

  const blobs = await readBlobs(store, [
    ...wanted.map((w) => w.blob),
    ...curatedConflicts.flatMap((p) => [ours.get(p)?.blob, theirs.get(p)?.blob]).filter((b): b is string => Boolean(b)),
  ])
  for (const w of wanted) changes.push({path: w.path, content: blobs.get(w.blob) as Buffer})

  const resigned: Integration['resigned'] = []
  const demoted: Demoted[] = []
  const entries: DemotedEntry[] = []
  const committed: Integration['committed'] = []
  let owner = m.owner
  const needOwner = async (why: string): Promise<KeyPair> => {
    if (owner) return owner
    if (!m.unlock) {
      throw refused(
        `This host and the remote both ${m.session ? 'accepted changes' : why} since they last synced; merging that needs the owner's signature, and this sync has no owner key.`,
        'run `engram sync` as the owner, outside an agent session (it re-signs the merged manifest); nothing was changed',
      )
    }
    return (owner = await m.unlock())
  }

  // curated memories both sides changed: the remote's version stays, ours becomes a proposal
  const lost = new Map<string, Demoted>()
  for (const path of curatedConflicts) {
    const o = ours.get(path)?.blob ?? null
    const t = theirs.get(path)?.blob ?? null
    const oursText = o ? (blobs.get(o) as Buffer).toString('utf8') : null
    const theirsText = t ? (blobs.get(t) as Buffer).toString('utf8') : null
    if (sameReviewedChange(oursText, theirsText, path)) {
      changes.push({path, content: theirsText === null ? null : Buffer.from(theirsText)})
      continue
    }
    const key = await needOwner(`changed the curated memory ${path}`)
    const d = demote(store, key, path, oursText, theirsText, t)
    changes.push({path, content: theirsText === null ? null : Buffer.from(theirsText)})
    entries.push(d)
    lost.set(path, d.demoted)
    demoted.push(d.demoted)
  }

  for (const rel of manifestScopes) {
    const texts = await manifestsAt(store, rel, [m.base, m.head, m.tip])
    const [mb, mo, mt] = texts.map((t, i) => (t === undefined ? undefined : parseManifest(t, `${rel} at ${[m.base, m.head, m.tip][i].slice(0, 10)}`)))
    for (const [side, man, keyring] of [['this host\'s', mo, m.keyrings.ours], ['the remote\'s', mt, m.keyrings.theirs]] as const) {
      if (!man) continue
      const v = verifyManifest(keyring, man)
      if (!v.ok) throw new EngramError('verification', `${side} manifest ${named(rel, 'of a scope')} does not verify${m.session ? '' : ` (${v.problem})`}; nothing was changed.`, {nextStep: 'run `engram verify` on both hosts'})
    }
    if (!mt || !mo) {
      // one side deleted a manifest the other changed: no accept ever does that
      throw refused(`${named(rel, 'A manifest')} was deleted on one side and changed on the other; nothing was changed.`, 'restore it from git on the side that lost it, then sync again')
    }
    // The remote's manifest is signed, but a signature says only that an owner once signed it:
    // re-signing it here would make an old one current again (a rollback laundered through the
    // merge). A manifest the remote's side made since the merge base is newer than the base's,
    // and new to this host: one this host's own history already holds is a replay.
    if ((mb && mt.serial <= mb.serial) || (await inHistory(store, m.head, rel, theirs.get(rel)?.blob))) {
      throw new EngramError('verification', `The remote's manifest ${named(rel, 'of a scope')} is an older one put back (serial ${mt.serial}${mb ? `, the common history has ${mb.serial}` : ''}), a rolled-back state; nothing was changed.`, {
        nextStep: 'ask who administers the remote to revert the commit that put it back; this store keeps its own history',
      })
    }
    const scope = mt.scope
    const merged = new Map(mt.entries.map((e) => [e.path, e]))
    const baseEntries = new Map((mb?.entries ?? []).map((e) => [e.path, e]))
    const ourEntries = new Map(mo.entries.map((e) => [e.path, e]))
    for (const path of new Set([...baseEntries.keys(), ...ourEntries.keys()])) {
      const eb = baseEntries.get(path)
      const eo = ourEntries.get(path)
      if (sameEntry(eb, eo)) continue
      const et = merged.get(path)
      if (sameEntry(eb, et)) {
        // only this host changed the entry: its change stands (its file is HEAD's already)
        if (eo) merged.set(path, eo)
        else merged.delete(path)
      } else if (!sameEntry(eo, et) && !lost.has(path) && !curatedConflicts.includes(path)) {
        // both changed the entry but the files agree or one side's file did not move: the history does not add up
        throw new EngramError('verification', `The manifests of ${named(scope, 'a scope')} disagree about ${named(path)} in a way no accept makes; nothing was changed.`, {nextStep: 'run `engram verify` on both hosts'})
      }
    }
    const key = await needOwner(`accepted changes into ${scope}`)
    const serial = Math.max(mo.serial, mt.serial, m.seenSerial[scope] ?? 0) + 1
    const signed: Manifest = signManifest(key, {scope, entries: [...merged.values()], updated: new Date().toISOString(), serial}, m.keyrings.ours.storeId)
    changes.push({path: rel, content: serializeManifest(signed)})
    resigned.push({scope, serial})
    committed.push({scope, serial})
  }
  return {changes, entries, resigned, demoted, committed}
}

/** The same proposal accepted on both hosts: one reviewed change (same proposal id, body and version). */
function sameReviewedChange(a: string | null, b: string | null, path: string): boolean {
  if (a === null || b === null) return a === b
  try {
    const x = parseMemory(a, path)
    const y = parseMemory(b, path)
    return x.frontmatter.proposal !== null && x.frontmatter.proposal === y.frontmatter.proposal && x.body === y.body && x.frontmatter.version === y.frontmatter.version
  } catch {
    return false
  }
}

/** This host's losing version of a curated memory as a proposal against the remote's, signed by the owner. */
function demote(store: Store, key: KeyPair, rel: string, oursText: string | null, theirsText: string | null, theirsBlob: string | null): DemotedEntry {
  const where = scopeOfPath(rel) as {scope: string; path: string}
  const source = parseMemory((oursText ?? theirsText) as string, rel)
  const fm = source.frontmatter
  const operation = oursText === null ? 'delete' : theirsText === null ? 'create' : 'update'
  const body = oursText === null ? '' : source.body
  const ours = oursText === null ? 'delete' as const : 'update' as const
  // a sync killed after committing this proposal and before its merge made it already: the same change, once
  const earlier = listEntries(store, 'pending').map((e) => e.proposal).find((p) =>
    p && p.kind === 'conflict' && p.scope === where.scope && p.path === where.path && p.base === theirsBlob && p.operation === operation && p.body === body && p.memory.version === fm.version)
  if (earlier) return {demoted: {scope: where.scope, path: where.path, proposal: earlier.id, digest: proposalDigest(earlier), ours}, trailers: {}, subject: ''}
  const id = newProposalId()
  const now = new Date().toISOString()
  const note = oursText === null
    ? `sync conflict: this host deleted ${where.scope}/${where.path} while the remote accepted version ${fm.version}; the deletion is kept for review`
    : `sync conflict: this host accepted version ${fm.version} of ${where.scope}/${where.path} (proposal ${fm.proposal ?? 'none'}) while the remote ${theirsText === null ? 'deleted it' : 'accepted another version'}; this host's version is kept for review`
  const p: Proposal = {
    id, status: 'pending', kind: 'conflict', operation, scope: where.scope, path: where.path, base: theirsBlob,
    author: key.name, session: null, origin: 'owner', tainted: fm.tainted, taint_reasons: fm.taint_reasons,
    created: now, flags: [], redactions: {}, votes: [], vote: null, evidence: [], note, removes: [], signature: null,
    memory: {...fm, scope: where.scope, author: key.name, source_session: null, origin: 'owner', updated: now, proposal: id, reviewed_by: null, digest: null, signature: null},
    body,
  }
  p.signature = signProposal(key, p)
  const digest = proposalDigest(p)
  return {
    change: {path: entryFile(p), content: serializeProposal(p)},
    demoted: {scope: where.scope, path: where.path, proposal: id, digest, ours},
    subject: `Keep this host's ${ours === 'delete' ? 'deletion' : 'version'} of ${where.scope}/${where.path} as proposal ${id} (the remote accepted another)`,
    // the trailers review's recheck compares with the entry (an owner-signed entry, like forget's)
    trailers: {
      'Engram-Operation': 'write', 'Engram-Proposal': id, 'Engram-Digest': digest, 'Engram-Author': key.name,
      'Engram-Origin': 'owner', 'Engram-Tainted': p.memory.tainted, 'Engram-Signed-By': `owner ${key.name} (${key.keyid})`,
    },
  }
}

/** The blobs of the remote's history a sync takes, by id; one missing refuses the sync before anything changed. */
export async function readBlobs(store: Store, ids: string[]): Promise<Map<string, Buffer>> {
  const unique = [...new Set(ids)]
  const out = new Map<string, Buffer>()
  for await (const {index, data} of catBlobs(store, unique)) {
    if (!data) throw new EngramError('verification', `Object ${unique[index].slice(0, 10)} of the remote's history is missing; nothing was changed.`, {nextStep: 'sync again; if it persists, run `git fsck` on the remote'})
    out.set(unique[index], data)
  }
  return out
}

async function manifestsAt(store: Store, rel: string, commits: string[]): Promise<(string | undefined)[]> {
  const out: (string | undefined)[] = commits.map(() => undefined)
  for await (const {index, data} of catBlobs(store, commits.map((c) => `${c}:${rel}`))) out[index] = data?.toString('utf8')
  return out
}

/** Whether `blob` was ever `rel` in the history of `commit` (one history walk, path-limited). */
async function inHistory(store: Store, commit: string, rel: string, blob: string | null | undefined): Promise<boolean> {
  if (!blob) return false
  const hit = await gitRead(store.top, ['log', '-1', '--format=%H', `--find-object=${blob}`, '--end-of-options', commit, '--', store.gitPath(rel)])
  return hit.trim() !== ''
}
