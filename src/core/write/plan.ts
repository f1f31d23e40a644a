/**
 * The write path's plan: everything `writeMemory` decides before it touches git, as pure
 * functions of the write's arguments, the session record, the store's config and a
 * read-only view of the file the write is about. No I/O here, so every decision is
 * testable without a repository; write.ts runs the vote and applies the plan under the
 * store lock.
 */
import {writeRoute, type WriteRoute} from '../session/access.js'
import {checkTitle, decodeContent, parseExpires} from '../store/content.js'
import type {StoredMemory} from '../memory/curated.js'
import type {EngramConfig} from '../store/config.js'
import {badInput, refused} from '../store/errors.js'
import {AGENT_ORIGINS, ELEVATED_ORIGINS, MemoryFrontmatter, Origin, inheritedTaint, isOrigin, serializeMemory} from '../memory/memory.js'
import {validateMemoryPath} from '../store/paths.js'
import {Proposal, StoredFlag, StoredVote, entryFile, proposalDigest, serializeProposal} from '../review/proposal.js'
import {redact} from './redact/index.js'
import {candidateView, prepareText, type PreparedText} from './prepare.js'
import {formatScope, parseScope, scopeDir} from '../store/scope.js'
import type {SessionRecord} from '../session/sessions.js'
import {type PromptRecord, type StatedValue, claimText, unattestedFound, unattestedReason} from '../session/prompts.js'
import type {VoteResult, WriteCandidate} from './vote/types.js'

export interface WriteInput {
  scope: string
  path: string
  content: Buffer | string
  title?: string
  /** undefined: an update keeps the file's tags, a new file has none; [] clears them */
  tags?: string[]
  origin?: string
  /** the blob id this write changes, 'none' for a new file; default: the file as it is when the write starts */
  base?: string
  /**
   * when the memory expires: a future date (`2027-06-30`), a time to live (`90d`), or
   * `none`; undefined: an update keeps the file's expiry, a new file has none
   */
  expires?: string
}

/** The file at a path as the plan sees it: its blob id and parsed memory. */
export type StoredFile = Pick<StoredMemory, 'blob' | 'memory'>

/** What a plan may know of the store: its config, and the file at a scope and path now (read-only). */
export interface WriteView {
  config: EngramConfig
  read(scope: string, path: string): StoredFile | undefined
  /** the write's arguments already checked (checkWrite), when the caller did it first */
  checked?: CheckedWrite
  /** the write's text already redacted and read (prepare.ts), when a worker did it */
  prepared?: PreparedText
  /** what the user typed in the session (prompts.ts), asked only of a session whose prompts the harness records */
  prompts?: Pick<PromptRecord, 'has'>
  /** values (`exacts`) the lines an update keeps of the curated memory at its path state, so recalled rather than typed (known.ts) */
  recalled?: ReadonlySet<string>
}

export interface WritePlan {
  route: WriteRoute
  session: SessionRecord
  scope: string
  /** scope-relative */
  path: string
  /** store-relative */
  rel: string
  origin: Origin
  tainted: boolean
  taintReasons: string[]
  /** redacted; from here on only redacted text exists */
  title: string
  /** the tags as the file found now would get them (the vote's candidate) */
  tags: string[]
  /** the tags the write names, redacted; undefined: keep the file's (memoryFor) */
  givenTags?: string[]
  /** the expiry the write names (`YYYY-MM-DD`), null to drop one; undefined: keep the file's (memoryFor) */
  givenExpires?: string | null
  body: string
  redactions: Record<string, number>
  /** the blob the write is made against, null for "no file": any other file under the lock is a conflict */
  expectedBase: string | null
  /** when the write began: the memory's updated (and created, for a new file) */
  now: string
  /** what the vote decides on (proposal route only) */
  candidate?: WriteCandidate
  /** the burst window the vote counts recent writes in, in minutes (proposal route only) */
  burstWindowMinutes?: number
  /** a proposal made by a key, not an agent session (the dream job): its origin is backed by the entry's signature */
  signer?: Signer
  /** values a direct_chat write states that no prompt of its session holds (prompts.ts), as written */
  unattested?: string[]
  /** the same values as read (for the lookup of the curated memory at the path: known.ts) */
  unattestedFound?: StatedValue[]
}

/**
 * The maker of a signed proposal: the dream job (a dreamer key) or the owner. `planWrite`
 * is then given a stand-in session (id "", agent the key's name, assigned the target
 * scope, taint that of the evidence): the scope is the caller's to check, the origin is
 * the signer's, not a claim, and the entry carries no session.
 */
export interface Signer {
  origin: 'dream' | 'owner'
  name: string
  keyid: string
}

/** What the vote decided, as the entry stores it. */
export interface WriteDecision {
  passed: boolean
  dissent: boolean
  summary: string
  flags: StoredFlag[]
  votes: StoredVote[]
}

/**
 * Only the origins of the one table (memory.ts ORIGIN_TABLE) are accepted; "system" and
 * anything else are bad input, so no entry is ever stored with an origin the tool would
 * later call hand-edited. An elevated origin from an agent is refused or quarantined below.
 */
function checkOrigin(origin: string | undefined): Origin {
  const o = origin ?? 'direct_chat'
  // the value is not echoed: whatever was passed here may be a secret
  if (!isOrigin(o)) throw badInput('Unknown origin.', `use one of: ${AGENT_ORIGINS.join(', ')}`)
  return o
}

/** What a write's arguments are, once checked (checkWrite). */
export interface CheckedWrite {
  scope: string
  path: string
  route: WriteRoute
  origin: Origin
  raw: string
  title0: string | undefined
  givenExpires: ReturnType<typeof parseExpires> | undefined
}

/**
 * The checks of a write's arguments that cost little (scope, path, route, origin, content
 * size, title, expiry, base): bad input fails here, before any text is redacted or read.
 */
export function checkWrite(session: SessionRecord, input: WriteInput, config: EngramConfig, now: string, signer?: Signer): CheckedWrite {
  const scope = formatScope(parseScope(input.scope))
  const path = validateMemoryPath(input.path)
  // Paths and scopes are stored in clear (file names, commit subjects): they may not carry secrets.
  for (const [what, text] of [['path', path], ['scope', scope]] as const) {
    const kinds = Object.keys(redact(text, config.redaction.extra).redactions)
    if (kinds.length > 0) throw badInput(`The memory ${what} looks like it contains a secret (${kinds.join(', ')}).`, `choose a ${what} without credentials`)
  }
  const route = signer ? 'proposal' : writeRoute(session, scope, config)
  const origin = signer ? signer.origin : checkOrigin(input.origin)
  if (route === 'direct' && ELEVATED_ORIGINS.includes(origin)) {
    throw refused(`An agent cannot record origin "${origin}".`, 'the owner and the dreaming job write through their own keys')
  }
  const raw = decodeContent(input.content, config.max_body_bytes)
  const title0 = checkTitle(input.title)
  const givenExpires = input.expires === undefined ? undefined : parseExpires(input.expires, new Date(now))
  if (input.base !== undefined && input.base !== 'none' && !/^[0-9a-f]{40}$/.test(input.base)) {
    throw badInput(`--base-blob must be a 40-hex git blob id or "none".`, 'give the blob id `engram read <path> --json` shows (`blob`), or "none" for a new file')
  }
  return {scope, path, route, origin, raw, title0, givenExpires}
}

/**
 * Validate → redact → taint → (for a proposal) the vote's candidate (README.md, "The
 * write path"). Author, role, status and taint come from the session record, never from
 * the write's arguments or content. Bad input throws before the view is read.
 */
export function planWrite(session: SessionRecord, input: WriteInput, view: WriteView, now: string = new Date().toISOString(), signer?: Signer): WritePlan {
  const {config} = view
  const {scope, path, route, origin, raw, title0, givenExpires} = view.checked ?? checkWrite(session, input, config, now, signer)

  // Redaction first: from here on only redacted text exists in this process's outputs. A large
  // write's text comes prepared by a worker under the vote's budget (write.ts), from this raw text.
  const extra = config.redaction.extra
  const given = view.prepared
  if (given && given.raw !== raw) throw new Error('planWrite: the prepared text is not the text of this write')
  const prepared = given ?? prepareText(raw, title0, input.tags, extra, route !== 'direct')
  const redactions = {...prepared.bodyRedactions}
  for (const [k, n] of Object.entries(prepared.titleRedactions)) redactions[k] = (redactions[k] ?? 0) + n
  const {body, title, givenTags} = prepared

  const existing = view.read(scope, path)
  // an update that names no tags keeps the ones the file has (they were redacted when written)
  const tags = givenTags ?? [...(existing?.memory.frontmatter.tags ?? [])]
  const observedBase = existing?.blob ?? null
  const expectedBase = input.base === undefined ? observedBase : input.base === 'none' ? null : input.base

  // a signer's stand-in session carries the evidence's taint reasons as they are
  const inherited = signer ? {tainted: session.tainted, reasons: [...session.taint_reasons]} : inheritedTaint(session, origin)
  let {tainted} = inherited
  const taintReasons = inherited.reasons
  // A claim of the user's words, checked against what the user typed where the harness records
  // it: a value no prompt holds came from elsewhere, and the write is third-party text; a session
  // whose record is missing has no prompt on record (fail closed). A proposal's encoded blobs are
  // read as the vote reads them; the direct route (the session's own run: notes) reads the text
  // as written.
  const norm = route === 'direct' ? undefined : prepared.view ?? candidateView(prepared.rawView, body, extra)
  const found = !signer && origin === 'direct_chat' && session.prompts === 'recorded'
    ? unattestedFound(claimText(title, tags, body, path, norm?.decoded), view.prompts ?? {has: () => false}).filter((v) => !(view.recalled && v.exacts.every((e) => view.recalled!.has(e))))
    : []
  const unattested = found.map((v) => v.text)
  if (unattested.length > 0) {
    tainted = true
    taintReasons.push(unattestedReason(unattested))
  }
  const plan: WritePlan = {
    route, session, scope, path, rel: `${scopeDir(scope)}/${path}`, origin, tainted, taintReasons, title, tags, givenTags, body, redactions, expectedBase, now,
    ...(givenExpires !== undefined ? {givenExpires} : {}),
    ...(signer ? {signer} : {}),
    ...(unattested.length > 0 ? {unattested, unattestedFound: found} : {}),
  }
  if (route === 'direct') return plan

  // Proposal route: flags and the vote decide between the review queue and quarantine.
  if (!norm) throw new Error('planWrite: a proposal without its text read')
  plan.candidate = {
    scope, path, operation: existing ? 'update' : 'create', title, tags, body, normalised: norm,
    origin, author: session.agent,
    session: {id: session.id, agent: session.agent, tainted: session.tainted, taint_reasons: session.taint_reasons},
    redactions, bodyBytes: Buffer.byteLength(body), maxBodyBytes: config.max_body_bytes,
    // a signer's origin is backed by its key; an agent's elevated origin is only a claim
    claim: !signer && ELEVATED_ORIGINS.includes(origin) ? {origin} : undefined,
    ...(signer ? {signedOrigin: true} : {}),
    ...(unattested.length > 0 ? {unattested} : {}),
    baseBody: existing?.memory.body,
  }
  plan.burstWindowMinutes = config.vote.burst.window_minutes
  return plan
}

/** The vote's result as an entry stores it. */
export function decisionOf(outcome: VoteResult): WriteDecision {
  return {
    passed: outcome.passed, dissent: outcome.dissent, summary: outcome.summary,
    flags: outcome.flags.map((f) => ({flag: f.flag, reason: f.reason})),
    votes: outcome.votes.map((v) => ({validator: v.validator, verdict: v.verdict, confidence: v.confidence, reason: v.reason})),
  }
}

/**
 * The memory's frontmatter against the file found at apply time (`base`): its id and
 * created date carry over, its version grows by one; `newId` names a new memory.
 */
export function memoryFor(plan: WritePlan, base: StoredFile | undefined, proposalId: string | null, newId: () => string): MemoryFrontmatter {
  // like tags: an update that names no expiry keeps the file's; `none` (null) drops it
  const expires = plan.givenExpires === undefined ? base?.memory.frontmatter.expires : plan.givenExpires ?? undefined
  return {
    id: base?.memory.frontmatter.id ?? newId(),
    title: plan.title,
    scope: plan.scope,
    tags: plan.givenTags ?? [...(base?.memory.frontmatter.tags ?? [])],
    author: plan.session.agent,
    source_session: plan.signer ? null : plan.session.id,
    origin: plan.origin,
    tainted: plan.tainted,
    taint_reasons: plan.taintReasons,
    created: base?.memory.frontmatter.created ?? plan.now,
    updated: plan.now,
    ...(expires ? {expires} : {}),
    version: (base?.memory.frontmatter.version ?? 0) + 1,
    proposal: proposalId,
    reviewed_by: null,
    digest: null,
    signature: null,
  }
}

export interface PlannedCommit {
  subject: string
  trailers: Record<string, string | boolean | undefined>
  changes: {path: string; content: string}[]
}

/** A direct write's file and commit, against the file found under the lock. */
export function directCommit(plan: WritePlan, base: StoredFile | undefined, newId: () => string): PlannedCommit {
  const text = serializeMemory({frontmatter: memoryFor(plan, base, null, newId), body: plan.body})
  return {
    subject: `${base ? 'Update' : 'Add'} ${plan.scope}/${plan.path} from session ${plan.session.id}`,
    trailers: provenanceTrailers(plan.session, plan.origin, plan.tainted, {'Engram-Operation': 'write', 'Engram-Redactions': redactionSummary(plan.redactions)}),
    changes: [{path: plan.rel, content: text}],
  }
}

/**
 * The review-queue or quarantine entry a write is kept as, against the file found under
 * the lock: a proposal when the vote passed, a quarantine entry when it did not, and a
 * conflict (never dropped) when the file is not the one the write was made against.
 * `decision` is undefined for a direct write that lost a race: it is kept for review
 * without a vote.
 */
/** What a dream adds to an entry the write path makes: its evidence, the memories it deletes (a merge), a note, and the signature. */
export interface EntryExtras {
  evidence?: Proposal['evidence']
  removes?: Proposal['removes']
  note?: string
  /** the signature over proposalSignedPayload of the finished entry */
  sign?: (p: Proposal) => string
  /** more trailers for the entry's commit (the dream's fingerprint) */
  trailers?: Record<string, string>
}

export function entryFor(
  plan: WritePlan,
  base: StoredFile | undefined,
  decision: WriteDecision | undefined,
  id: string,
  created: string,
  newId: () => string,
  extras: EntryExtras = {},
): {proposal: Proposal; digest: string; commit: PlannedCommit; conflict: boolean} {
  const nowBase = base?.blob ?? null
  const conflict = nowBase !== plan.expectedBase
  const status = decision && !decision.passed ? 'quarantined' : 'pending'
  const memory = memoryFor(plan, base, id, newId)
  const proposal: Proposal = {
    id, status, kind: conflict ? 'conflict' : plan.signer?.origin === 'dream' ? 'dream' : 'write', operation: base ? 'update' : 'create', scope: plan.scope, path: plan.path,
    base: nowBase, author: plan.session.agent, session: plan.signer ? null : plan.session.id, origin: plan.origin, tainted: plan.tainted, taint_reasons: plan.taintReasons,
    created, flags: decision?.flags ?? [], redactions: plan.redactions, votes: decision?.votes ?? [],
    vote: decision ? {passed: decision.passed, dissent: decision.dissent, summary: decision.summary} : null, evidence: extras.evidence ?? [],
    note: conflict ? conflictNote(plan.expectedBase, nowBase) : extras.note ?? null,
    memory: decision ? withDissent(memory, decision.votes, decision.dissent) : memory, body: plan.body,
    removes: extras.removes ?? [], signature: null,
  }
  if (extras.sign) proposal.signature = extras.sign(proposal)
  const digest = proposalDigest(proposal)
  const where = `${plan.scope}/${plan.path}`
  const subject = !decision
    ? `Keep a conflicting write to ${where} as proposal ${id}`
    : status === 'pending' ? `Propose ${proposal.operation} of ${where} (${id})` : `Quarantine a write to ${where} (${id}): ${decision.summary}`
  // what was redacted is said by every commit that stores a write, a kept conflict too
  const trailers = provenanceTrailers(plan.session, plan.origin, plan.tainted, {
    'Engram-Operation': 'write', 'Engram-Proposal': id, 'Engram-Digest': digest,
    ...(decision ? {'Engram-Vote': decision.summary} : {}),
    'Engram-Redactions': redactionSummary(plan.redactions),
  })
  Object.assign(trailers, extras.trailers ?? {})
  if (plan.signer) (trailers as Record<string, string | boolean | undefined>)['Engram-Signed-By'] = `${plan.signer.origin === 'dream' ? 'dreamer' : 'owner'} ${plan.signer.name} (${plan.signer.keyid})`
  return {proposal, digest, conflict, commit: {subject, trailers, changes: [{path: entryFile(proposal), content: serializeProposal(proposal)}]}}
}

/**
 * A write that passed with dissent carries the dissent into its memory (covered by the
 * digest, so the reviewer sees it), and serving labels it.
 */
function withDissent(memory: MemoryFrontmatter, votes: StoredVote[], dissent: boolean): MemoryFrontmatter {
  if (!dissent) return memory
  const against = votes.filter((v) => v.verdict === 'reject').map((v) => `vote dissent: ${v.validator} (${v.confidence.toFixed(2)}) ${v.reason}`.slice(0, 200))
  return {...memory, taint_reasons: [...memory.taint_reasons, ...against]}
}

function conflictNote(expected: string | null, found: string | null): string {
  return `conflict: written against ${expected ?? 'no file'}, but the file is now ${found ?? 'absent'}`
}

export function provenanceTrailers(session: SessionRecord, origin: string, tainted: boolean, extra: Record<string, string | undefined> = {}) {
  return {
    'Engram-Author': session.agent,
    'Engram-Session': session.id,
    'Engram-Origin': origin,
    'Engram-Tainted': tainted,
    ...extra,
  }
}

function redactionSummary(r: Record<string, number>): string | undefined {
  const parts = Object.entries(r).map(([k, n]) => `${k}×${n}`)
  return parts.length > 0 ? parts.join(', ') : undefined
}

export {candidateView} from './prepare.js'
