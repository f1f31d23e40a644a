import {readdirSync} from 'node:fs'

import {commitChanges} from './commit.js'
import {badInput, notFound, refused} from './errors.js'
import {catBlobs, gitRead} from './git.js'
import {newSessionId} from './ids.js'
import {withStoreLock} from './lock.js'
import {formatScope, parseScope, printable} from './scope.js'
import type {Store} from './store.js'

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
}

const SESSION_ID_RE = /^s-[0-9a-z]{4,32}$/
const AGENT_RE = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/

export const sessionFile = (id: string) => `.engram/sessions/${id}.json`

export function validateSessionId(id: string): string {
  if (!SESSION_ID_RE.test(id)) throw badInput(`"${printable(id)}" is not a session id.`, 'session ids look like s-7f3kq2ab; see `engram session list`')
  return id
}

function parseRecord(text: string, label: string): SessionRecord {
  let r: any
  try {
    r = JSON.parse(text)
  } catch {
    throw badInput(`${label} is not valid JSON.`, 'restore it with `git checkout -- <file>`')
  }
  const ok =
    r && typeof r.id === 'string' && typeof r.agent === 'string' && typeof r.assigned === 'string' &&
    typeof r.tainted === 'boolean' && Array.isArray(r.taint_reasons)
  if (!ok) throw badInput(`${label} is not a session record.`, 'restore it with `git checkout -- <file>`')
  return {
    id: r.id,
    agent: r.agent,
    assigned: r.assigned,
    reads: Array.isArray(r.reads) ? r.reads.map(String) : [],
    tainted: r.tainted,
    taint_reasons: r.taint_reasons.map(String),
    created: String(r.created ?? ''),
    updated: String(r.updated ?? ''),
  }
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
  const commits = (await gitRead(store.top, ['log', '--format=%H', '--', path], {allowFail: true})).split('\n').filter(Boolean)
  const versions: SessionRecord[] = []
  for await (const {data} of catBlobs(store, commits.map((c) => `${c}:${path}`))) {
    if (data) versions.push(parseRecord(data.toString('utf8'), rel))
  }
  if (work !== undefined) versions.unshift(parseRecord(work, rel))
  if (versions.length === 0) {
    throw notFound(`Unknown session ${id} in this store.`, 'start one with `engram session start --agent NAME --assigned SCOPE`')
  }
  // git log lists newest first: the last committed version is the harness's original
  const original = commits.length > 0 ? versions[versions.length - 1] : versions[0]
  const latest = versions[0]
  return {
    ...latest,
    id,
    agent: original.agent,
    assigned: original.assigned,
    reads: original.reads,
    created: original.created,
    tainted: versions.some((v) => v.tainted),
    taint_reasons: [...new Set(versions.flatMap((v) => v.taint_reasons))],
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
  opts: {agent: string; assigned: string; reads?: string[]; tainted?: boolean; reasons?: string[]},
): Promise<SessionRecord> {
  if (!AGENT_RE.test(opts.agent)) throw badInput(`Bad agent name "${printable(opts.agent)}".`, 'use letters, digits and . _ @ -, up to 64 characters')
  const assigned = formatScope(parseScope(opts.assigned))
  if (assigned.startsWith('run:')) throw badInput('A session cannot be assigned a run: scope; it always has its own.', 'assign org, project:<name> or tenant:<id>')
  const reads = [...new Set((opts.reads ?? []).map((r) => formatScope(parseScope(r))))]
  for (const r of reads) {
    if (!(r === 'org' || r.startsWith('project:'))) {
      throw badInput(`A session may be given extra read access to org or project: scopes only, not ${r}.`, 'assign the tenant with --assigned instead')
    }
  }
  const reasons = (opts.reasons ?? []).map((r) => r.trim()).filter(Boolean)
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
  }
  await withStoreLock(store, () =>
    writeSessionRecord(store, record, {subject: `Start session ${record.id} for ${record.agent} assigned ${assigned}`}),
  )
  return record
}

/** Mark a session tainted with a reason. Idempotent; never clears anything. */
export async function taintSession(store: Store, id: string, reason: string): Promise<SessionRecord> {
  const why = reason.trim()
  if (!why) throw badInput('A taint reason is required.', 'e.g. --reason "fetched https://example.com"')
  return withStoreLock(store, async () => {
    const current = await loadSession(store, id)
    const next: SessionRecord = {
      ...current,
      tainted: true,
      taint_reasons: current.taint_reasons.includes(why) ? current.taint_reasons : [...current.taint_reasons, why.slice(0, 300)],
      updated: new Date().toISOString(),
    }
    await writeSessionRecord(store, next, {subject: `Taint session ${id}`, body: `Reason: ${why.slice(0, 300)}`})
    return next
  })
}

export async function listSessions(store: Store): Promise<SessionRecord[]> {
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
      // a broken record is reported by `engram verify`; the list still shows the rest
    }
  }
  return out.sort((a, b) => b.created.localeCompare(a.created))
}

/** The session named by --session or ENGRAM_SESSION, or undefined (the owner's view). */
export async function currentSession(store: Store, flag?: string): Promise<SessionRecord | undefined> {
  const id = flag ?? process.env.ENGRAM_SESSION
  if (id === undefined || id === '') return undefined
  return loadSession(store, id)
}

export function refuseWithoutSession(): never {
  throw refused('Writes need an agent session.', 'set ENGRAM_SESSION (from `engram session start`) or pass --session')
}
