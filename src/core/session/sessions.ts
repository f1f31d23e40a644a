import {readdirSync} from 'node:fs'

import {commitChanges} from '../git/commit.js'
import {badInput, notFound, refused} from '../store/errors.js'
import {catBlobs, gitRead} from '../git/git.js'
import {changesSince} from '../git/loose.js'
import {readHeadFromFiles} from '../index/head.js'
import {readStoreCache, writeStoreCache} from '../store/cachefile.js'
import {newSessionId} from '../store/ids.js'
import {withStoreLock} from '../store/lock.js'
import {mac, sameMac, sessionSecret, sessionToken} from '../store/private.js'
import {clipRedacted, redactText} from '../write/redact/index.js'
import {pendingTaint} from './pending.js'
import type {LockOptions} from '../store/lock.js'
import {formatScope, parseScope, printable} from '../store/scope.js'
import type {Store} from '../store/store.js'

export interface SessionRecord {
  id: string
  agent: string
  /** the scope this session may propose writes to */
  assigned: string
  /** extra scopes it may read (org or project: only; never another tenant or run) */
  reads: string[]
  tainted: boolean
  taint_reasons: string[]
  created: string
  updated: string
  /** engram's MAC of the identity fields (recordProof), made by `session start` with the secret outside the store */
  proof: string
  /** when the harness closed the session (`engram hook session-end`): its writes are refused from then on; absent while open */
  ended?: string
  /**
   * `recorded`: the harness records the values of every prompt the user submits (prompts.ts),
   * so a write claiming direct_chat is checked against them. Set at start, covered by the proof.
   */
  prompts?: 'recorded'
}

const SESSION_ID_RE = /^s-[0-9a-z]{4,32}$/
const AGENT_RE = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/

export const sessionFile = (id: string) => `.engram/sessions/${id}.json`

export function validateSessionId(id: string): string {
  if (!SESSION_ID_RE.test(id)) throw badInput(`"${printable(id)}" is not a session id.`, 'session ids look like s-7f3kq2ab; see `engram session list`')
  return id
}

export function parseRecord(text: string, label: string): SessionRecord {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw badInput(`${label} is not valid JSON.`, 'restore it with `git checkout -- <file>`')
  }
  const r: Record<string, unknown> = parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {}
  const {id, agent, assigned, tainted, taint_reasons: reasons} = r
  if (typeof id !== 'string' || typeof agent !== 'string' || typeof assigned !== 'string' || typeof tainted !== 'boolean' || !Array.isArray(reasons)) {
    throw badInput(`${label} is not a session record.`, 'restore it with `git checkout -- <file>`')
  }
  return {
    id,
    agent,
    assigned,
    reads: Array.isArray(r.reads) ? r.reads.map(String) : [],
    tainted,
    taint_reasons: reasons.map(String),
    created: String(r.created ?? ''),
    updated: String(r.updated ?? ''),
    proof: typeof r.proof === 'string' ? r.proof : '',
    ...(typeof r.ended === 'string' && r.ended ? {ended: r.ended} : {}),
    ...(r.prompts === 'recorded' ? {prompts: 'recorded' as const} : {}),
  }
}

/** What a session record's proof covers: everything that decides what the session may do. */
export function recordProof(secret: Buffer, r: SessionRecord): string {
  // A record made before prompts were recorded has the proof it had. One that records them is
  // proved under a label of its own: parts are joined by NUL, so a part that adds `\0prompts:…`
  // to `created` must not make a record without the mark carry the proof of one with it.
  const label = r.prompts ? `engram-session-record/prompts:${r.prompts}` : 'engram-session-record'
  return mac(secret, label, r.id, r.agent, r.assigned, r.reads.join(','), r.created)
}

/** One answer for a session that does not exist and one this caller may not see. */
const unknownSession = (id: string) =>
  notFound(`Unknown session ${id} in this store.`, 'start one with `engram session start --agent NAME --assigned SCOPE`')

/**
 * A record's committed versions (`<commit>:<path>`, which never change), read once per
 * process: an MCP server loads its session at every tool call, and each read was a git
 * process.
 */
const versionMemo = new Map<string, Buffer>()
const VERSION_MEMO_MAX = 4096

async function recordVersions(store: Store, revs: string[]): Promise<(Buffer | null)[]> {
  const key = (rev: string) => `${store.top}\0${rev}`
  const missing = revs.filter((r) => !versionMemo.has(key(r)))
  if (missing.length > 0) {
    if (versionMemo.size + missing.length > VERSION_MEMO_MAX) versionMemo.clear()
    const read = new Map<string, Buffer | null>()
    for await (const {index, data} of catBlobs(store, missing)) {
      read.set(missing[index], data)
      // only what was found: an object missing now may be fetched later
      if (data) versionMemo.set(key(missing[index]), data)
    }
    return revs.map((r) => versionMemo.get(key(r)) ?? read.get(r) ?? null)
  }
  return revs.map((r) => versionMemo.get(key(r)) ?? null)
}

/** Session records whose commit lists a cache holds (the most recent ones). */
const RECORD_CACHE_ENTRIES = 64

/**
 * The commits that changed a session record, newest first (`git log -- <record>`). Kept per
 * record in a cache beside the private keys (cachefile.ts), with the HEAD it was made at:
 * when HEAD has only moved on since, the commits in between are read from loose objects
 * (loose.ts changesSince) instead of walking the whole history again; anything else walks it.
 */
async function recordCommits(store: Store, path: string): Promise<string[]> {
  const head = readHeadFromFiles(store.top)
  const cache = head === undefined ? undefined : readStoreCache('session-records', store.root)
  const entries = (cache?.entries && typeof cache.entries === 'object' ? cache.entries : {}) as Record<string, {head?: unknown; commits?: unknown}>
  const entry = Object.hasOwn(entries, path) ? entries[path] : undefined
  let commits: string[] | undefined
  if (head !== undefined && entry && typeof entry.head === 'string' && Array.isArray(entry.commits) && entry.commits.every((c) => typeof c === 'string')) {
    const since = entry.head === head ? [] : changesSince(store.top, head, entry.head, [path])
    if (since) commits = [...since, ...(entry.commits as string[])]
  }
  // at the HEAD read above, so the list is exactly the one the cache records
  // --full-history: the default simplification follows only a TREESAME parent of a merge,
  // so a version on the other side (a taint, say) would never be read
  commits ??= (await gitRead(store.top, ['log', '--full-history', '--format=%H', '--end-of-options', head ?? 'HEAD', '--', path], {allowFail: true})).split('\n').filter(Boolean)
  if (head !== undefined && entry?.head !== head) {
    const kept = Object.entries(entries).filter(([p]) => p !== path).slice(-(RECORD_CACHE_ENTRIES - 1))
    writeStoreCache('session-records', store.root, {entries: Object.fromEntries([...kept, [path, {head, commits}]])})
  }
  return commits
}

/**
 * Load a session. Taint only goes up: the record is read from the working tree and from
 * every committed version of it, and taint is the union of them all — so an agent that
 * edits its own record to clear taint, even if it commits the edit with git, gains
 * nothing. Identity (agent, assigned, reads) comes from the first committed version, the
 * one the harness made.
 */
export async function loadSession(store: Store, id: string): Promise<SessionRecord> {
  validateSessionId(id)
  const rel = sessionFile(id)
  const path = store.gitPath(rel)
  const work = store.readText(rel)
  const commits = await recordCommits(store, path)
  const versions: SessionRecord[] = []
  for (const data of await recordVersions(store, commits.map((c) => `${c}:${path}`))) {
    if (data) versions.push(parseRecord(data.toString('utf8'), rel))
  }
  if (work !== undefined) versions.unshift(parseRecord(work, rel))
  if (versions.length === 0) throw unknownSession(id)
  // A record only in the work tree, or one engram's secret did not sign, was written by
  // someone else (the agent can write the store): it is no session at all.
  if (commits.length === 0) {
    throw refused(`Session ${id} was not started by engram: its record is not committed.`, 'sessions are started by the harness with `engram session start`')
  }
  // git log lists newest first: the last committed version is the harness's original
  const original = versions[versions.length - 1]
  if (!sameMac(original.proof, recordProof(sessionSecret(false), original))) {
    throw refused(`Session ${id} was not started by engram: its record does not carry engram's proof.`, 'sessions are started by the harness with `engram session start`')
  }
  const latest = versions[0]
  // a taint the hook could not record in the store waits in the private folder: it counts
  // all the same (pending.ts), so the session's writes are tainted from the moment it happened
  const pending = pendingTaint(store.root, id) ?? []
  // like taint, an end only goes one way: the earliest end any version records
  const ends = versions.map((v) => v.ended).filter((e): e is string => Boolean(e)).sort()
  const {ended: _ended, prompts: _prompts, ...rest} = latest
  return {
    ...rest,
    ...(ends.length > 0 ? {ended: ends[0]} : {}),
    // what the proof covers comes from the original: a later version cannot drop it
    ...(original.prompts ? {prompts: original.prompts} : {}),
    id,
    agent: original.agent,
    assigned: original.assigned,
    reads: original.reads,
    created: original.created,
    proof: original.proof,
    tainted: versions.some((v) => v.tainted) || pending.length > 0,
    taint_reasons: [...new Set([...versions.flatMap((v) => v.taint_reasons), ...pending])],
  }
}

/** Write and commit a session record. The caller holds the store lock. */
export async function writeSessionRecord(store: Store, r: SessionRecord, msg: {subject: string; body?: string}): Promise<void> {
  await commitChanges(store, {
    subject: msg.subject,
    body: msg.body,
    trailers: {'Engram-Session': r.id, 'Engram-Author': r.agent, 'Engram-Tainted': r.tainted},
    changes: [{path: sessionFile(r.id), content: `${JSON.stringify(r, null, 2)}\n`}],
  })
}

export async function startSession(
  store: Store,
  opts: {agent: string; assigned: string; reads?: string[]; tainted?: boolean; reasons?: string[]; recordPrompts?: boolean},
): Promise<SessionRecord & {token: string}> {
  if (!AGENT_RE.test(opts.agent)) throw badInput(`Bad agent name "${printable(opts.agent)}".`, 'use letters, digits and . _ @ -, up to 64 characters')
  const assigned = formatScope(parseScope(opts.assigned))
  if (assigned.startsWith('run:')) throw badInput('A session cannot be assigned a run: scope; it always has its own.', 'assign org, project:<name> or tenant:<id>')
  const reads = [...new Set((opts.reads ?? []).map((r) => formatScope(parseScope(r))))]
  for (const r of reads) {
    if (!(r === 'org' || r.startsWith('project:'))) {
      throw badInput(`A session may be given extra read access to org or project: scopes only, not ${r}.`, 'assign the tenant with --assigned instead')
    }
  }
  const reasons = (opts.reasons ?? []).map((r) => clipRedacted(r.trim(), 300, store.config.redaction.extra)).filter(Boolean)
  if (opts.tainted && reasons.length === 0) reasons.push('tainted at start')
  const now = new Date().toISOString()
  const record: SessionRecord = {
    id: newSessionId(),
    agent: opts.agent,
    assigned,
    reads,
    tainted: Boolean(opts.tainted || reasons.length > 0),
    taint_reasons: reasons,
    created: now,
    updated: now,
    proof: '',
    ...(opts.recordPrompts ? {prompts: 'recorded' as const} : {}),
  }
  record.proof = recordProof(sessionSecret(true), record)
  await withStoreLock(store, () =>
    writeSessionRecord(store, record, {subject: `Start session ${record.id} for ${record.agent} assigned ${assigned}`}),
  )
  return {...record, token: sessionToken(sessionSecret(false), record.id)}
}

/** Mark a session tainted with a reason (or several). Idempotent; never clears anything. */
export async function taintSession(store: Store, id: string, reason: string | string[], lock: LockOptions = {}): Promise<SessionRecord> {
  // a reason is stored (record and commit): secrets go before anything else happens to it
  const whys = (Array.isArray(reason) ? reason : [reason]).map((r) => clipRedacted(redactText(r.trim(), store.config.redaction.extra), 300, store.config.redaction.extra)).filter(Boolean)
  if (whys.length === 0) throw badInput('A taint reason is required.', 'e.g. --reason "fetched https://example.com"')
  return withStoreLock(store, async () => {
    const current = await loadSession(store, id)
    const next: SessionRecord = {
      ...current,
      tainted: true,
      taint_reasons: [...new Set([...current.taint_reasons, ...whys])],
      updated: new Date().toISOString(),
    }
    await writeSessionRecord(store, next, {subject: `Taint session ${id}`, body: whys.map((w) => `Reason: ${w}`).join('\n')})
    return next
  }, lock)
}

/** Close a session (the harness, when the agent's session ends): its writes are refused from then on; reading stays. */
export async function endSession(store: Store, id: string, why: string): Promise<SessionRecord> {
  return withStoreLock(store, async () => {
    const current = await loadSession(store, id)
    if (current.ended) return current
    const now = new Date().toISOString()
    const next: SessionRecord = {...current, ended: now, updated: now}
    await writeSessionRecord(store, next, {subject: `End session ${id}`, body: `Reason: ${clipRedacted(redactText(why), 200, store.config.redaction.extra)}`})
    return next
  })
}

/** A closed session writes nothing (exit 3); every write path asks this before it plans. */
export function refuseEndedSession(session: SessionRecord): void {
  if (!session.ended) return
  throw refused(`Session ${session.id} ended at ${session.ended}; it writes nothing more.`, 'a new agent session is started by the harness (Claude Code: a new or resumed session)')
}

export async function listSessions(store: Store, caller?: SessionRecord): Promise<SessionRecord[]> {
  // a session sees its own record only: other sessions' ids, agents and tenants are not its business
  if (caller) return [await loadSession(store, caller.id)]
  let names: string[] = []
  try {
    names = readdirSync(store.abs('.engram/sessions')).filter((n) => n.endsWith('.json'))
  } catch {
    return []
  }
  const out: SessionRecord[] = []
  for (const n of names) {
    const id = n.slice(0, -5)
    if (!SESSION_ID_RE.test(id)) continue
    try {
      out.push(await loadSession(store, id))
    } catch {
      // a broken or forged record is reported by `engram verify`; the list still shows the rest
    }
  }
  return out.sort((a, b) => b.created.localeCompare(a.created))
}

/** `session show`/`session taint` of `id` by this caller: a session names only itself; any other id reads as unknown. */
export async function loadSessionFor(store: Store, id: string, caller: SessionRecord | undefined): Promise<SessionRecord> {
  validateSessionId(id)
  if (caller && caller.id !== id) throw unknownSession(id)
  return loadSession(store, id)
}

/** Whether this process runs inside an agent session: ENGRAM_SESSION set at all, even to an empty string. */
export function insideSession(): boolean {
  return process.env.ENGRAM_SESSION !== undefined
}

/**
 * The id of the session this process runs as. ENGRAM_SESSION, once set by the harness,
 * is the session: it cannot be emptied into the owner's view, and no flag switches it
 * to another id. Outside a session the owner may look through one with --session.
 */
export function sessionIdInUse(flag?: string): string | undefined {
  // an empty value is bad input whoever runs: never read as "no session"
  if (flag !== undefined && flag.trim() === '') throw badInput('--session needs a session id.', 'session ids look like s-7f3kq2ab')
  const env = process.env.ENGRAM_SESSION
  if (env !== undefined) {
    if (env.trim() === '') {
      throw refused('ENGRAM_SESSION is set but empty: this process is inside a session whose id is broken.', 'the harness sets ENGRAM_SESSION to the id `engram session start` printed')
    }
    if (flag !== undefined && flag !== env) {
      throw refused('--session cannot switch to another session: this process runs inside the session ENGRAM_SESSION names.', 'drop --session; a session sees only its own scopes')
    }
    return env
  }
  return flag
}

/** The session named by ENGRAM_SESSION (or, outside one, --session), or undefined (the owner's view). */
export async function currentSession(store: Store, flag?: string): Promise<SessionRecord | undefined> {
  const id = sessionIdInUse(flag)
  if (id === undefined) return undefined
  const session = await loadSession(store, id)
  // a token, when the harness gave one, must be this session's: a copied token of another session proves nothing
  const token = process.env.ENGRAM_SESSION_TOKEN
  if (token !== undefined && !sameMac(token, sessionToken(sessionSecret(false), id))) {
    throw refused(`ENGRAM_SESSION_TOKEN is not the token of session ${id}.`, 'use the token `engram session start` printed with this session')
  }
  return session
}

/** The session token to send to `engram serve`, when the harness gave one. */
export function sessionTokenInUse(): string | undefined {
  const t = process.env.ENGRAM_SESSION_TOKEN
  return t === undefined || t === '' ? undefined : t
}

/** The one guard of every owner action: refused when ENGRAM_SESSION is set at all, even empty (R20, R22). */
export function refuseInsideSession(action = 'Owner actions'): void {
  if (!insideSession()) return
  throw refused(
    `${action} cannot run inside an agent session (ENGRAM_SESSION is set${process.env.ENGRAM_SESSION === '' ? ', even though empty' : ''}).`,
    'run this as the owner, in your own terminal, with ENGRAM_SESSION unset',
  )
}

export function refuseWithoutSession(): never {
  throw refused('Writes need an agent session.', 'set ENGRAM_SESSION (from `engram session start`) or pass --session')
}
