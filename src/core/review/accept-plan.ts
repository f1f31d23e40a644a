/**
 * What an accept decides before it signs anything, as functions of the proposal, the
 * reviewed digest and a read-only view of the store (STANDARD R12): the digest still
 * matches, every recomputed fact agrees (recheck.ts), the file has not moved, the scope's
 * manifest verifies and is not rolled back, and so what the new memory and manifest are.
 * review.ts gathers the view under the store lock, then signs and commits the plan.
 */
import {EngramError, badInput, verificationFailed} from '../store/errors.js'
import {describeFindings, type Recheck} from './recheck.js'
import type {Keyring} from '../trust/keys.js'
import {Manifest, verifyManifest} from '../trust/manifest.js'
import type {MemoryFile} from '../memory/memory.js'
import {Proposal, QUARANTINE_DIR, entryFile, proposalDigest} from './proposal.js'
import {requireReviewedDigest} from './digest.js'
import {formatScope, parseScope} from '../store/scope.js'

/** What an accept reads of the store, and nothing else. */
export interface AcceptView {
  keyring: Keyring
  /** the entry's facts as engram recomputes them from history (recheck.ts) */
  recheck(p: Proposal): Promise<Recheck>
  /** the store-relative path of a memory (refusing one through a symbolic link) */
  rel(scope: string, path: string): string
  /** the blob id of the file at a memory's path now */
  read(scope: string, path: string): {blob: string} | undefined
  /** the scope's manifest in the work tree */
  manifest(scope: string): Manifest | undefined
  /** the highest serial of the scope's manifest this machine has seen */
  seenSerial(scope: string): number
}

/** A signed change to plan: a memory (or its deletion) and its scope's next manifest. */
export interface SignedChangePlan {
  scope: string
  /** store-relative */
  rel: string
  /** the memory to sign, or null for a deletion */
  memory: MemoryFile | null
  /** other files of the scope the same change deletes (a merge), store-relative */
  removes: string[]
  /** false in a run: scratchpad, which has no manifest and no signatures */
  manifest: boolean
  /** the manifest the change builds on, verified; undefined when the scope has none yet */
  prev: Manifest | undefined
  /** the new manifest's serial: above the previous one and above any seen (R13) */
  serial: number
}

export interface AcceptPlan {
  proposal: Proposal
  /** the digest of the proposal as it is now (it starts with the reviewed one) */
  digest: string
  change: SignedChangePlan
  subject: string
  trailers: Record<string, string | boolean | undefined>
  /** the entry file the commit removes */
  entry: string
}

/**
 * The digest of the proposal now, when it starts with the reviewed one (at least 16 hex
 * characters, checkDigestArg); anything else is refused and nothing of either is printed.
 */
export function matchReviewed(p: Proposal, reviewed: string): string {
  const now = proposalDigest(p)
  requireReviewedDigest(now, reviewed, `Proposal ${p.id}`, `review it again with \`engram review show ${p.id}\` and accept with the digest shown there`)
  return now
}

/**
 * Any fact that disagrees with what engram recomputed refuses (exit 3), naming each fact;
 * a quarantined write moved into the queue by hand says how to put it back.
 */
export function refuseDisagreement(p: Proposal, check: Recheck): void {
  if (check.findings.length === 0) return
  const data = {recheck: check.findings}
  if (check.quarantinedAs) {
    throw new EngramError('refused', `Proposal ${p.id} is a quarantined write (entry ${check.quarantinedAs}) moved into the review queue by hand; nothing written.`, {
      nextStep: `put it back (\`git checkout -- ${QUARANTINE_DIR}/${check.quarantinedAs}.md\` and remove ${entryFile(p)}), look at it with \`engram quarantine show ${check.quarantinedAs}\`, and release it with \`engram quarantine release\` if it should be reviewed`,
      data,
    })
  }
  throw new EngramError('refused', `Proposal ${p.id} disagrees with what engram recomputed, so what review shows of it is not true: ${describeFindings(check.findings)}. Nothing written.`, {
    nextStep: `reject it with \`engram review reject ${p.id} --reason "edited after it was written"\`; \`engram review show ${p.id}\` marks each fact`,
    data,
  })
}

/**
 * A memory (or its deletion) to sign into a scope, on the scope's manifest: refusing to
 * build on a manifest that does not verify (that would launder a forgery) or that is older
 * than one seen (re-signing it above the serial it lost to would make the rollback stick).
 */
export function planSignedChange(view: Pick<AcceptView, 'keyring' | 'manifest' | 'seenSerial'>, scope: string, rel: string, memory: MemoryFile | null, removes: string[] = []): SignedChangePlan {
  // a run: scratchpad is never signed: clearing one removes its files and nothing else
  if (scope.startsWith('run:')) return {scope, rel, memory, removes, manifest: false, prev: undefined, serial: 0}
  const prev = view.manifest(scope)
  if (prev && !verifyManifest(view.keyring, prev).ok) {
    throw verificationFailed(`The manifest of ${scope} does not verify; refusing to build on it.`, 'run `engram verify` and restore the manifest from git')
  }
  const seen = view.seenSerial(scope)
  if (prev && prev.serial < seen) {
    throw verificationFailed(`The manifest of ${scope} has serial ${prev.serial}, older than serial ${seen} seen before (rolled back); refusing to build on it.`, 'run `engram verify`, which says how to fix it')
  }
  // above any owner-signed serial seen, so that re-signing clears a stray high one (R13)
  return {scope, rel, memory, removes, manifest: true, prev, serial: Math.max((prev?.serial ?? 0) + 1, seen + 1)}
}

/**
 * Accept exactly what was reviewed: in this order, the digest, the recomputed facts, the
 * proposal's scope, staleness ("the file moved since the proposal was made"), the
 * manifest; then the memory with its reviewer and digest, and the commit's provenance,
 * taken from the digest-covered memory, never from the proposal's other fields.
 */
export async function planAccept(p: Proposal, reviewed: string, reviewer: {name: string; keyid: string}, view: AcceptView): Promise<AcceptPlan> {
  const digest = matchReviewed(p, reviewed)
  refuseDisagreement(p, await view.recheck(p))
  const scope = formatScope(parseScope(p.scope))
  if (p.memory.scope !== scope) throw badInput(`Proposal ${p.id} names scope ${p.scope} but its memory says ${p.memory.scope}; reject it.`)
  const rel = view.rel(scope, p.path)
  const stale = () => new EngramError('stale-digest', `Proposal ${p.id} is stale: the file changed since this was proposed; re-review.`, {
    nextStep: `compare with \`engram review show ${p.id}\`; reject it, or ask for a new write against the current version`,
  })
  if ((view.read(scope, p.path)?.blob ?? null) !== p.base) throw stale()
  if (scope.startsWith('run:') && p.operation !== 'delete') throw badInput(`Proposal ${p.id} writes to a run: scratchpad, which takes no proposals; reject it.`)
  // a merge's other files: each in this scope (a scope-relative path, checked), each still the version proposed
  const removes = p.removes.map((r) => {
    const at = view.rel(scope, r.path)
    if (view.read(scope, r.path)?.blob !== r.base) throw stale()
    return at
  })
  if (new Set([rel, ...removes]).size !== removes.length + 1) throw badInput(`Proposal ${p.id} names one file twice; reject it.`)
  const memory: MemoryFile | null =
    p.operation === 'delete' ? null : {frontmatter: {...p.memory, reviewed_by: reviewer.name, digest, signature: null}, body: p.body}
  return {
    proposal: p,
    digest,
    change: planSignedChange(view, scope, rel, memory, removes),
    subject: removes.length > 0
      ? `Accept ${p.operation} of ${scope}/${p.path}, deleting ${removes.length} other memor${removes.length === 1 ? 'y' : 'ies'} (proposal ${p.id})`
      : `Accept ${p.operation} of ${scope}/${p.path} (proposal ${p.id})`,
    trailers: {
      'Engram-Operation': 'accept', 'Engram-Proposal': p.id, 'Engram-Digest': digest,
      'Engram-Author': p.memory.author, 'Engram-Session': p.memory.source_session ?? undefined,
      'Engram-Origin': p.memory.origin, 'Engram-Tainted': p.memory.tainted, 'Engram-Reviewed-By': `${reviewer.name} (${reviewer.keyid})`,
    },
    entry: entryFile(p),
  }
}
