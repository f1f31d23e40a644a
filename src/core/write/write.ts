import {writeRoute} from '../session/access.js'
import {commitChanges} from '../git/commit.js'
import {checkTitle, decodeContent} from '../store/content.js'
import {readStored} from '../memory/curated.js'
import {EngramError, badInput, refused} from '../store/errors.js'
import {gitRead} from '../git/git.js'
import {newMemoryId, newProposalId, newQuarantineId} from '../store/ids.js'
import {withStoreLock} from '../store/lock.js'
import {AGENT_ORIGINS, ELEVATED_ORIGINS, INDIRECT_ORIGINS, MemoryFrontmatter, Origin, deriveTitle, isOrigin, serializeMemory} from '../memory/memory.js'
import {validateMemoryPath} from '../store/paths.js'
import {Proposal, StoredFlag, StoredVote, entryFile, proposalDigest, serializeProposal} from '../review/proposal.js'
import {redact} from './redact/index.js'
import {normalise, stripInvisible} from './normalise.js'
import {formatScope, parseScope, scopeDir} from '../store/scope.js'
import {SessionRecord, loadSession, writeSessionRecord} from '../session/sessions.js'
import type {Store} from '../store/store.js'
import {neighboursFor} from './neighbours.js'
import {runVote} from './vote/index.js'

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
}

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

/**
 * The write path (README.md, "The write path"): validate → redact → flag → vote → route. Author, role,
 * status and taint come from the session record, never from the write's arguments or
 * content. Nothing is stored before redaction; bad input stores nothing.
 */
export async function writeMemory(store: Store, session: SessionRecord, input: WriteInput): Promise<WriteResult> {
  const scope = formatScope(parseScope(input.scope))
  const path = validateMemoryPath(input.path)
  // Paths and scopes are stored in clear (file names, commit subjects): they may not carry secrets.
  for (const [what, text] of [['path', path], ['scope', scope]] as const) {
    const kinds = Object.keys(redact(text, store.config.redaction.extra).redactions)
    if (kinds.length > 0) throw badInput(`The memory ${what} looks like it contains a secret (${kinds.join(', ')}).`, `choose a ${what} without credentials`)
  }
  const route = writeRoute(session, scope, store.config)
  const origin = checkOrigin(input.origin)
  if (route === 'direct' && ELEVATED_ORIGINS.includes(origin)) {
    throw refused(`An agent cannot record origin "${origin}".`, 'the owner and the dreaming job write through their own keys')
  }
  const raw = decodeContent(input.content, store.config.max_body_bytes)
  const title0 = checkTitle(input.title)
  if (input.base !== undefined && input.base !== 'none' && !/^[0-9a-f]{40}$/.test(input.base)) {
    throw badInput(`--base-blob must be a 40-hex git blob id or "none".`, 'give the blob id `engram read <path> --json` shows (`blob`), or "none" for a new file')
  }

  // Redaction first: from here on only redacted text exists in this process's outputs.
  const extra = store.config.redaction.extra
  // Invisible characters are dropped before redaction (a zero-width space must not hide a
  // secret) and before storage; the flags still report that they were there.
  const hiddenIn = normalise(raw).hidden
  const red = redact(stripInvisible(raw), extra)
  const titleRed = redact(title0 ?? deriveTitle(red.text), extra)
  const redactions = {...red.redactions}
  for (const [k, n] of Object.entries(titleRed.redactions)) redactions[k] = (redactions[k] ?? 0) + n
  const body = red.text
  const title = titleRed.text
  const given = input.tags?.map((t) => redact(t, extra).text)

  const existing = readStored(store, scope, path)
  // an update that names no tags keeps the ones the file has (they were redacted when written)
  const tagsOf = (base: typeof existing): string[] => given ?? [...(base?.memory.frontmatter.tags ?? [])]
  const tags = tagsOf(existing)
  const observedBase = existing?.blob ?? null
  const expectedBase = input.base === undefined ? observedBase : input.base === 'none' ? null : input.base
  const warnings: string[] = []

  const tainted = session.tainted || (INDIRECT_ORIGINS as readonly string[]).includes(origin)
  const taintReasons = [
    ...session.taint_reasons.map((r) => `session: ${r}`),
    ...((INDIRECT_ORIGINS as readonly string[]).includes(origin) ? [`origin: ${origin}`] : []),
  ]
  const now = new Date().toISOString()
  const memoryFor = (base: typeof existing, proposalId: string | null): MemoryFrontmatter => ({
    id: base?.memory.frontmatter.id ?? newMemoryId(),
    title,
    scope,
    tags: tagsOf(base),
    author: session.agent,
    source_session: session.id,
    origin,
    tainted,
    taint_reasons: taintReasons,
    created: base?.memory.frontmatter.created ?? now,
    updated: now,
    version: (base?.memory.frontmatter.version ?? 0) + 1,
    proposal: proposalId,
    reviewed_by: null,
    digest: null,
    signature: null,
  })

  if (route === 'direct') {
    return withStoreLock(store, async () => {
      const now = readStored(store, scope, path)
      const rel = `${scopeDir(scope)}/${path}`
      if ((now?.blob ?? null) !== expectedBase) {
        return storeConflict(store, session, {scope, path, origin, body, redactions, tainted, taintReasons, memory: memoryFor(now, null), base: now?.blob ?? null, expectedBase})
      }
      const text = serializeMemory({frontmatter: memoryFor(now, null), body})
      const commit = await commitChanges(store, {
        subject: `${now ? 'Update' : 'Add'} ${scope}/${path} from session ${session.id}`,
        trailers: provenanceTrailers(session, origin, tainted, {'Engram-Operation': 'write', 'Engram-Redactions': redactionSummary(redactions)}),
        changes: [{path: rel, content: text}],
      }, {onWarning: (m) => warnings.push(m)})
      return {status: 'committed', scope, path, commit, flags: [], votes: [], redactions, warnings} satisfies WriteResult
    }, {onRecover: (m) => warnings.push(m)})
  }

  // Proposal route: flags and the vote decide between the review queue and quarantine.
  const norm0 = normalise(body)
  const norm = {...norm0, hidden: [...new Set([...hiddenIn, ...norm0.hidden])]}
  const candidate = {
    scope, path, operation: existing ? ('update' as const) : ('create' as const), title, tags, body, normalised: norm,
    origin, author: session.agent,
    session: {id: session.id, agent: session.agent, tainted: session.tainted, taint_reasons: session.taint_reasons},
    redactions, bodyBytes: Buffer.byteLength(body), maxBodyBytes: store.config.max_body_bytes,
    claim: ELEVATED_ORIGINS.includes(origin) ? {origin} : undefined,
    baseBody: existing?.memory.body,
  }
  const recent = await recentWriteCounts(store, session, store.config.vote.burst.window_minutes)
  const outcome = await runVote(candidate, {
    neighbours: (text: string, limit: number) => neighboursFor(store, session, scope, path, text, limit),
    recentWrites: recent,
    config: store.config.vote,
    cwd: store.root,
  })
  const flags: StoredFlag[] = outcome.flags.map((f) => ({flag: f.flag, reason: f.reason}))
  const votes: StoredVote[] = outcome.votes.map((v) => ({validator: v.validator, verdict: v.verdict, confidence: v.confidence, reason: v.reason}))
  const vote = {passed: outcome.passed, dissent: outcome.dissent, summary: outcome.summary}

  return withStoreLock(store, async () => {
    const nowFile = readStored(store, scope, path)
    const nowBase = nowFile?.blob ?? null
    const conflict = nowBase !== expectedBase
    const status = outcome.passed ? 'pending' : 'quarantined'
    const id = status === 'pending' ? newProposalId() : newQuarantineId()
    const proposal: Proposal = {
      id, status, kind: conflict ? 'conflict' : 'write', operation: nowFile ? 'update' : 'create', scope, path,
      base: nowBase, author: session.agent, session: session.id, origin, tainted, taint_reasons: taintReasons, created: new Date().toISOString(),
      flags, redactions, votes, vote, evidence: [],
      note: conflict ? conflictNote(expectedBase, nowBase) : null,
      memory: withDissent(memoryFor(nowFile, id), votes, outcome.dissent), body,
    }
    const file = entryFile(proposal)
    const digest = proposalDigest(proposal)
    const subject = status === 'pending'
      ? `Propose ${proposal.operation} of ${scope}/${path} (${id})`
      : `Quarantine a write to ${scope}/${path} (${id}): ${outcome.summary}`
    const commit = await commitChanges(store, {
      subject,
      trailers: provenanceTrailers(session, origin, tainted, {
        'Engram-Operation': 'write', 'Engram-Proposal': id, 'Engram-Digest': digest, 'Engram-Vote': vote.summary,
        'Engram-Redactions': redactionSummary(redactions),
      }),
      changes: [{path: file, content: serializeProposal(proposal)}],
    }, {onWarning: (m) => warnings.push(m)})
    if (status === 'quarantined') await escalateIfRepeated(store, session, warnings)
    const result: WriteResult = {status, scope, path, proposal: id, digest, commit, flags, votes, vote, redactions, warnings}
    if (conflict) {
      throw new EngramError('conflict', `${scope}/${path} changed since this write began; your content is kept as proposal ${id}.`, {
        nextStep: `the owner can review it with \`engram review show ${id}\``,
        data: {...result} as unknown as Record<string, unknown>,
      })
    }
    return result
  }, {onRecover: (m) => warnings.push(m)})
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

async function storeConflict(
  store: Store,
  session: SessionRecord,
  c: {scope: string; path: string; origin: string; body: string; redactions: Record<string, number>; tainted: boolean; taintReasons: string[]; memory: MemoryFrontmatter; base: string | null; expectedBase: string | null},
): Promise<never> {
  // The loser of a race is kept as a proposal (never dropped), against the file as it is now.
  const id = newProposalId()
  const proposal: Proposal = {
    id, status: 'pending', kind: 'conflict', operation: c.base ? 'update' : 'create', scope: c.scope, path: c.path, base: c.base,
    author: session.agent, session: session.id, origin: c.origin, tainted: c.tainted, taint_reasons: c.taintReasons,
    created: new Date().toISOString(), flags: [], redactions: c.redactions, votes: [], vote: null, evidence: [],
    note: conflictNote(c.expectedBase, c.base), memory: {...c.memory, proposal: id}, body: c.body,
  }
  const file = entryFile(proposal)
  const digest = proposalDigest(proposal)
  await commitChanges(store, {
    subject: `Keep a conflicting write to ${c.scope}/${c.path} as proposal ${id}`,
    trailers: provenanceTrailers(session, c.origin, c.tainted, {'Engram-Operation': 'write', 'Engram-Proposal': id, 'Engram-Digest': digest}),
    changes: [{path: file, content: serializeProposal(proposal)}],
  })
  throw new EngramError('conflict', `${c.scope}/${c.path} changed since this write began; your content is kept as proposal ${id}.`, {
    nextStep: `read the current version with \`engram read ${c.path} --scope ${c.scope}\`, then review ${id}`,
    data: {status: 'pending', scope: c.scope, path: c.path, proposal: id, digest},
  })
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
