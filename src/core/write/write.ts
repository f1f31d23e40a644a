import {commitChanges} from '../git/commit.js'
import {readStored} from '../memory/curated.js'
import {EngramError} from '../store/errors.js'
import {gitRead} from '../git/git.js'
import {newMemoryId, newProposalId, newQuarantineId} from '../store/ids.js'
import {withStoreLock} from '../store/lock.js'
import {StoredFlag, StoredVote} from '../review/proposal.js'
import {SessionRecord, loadSession, refuseEndedSession, writeSessionRecord} from '../session/sessions.js'
import type {Store} from '../store/store.js'
import {type PromptRecord, promptRecord} from '../session/prompts.js'
import {recalledFromMemory} from './known.js'
import {neighboursFor, type WarmLookup} from './neighbours.js'
import {CheckedWrite, EntryExtras, Signer, WriteDecision, WriteInput, WritePlan, type WriteView, checkWrite, decisionOf, directCommit, entryFor, planWrite} from './plan.js'
import {prepareWithin, runVoteWithin} from './vote/budget.js'
import type {PreparedText} from './prepare.js'

export type {WriteInput} from './plan.js'
export {provenanceTrailers} from './plan.js'

export interface WriteResult {
  status: 'committed' | 'pending' | 'quarantined'
  scope: string
  path: string
  /** proposal or quarantine id */
  proposal?: string
  digest?: string
  commit?: string
  flags: StoredFlag[]
  votes: StoredVote[]
  vote?: {passed: boolean; dissent: boolean; summary: string}
  redactions: Record<string, number>
  warnings: string[]
}

/**
 * The write path (README.md, "The write path"): plan (validate → redact → taint, plan.ts,
 * no I/O) → vote (proposals only) → apply under the store lock. Nothing is stored before
 * redaction; bad input stores nothing.
 */
export async function writeMemory(store: Store, session: SessionRecord, input: WriteInput, warm?: WarmLookup): Promise<WriteResult> {
  refuseEndedSession(session)
  const now = new Date().toISOString()
  // what the user typed, read from the private folder only when the plan asks (a direct_chat write stating a value)
  let record: PromptRecord | undefined
  const prompts = {has: (key: string) => (record ??= promptRecord(store.root, session.id)).has(key)}
  const view: WriteView = {config: store.config, read: (scope, path) => readStored(store, scope, path), prompts, ...(await prepareLarge(store, session, input, now))}
  let plan = planWrite(session, input, view, now)
  // a value the user did not type but the curated memory at the path states was recalled, not
  // brought in from outside: planned again with those very values as known (known.ts; review reads it again)
  if (plan.unattestedFound) {
    const recalled = new Set((await recalledFromMemory(store, plan.scope, plan.path, plan.unattestedFound, plan.body)).flatMap((v) => v.exacts))
    if (recalled.size > 0) plan = planWrite(session, input, {...view, recalled}, now)
  }
  const decision = plan.candidate ? await voteOn(store, plan, warm) : undefined
  return applyWrite(store, plan, decision)
}

/**
 * A proposal made by a key rather than an agent session (the dream job): the same plan —
 * validate, redact, flags — and the same vote as an agent's proposal, then an entry signed
 * by the signer (`extras.sign`). `taint` is that of the evidence the proposal rests on.
 * The caller decides the scope may take it (dream.ts); a signer never commits curated memory.
 */
export async function writeSignedProposal(store: Store, signer: Signer, taint: {tainted: boolean; reasons: string[]}, input: WriteInput, extras: EntryExtras): Promise<WriteResult> {
  const now = new Date().toISOString()
  const standIn: SessionRecord = {
    id: '', agent: signer.name, assigned: input.scope, reads: [], tainted: taint.tainted, taint_reasons: taint.reasons, created: now, updated: now, proof: '',
  }
  const plan = planWrite(standIn, input, {config: store.config, read: (scope, path) => readStored(store, scope, path), ...(await prepareLarge(store, standIn, input, now, signer))}, now, signer)
  return applyWrite(store, plan, await voteOn(store, plan), extras)
}

/**
 * The write's arguments checked (checkWrite: bad input fails with its own message and costs no
 * worker), and a large write's text redacted and read in a worker under the vote's budget
 * (vote/budget.ts; none for a small one, which planWrite prepares itself): both for planWrite's view.
 */
async function prepareLarge(store: Store, session: SessionRecord, input: WriteInput, now: string, signer?: Signer): Promise<{checked: CheckedWrite; prepared?: PreparedText}> {
  const checked = checkWrite(session, input, store.config, now, signer)
  const prepared = await prepareWithin(checked.raw, checked.title0, input.tags, store.config.redaction.extra, store.config.vote.budget_ms)
  return prepared ? {checked, prepared} : {checked}
}

/**
 * The vote on a proposal's candidate, with this store's neighbours and recent writes. A
 * long-lived caller (`engram mcp`) passes its loaded index and serving gate (`warm`).
 */
async function voteOn(store: Store, plan: WritePlan, warm?: WarmLookup): Promise<WriteDecision> {
  const {session, scope, path} = plan
  const recent = await recentWriteCounts(store, session, plan.burstWindowMinutes!)
  const outcome = await runVoteWithin(plan.candidate!, {
    neighbours: (text: string, limit: number) => neighboursFor(store, session, scope, path, text, limit, warm),
    recentWrites: recent,
    config: store.config.vote,
    cwd: store.root,
    ...(warm?.reader ? {reader: warm.reader} : {}),
  }, store.config.vote.budget_ms)
  return decisionOf(outcome)
}

/**
 * Apply a plan under the store lock, against the file as it is then: a direct write that
 * still finds the file it was made against is committed; everything else is kept as an
 * entry (queue, quarantine, or the conflict a race left: never dropped). One commit.
 */
async function applyWrite(store: Store, plan: WritePlan, decision: WriteDecision | undefined, extras: EntryExtras = {}): Promise<WriteResult> {
  const warnings: string[] = []
  const {scope, path, redactions} = plan
  return withStoreLock(store, async () => {
    const nowFile = readStored(store, scope, path)
    const race = (nowFile?.blob ?? null) !== plan.expectedBase
    if (plan.route === 'direct' && !race) {
      const commit = await commitChanges(store, directCommit(plan, nowFile, newMemoryId), {onWarning: (m) => warnings.push(m)})
      return {status: 'committed', scope, path, commit, flags: [], votes: [], redactions, warnings} satisfies WriteResult
    }
    const id = decision && !decision.passed ? newQuarantineId() : newProposalId()
    const entry = entryFor(plan, nowFile, decision, id, new Date().toISOString(), newMemoryId, extras)
    const status = entry.proposal.status
    const commit = await commitChanges(store, entry.commit, {onWarning: (m) => warnings.push(m)})
    // a signer has no session record to escalate
    if (status === 'quarantined' && !plan.signer) await escalateIfRepeated(store, plan.session, warnings)
    const result: WriteResult = decision
      ? {status, scope, path, proposal: id, digest: entry.digest, commit, flags: decision.flags, votes: decision.votes, vote: entry.proposal.vote ?? undefined, redactions, warnings}
      : {status, scope, path, proposal: id, digest: entry.digest, commit, flags: [], votes: [], redactions, warnings}
    if (entry.conflict) {
      throw new EngramError('conflict', `${scope}/${path} changed since this write began; your content is kept as proposal ${id}.`, {
        nextStep: decision
          ? `the owner can review it with \`engram review show ${id}\``
          : `read the current version with \`engram read ${path} --scope ${scope}\`, then review ${id}`,
        data: decision ? {...result} as unknown as Record<string, unknown> : {status, scope, path, proposal: id, digest: entry.digest},
      })
    }
    return result
  }, {onRecover: (m) => warnings.push(m)})
}

/**
 * Writes by this session and by its author within the window, counted from the store's
 * own commit trailers — so bursts are seen across processes and restarts.
 */
export async function recentWriteCounts(store: Store, session: SessionRecord, windowMinutes: number): Promise<{session: number; author: number}> {
  const since = new Date(Date.now() - windowMinutes * 60_000).toISOString()
  const out = await gitRead(store.top, [
    'log', `--since=${since}`, '--format=%(trailers:key=Engram-Operation,valueonly,separator=%x2C)%x09%(trailers:key=Engram-Session,valueonly,separator=%x2C)%x09%(trailers:key=Engram-Author,valueonly,separator=%x2C)',
  ], {allowFail: true})
  let s = 0
  let a = 0
  for (const line of out.split('\n')) {
    const [op, sess, author] = line.split('\t')
    if (op !== 'write') continue
    if (sess === session.id) s++
    if (author === session.agent) a++
  }
  return {session: s, author: a}
}

/**
 * Repeated rejections escalate: the session is tainted with the reason, and `engram
 * status` shows it. Counted from the store's own commit trailers (quarantine ids start
 * with q-), and the record is reloaded under the lock so no taint reason is lost.
 */
async function escalateIfRepeated(store: Store, session: SessionRecord, warnings: string[]): Promise<void> {
  const fresh = await loadSession(store, session.id)
  if (fresh.taint_reasons.some((r) => r.startsWith('escalated:'))) return
  const out = await gitRead(store.top, [
    'log', '--format=%(trailers:key=Engram-Session,valueonly,separator=%x2C)%x09%(trailers:key=Engram-Proposal,valueonly,separator=%x2C)',
  ], {allowFail: true})
  const mine = out.split('\n').filter((l) => {
    const [sess, id] = l.split('\t')
    return sess === session.id && id?.startsWith('q-')
  }).length
  if (mine < store.config.escalate_after) return
  const reason = `escalated: ${mine} writes quarantined`
  const next = {...fresh, tainted: true, taint_reasons: [...fresh.taint_reasons, reason], updated: new Date().toISOString()}
  await writeSessionRecord(store, next, {subject: `Escalate session ${session.id}`, body: reason})
  warnings.push(`session ${session.id} escalated after ${mine} quarantined writes`)
}
