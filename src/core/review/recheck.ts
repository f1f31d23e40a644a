import {writeRoute} from '../session/access.js'
import {canonicalJson} from '../memory/canonical.js'
import {catBlobs, gitRead} from '../git/git.js'
import {MemoryFrontmatter, ORIGINS, inheritedTaint, normaliseBody} from '../memory/memory.js'
import {validateMemoryPath} from '../store/paths.js'
import {Proposal, QUARANTINE_DIR, StoredFlag, entryFile, parseProposal, proposalDigest} from './proposal.js'
import {printable} from '../store/scope.js'
import {SessionRecord, loadSession, parseRecord, sessionFile, validateSessionId} from '../session/sessions.js'
import type {Store} from '../store/store.js'
import type {WriteCandidate} from '../write/vote/types.js'
import {loadKeyring} from '../trust/keys.js'
import {UNATTESTED_PREFIX, claimText, promptRecord, unattestedFound, unattestedReason} from '../session/prompts.js'
import {recalledFromMemory} from '../write/known.js'
import {normalise} from '../write/normalise.js'
import {ProposalSigner, proposalSigner} from './signed.js'

const MARKER = /\[REDACTED:([a-z0-9-]+)\]/g

/**
 * The text whose flags review recomputes: the flags it raises now. The stored flags were
 * written by the process that made the write — the agent's — into a file under
 * `.engram/` that the agent can edit, and the digest does not cover them. These are
 * computed from what the digest does cover (the title, tags and body the accept would
 * write, and the origin and taint in its frontmatter), so removing a flag from the file
 * hides nothing from the reviewer. Not recomputed: contradiction and duplicate (they need
 * the memory around the write as it was) and hidden characters (stripped before storage).
 */
function recheckCandidate(p: Proposal, maxBodyBytes: number): Omit<WriteCandidate, 'normalised'> {
  const m = p.memory
  // the write counts what it redacted in the title and body (tags are redacted, not counted)
  const redactions: Record<string, number> = {}
  for (const [, kind] of `${m.title}\n${p.body}`.matchAll(MARKER)) redactions[kind] = (redactions[kind] ?? 0) + 1
  const sessionReasons = m.taint_reasons.filter((r) => r.startsWith('session: ')).map((r) => r.slice('session: '.length))
  return {
    scope: p.scope,
    path: p.path,
    operation: p.base === null ? 'create' : 'update',
    title: m.title,
    tags: m.tags,
    body: p.body,
    origin: m.origin,
    author: m.author,
    session: {id: m.source_session ?? '', agent: m.author, tainted: sessionReasons.length > 0, taint_reasons: sessionReasons},
    redactions,
    bodyBytes: Buffer.byteLength(p.body),
    maxBodyBytes,
  }
}

/**
 * Recomputed flags the entry's stored list lacks: a sign the entry was edited after the vote.
 * A large text's flags are recomputed in a worker under `budgetMs` (vote/budget.ts);
 * `undefined` when that ran out — the reviewer is told the stored flags are unchecked.
 */
export async function unrecordedFlags(p: Proposal, maxBodyBytes: number, budgetMs: number): Promise<StoredFlag[] | undefined> {
  if (p.operation === 'delete') return []
  const stored = new Set(p.flags.map((f) => f.flag))
  // imported here, not above: listing, keys, config and doctor reach this module but not this
  // function, and the validators' tables cost each of those commands about 80 ms to set up
  const {textFlagsWithin} = await import('../write/vote/budget.js')
  const now = await textFlagsWithin(recheckCandidate(p, maxBodyBytes), budgetMs)
  return now?.filter((f) => !stored.has(f.flag)).map((f) => ({flag: f.flag, reason: f.reason}))
}

/**
 * One fact shown at review that disagrees with what engram recomputed from sources the
 * entry's file cannot change: the session record's committed history, the session's
 * role, the commit that added the entry, the quarantine's own commits.
 */
export interface RecheckFinding {
  /** the fact, e.g. `tainted`, `memory.origin`, `scope`, `commit`, `status` */
  field: string
  /** what the entry says now */
  stored: unknown
  /** what engram recomputed */
  recomputed: unknown
  /** where the recomputed value comes from */
  source: string
}

export interface Recheck {
  findings: RecheckFinding[]
  /** the entry was quarantined and moved into the queue by hand: only `quarantine release` may do that */
  quarantinedAs: string | null
  /** the commit that added the entry, when it is engram's */
  commit: string | null
  /** who signed an entry made without a session (signed.ts); null for a session's entry */
  signer: ProposalSigner | null
}

const ADD_TRAILERS = ['Engram-Operation', 'Engram-Proposal', 'Engram-Digest', 'Engram-Author', 'Engram-Session', 'Engram-Origin', 'Engram-Tainted', 'Engram-Released-From'] as const
/** Proposal fields compared with the entry as committed (author, session, origin, tainted and scope are compared in memory.*, which parseProposal ties them to) */
const TOP_FIELDS = ['kind', 'status', 'operation', 'path', 'base', 'removes', 'taint_reasons', 'flags', 'redactions', 'votes', 'vote', 'evidence', 'note', 'signature'] as const
/** The operations of the commits that may add an entry: the write path (dream included), forget, release */
const ADDING = ['write', 'release', 'forget']

/** A value short enough for a finding: long text (a body) is shown by its size, never in full. */
function shown(v: unknown): unknown {
  if (typeof v === 'string' && v.length > 120) return `${v.slice(0, 60)}… (${v.length} characters)`
  if (v !== null && typeof v === 'object') {
    const json = JSON.stringify(v)
    return json.length > 200 ? `${json.slice(0, 120)}… (${json.length} characters)` : v
  }
  return v
}

/**
 * Recompute every fact of an entry that can be recomputed (STANDARD R12), for `review
 * show` (marked in red, listed in --json) and for accept (which refuses, exit 3, when
 * anything disagrees). The entry's file and its stored fields are the agent's to edit;
 * these sources are not edited by writing that file:
 * - the commit that added `.engram/<proposals|quarantine>/<id>.md` must be engram's write
 *   (or release) commit with trailers that match the entry as committed, and the entry as
 *   shown must equal the entry as committed (each difference is a finding);
 * - an entry committed under `.engram/quarantine/` stays quarantined wherever its file is
 *   moved;
 * - the author, taint and scope follow from the session record's committed history
 *   (taint only goes up) and the session's role (assigned scope, read-only scopes, never
 *   org).
 * In cooperative mode an agent with a shell can forge a commit too; README (known limits)
 * says what this cannot catch.
 */
export async function recheckEntry(store: Store, p: Proposal): Promise<Recheck> {
  const findings: RecheckFinding[] = []
  const add = (field: string, stored: unknown, recomputed: unknown, source: string) => findings.push({field, stored: shown(stored), recomputed: shown(recomputed), source})
  const rel = entryFile(p)
  const file = store.gitPath(rel)
  let quarantinedAs: string | null = null

  // 1. The commit that added the entry (the newest addition, if it was removed and re-added).
  const addCommit = (await gitRead(store.top, ['log', '--no-renames', '--diff-filter=A', '--format=%H', '--', file], {allowFail: true})).split('\n').find(Boolean) ?? null
  let committed: Proposal | undefined
  let operation: string | undefined
  if (!addCommit) {
    add('commit', 'added by engram', 'not committed', `git history of ${rel}`)
  } else {
    const short = addCommit.slice(0, 10)
    const fmt = ADD_TRAILERS.map((t) => `%(trailers:key=${t},valueonly,separator=%x2C)`).join('%x1f')
    const out = await gitRead(store.top, ['show', '--no-renames', '--name-status', `--format=${fmt}%x1e`, '--end-of-options', addCommit], {allowFail: true})
    const [head, files = ''] = out.split('\x1e')
    const t = Object.fromEntries(ADD_TRAILERS.map((k, i) => [k, (head.split('\x1f')[i] ?? '').trim()])) as Record<(typeof ADD_TRAILERS)[number], string>
    operation = t['Engram-Operation']
    const changed = files.split('\n').map((l) => l.split('\t')).filter((x) => x.length >= 2).map(([s, f]) => ({status: s.trim(), file: f.trim()}))
    const qdir = store.gitPath(`${QUARANTINE_DIR}/`)
    const removedQuarantine = changed.filter((c) => c.status === 'D' && c.file.startsWith(qdir)).map((c) => c.file.slice(qdir.length).replace(/\.md$/, ''))
    const expected = operation === 'release' && p.status === 'pending' ? [file, store.gitPath(`${QUARANTINE_DIR}/${t['Engram-Released-From']}.md`)] : [file]
    const others = changed.map((c) => c.file).filter((f) => !expected.includes(f))
    const blob = await gitRead(store.top, ['cat-file', 'blob', `${addCommit}:${file}`], {allowFail: true})
    try {
      committed = parseProposal(blob, `${rel}@${short}`)
    } catch (error) {
      add('commit', 'an entry engram wrote', `unreadable as committed: ${(error as Error).message}`, `commit ${short}`)
    }
    const source = `commit ${short} that added ${rel}`
    if (!ADDING.includes(operation) || t['Engram-Proposal'] !== p.id) {
      add('commit', 'added by engram\'s write path', `a commit with operation "${operation || 'none'}" for proposal "${t['Engram-Proposal'] || 'none'}"`, source)
    } else if (operation === 'release' && p.status !== 'pending') {
      add('commit', 'added by engram\'s write path', 'a release commit, which only adds to the review queue', source)
    }
    // counted, not named: a session may be shown this, and the other files may be another tenant's
    if (others.length > 0) add('commit', `a commit of ${rel} only`, `it also changed ${others.length} other file(s)`, source)
    if (removedQuarantine.length > 0 && operation !== 'release') quarantinedAs = removedQuarantine[0]
    if (committed) {
      // the digest itself is never printed here: it would be a digest of a change not shown
      if (t['Engram-Digest'] !== proposalDigest(committed)) add('commit', 'Engram-Digest trailer of the entry as committed', 'a different digest (the commit does not describe this entry)', source)
      const claims: [string, string, string][] = [
        ['Engram-Author', committed.memory.author, 'memory.author'],
        ['Engram-Session', committed.memory.source_session ?? '', 'memory.source_session'],
        ...(operation === 'write' ? [['Engram-Origin', committed.memory.origin, 'memory.origin'] as [string, string, string], ['Engram-Tainted', String(committed.memory.tainted), 'memory.tainted'] as [string, string, string]] : []),
      ]
      for (const [trailer, value, field] of claims) {
        // an origin the memory format has no word for (an agent claiming "system") is stored as direct_chat
        if (trailer === 'Engram-Origin' && !(ORIGINS as readonly string[]).includes(t[trailer])) continue
        if (t[trailer as (typeof ADD_TRAILERS)[number]] !== value) add(field, value, `${t[trailer as (typeof ADD_TRAILERS)[number]] || 'none'} (its ${trailer} trailer)`, source)
      }
      // 2. The entry as shown must be the entry as committed.
      for (const k of TOP_FIELDS) {
        if (canonicalJson(p[k] ?? null) !== canonicalJson(committed[k] ?? null)) add(k, p[k], committed[k], source)
      }
      const keys = new Set([...Object.keys(p.memory), ...Object.keys(committed.memory)]) as Set<keyof MemoryFrontmatter>
      for (const k of keys) {
        if (canonicalJson(p.memory[k] ?? null) !== canonicalJson(committed.memory[k] ?? null)) add(`memory.${k}`, p.memory[k], committed.memory[k], source)
      }
      if (normaliseBody(p.body) !== normaliseBody(committed.body)) add('body', p.body, committed.body, source)
    }
  }

  // 3. Quarantine status from the quarantine's own commits.
  if (p.status === 'pending') {
    if (p.id.startsWith('q-')) quarantinedAs ??= p.id
    const qfile = store.gitPath(`${QUARANTINE_DIR}/${p.id}.md`)
    if ((await gitRead(store.top, ['log', '-1', '--format=%H', '--', qfile], {allowFail: true})).trim()) quarantinedAs ??= p.id
    if (!addCommit) quarantinedAs ??= await movedFromQuarantine(store, p)
    if (quarantinedAs) add('status', 'pending', `quarantined (entry ${quarantinedAs})`, 'the quarantine\'s commits')
  }

  // 4. Author, taint and scope from the session's committed history and role.
  const sid = p.memory.source_session
  const src = committed ?? p
  let session: SessionRecord | undefined
  let signer: ProposalSigner | null = null
  if (!sid) {
    // no session: the maker's signature is the proof, or there is none (signed.ts)
    signer = proposalSigner(await loadKeyring(store), p)
    if (!signer.ok) {
      add('memory.source_session', null, p.signature ? `a valid signature (found ${signer.why})` : 'an agent session, or the signature of a dreamer or owner key (unsigned)', 'the entry\'s signature and the keyring')
    } else {
      // a released entry is signed by the owner who released it, its author stays its maker
      if (p.kind !== 'release' && p.memory.author !== signer.name) add('memory.author', p.memory.author, signer.name, `the key that signed the entry (${signer.keyid})`)
      if (signer.role === 'dreamer') checkDreamScope(p, store, add)
    }
  } else {
    try {
      session = await sessionAsOf(store, sid, addCommit)
    } catch {
      add('memory.source_session', sid, 'no such session in this store\'s history', `.engram/sessions/${sid}.json`)
    }
  }
  if (session) {
    const source = `session ${session.id}'s committed record`
    if (p.memory.author !== session.agent) add('memory.author', p.memory.author, session.agent, source)
    const origin = src.memory.origin
    const inherited = inheritedTaint(session, origin)
    const taintReasons = inherited.reasons
    const tainted = inherited.tainted || src.memory.tainted
    if (tainted && !p.memory.tainted) add('memory.tainted', false, true, `${source} and the origin ${origin}`)
    const missing = taintReasons.filter((r) => !p.memory.taint_reasons.includes(r))
    if (missing.length > 0) add('memory.taint_reasons', p.memory.taint_reasons, [...p.memory.taint_reasons, ...missing], source)
    // a claim of the user's words, checked again against what the user typed (prompts.ts), where
    // this machine holds the record (a value typed since the write reads as typed; the oldest go past 50,000)
    if (session.prompts === 'recorded' && origin === 'direct_chat' && p.operation !== 'delete') {
      const record = promptRecord(store.root, session.id)
      // the stored body's encoded blobs read as the write read them (what only the raw text held is gone)
      const found = record.found ? unattestedFound(claimText(p.memory.title, p.memory.tags, p.body, p.path, normalise(p.body).decoded), record) : []
      // a value the curated memory at the path states (its signed version, read as the write read it: known.ts) was recalled, not brought in
      const recalled = new Set(await recalledFromMemory(store, p.scope, p.path, found, p.body))
      const unattested = found.filter((v) => !recalled.has(v)).map((v) => v.text)
      if (unattested.length > 0) {
        const typed = `the values of the prompts the user typed in session ${session.id}`
        if (!p.memory.tainted && !tainted) add('memory.tainted', false, true, typed)
        if (!p.memory.taint_reasons.some((r) => r.startsWith(UNATTESTED_PREFIX))) add('memory.taint_reasons', p.memory.taint_reasons, [...p.memory.taint_reasons, unattestedReason(unattested)], typed)
      }
    }
    const role = `the role of session ${session.id} (assigned ${session.assigned})`
    if (p.scope === 'org') {
      add('scope', p.scope, 'refused: agents never write to org', role)
    } else {
      try {
        if (writeRoute(session, p.scope, store.config) !== 'proposal') add('scope', p.scope, 'a run: scratchpad, which takes no proposals', role)
      } catch (error) {
        add('scope', p.scope, `refused: ${(error as Error).message}`, role)
      }
    }
  }
  for (const path of [p.path, ...p.removes.map((r) => r.path)]) {
    try {
      validateMemoryPath(path)
    } catch (error) {
      add('path', path, `refused: ${(error as Error).message}`, 'the path rules')
    }
  }
  return {findings, quarantinedAs, commit: addCommit, signer}
}

/** What a dreamer key may propose: never to org unless the policy allows it, in a run: scratchpad only its clearing. */
function checkDreamScope(p: Proposal, store: Store, add: (field: string, stored: unknown, recomputed: unknown, source: string) => void): void {
  if (p.scope === 'org' && !store.config.dream.allow_org) add('scope', p.scope, 'refused: the dream job proposes to org only when dream.allow_org is set', 'the store\'s policy (config.yml)')
  if (p.scope.startsWith('run:') && p.operation !== 'delete') add('scope', p.scope, 'refused: in a run: scratchpad the dream job only clears files', 'the dreamer role')
}

/**
 * The session as it was when the entry was committed: its identity from its first
 * committed version, its taint the union of every committed version up to that commit.
 * Without a commit (an entry nobody committed), every version, as loadSession reads it.
 */
async function sessionAsOf(store: Store, id: string, commit: string | null): Promise<SessionRecord> {
  if (!commit) return loadSession(store, id)
  validateSessionId(id)
  const path = store.gitPath(sessionFile(id))
  const commits = (await gitRead(store.top, ['log', '--format=%H', '--end-of-options', commit, '--', path], {allowFail: true})).split('\n').filter(Boolean)
  const versions: SessionRecord[] = []
  for await (const {data} of catBlobs(store, commits.map((c) => `${c}:${path}`))) {
    if (data) versions.push(parseRecord(data.toString('utf8'), sessionFile(id)))
  }
  if (versions.length === 0) throw new Error(`no committed record of session ${id}`)
  const original = versions[versions.length - 1]
  return {
    ...original,
    tainted: versions.some((v) => v.tainted),
    taint_reasons: [...new Set(versions.flatMap((v) => v.taint_reasons))],
  }
}

/**
 * An uncommitted entry whose change is a quarantine entry that HEAD has and the working
 * tree lost (a hand move, renamed or not): the quarantine entry's id, or null.
 */
async function movedFromQuarantine(store: Store, p: Proposal): Promise<string | null> {
  const dir = store.gitPath(QUARANTINE_DIR)
  const names = (await gitRead(store.top, ['ls-tree', '--name-only', 'HEAD', '--', `${dir}/`], {allowFail: true})).split('\n').filter((n) => n.endsWith('.md'))
  for (const n of names) {
    const id = n.slice(n.lastIndexOf('/') + 1, -3)
    if (store.readText(`${QUARANTINE_DIR}/${id}.md`) !== undefined) continue
    try {
      const q = parseProposal(await gitRead(store.top, ['cat-file', 'blob', `HEAD:${n}`]), n)
      if (q.scope === p.scope && q.path === p.path && normaliseBody(q.body) === normaliseBody(p.body)) return q.id
    } catch {
      // an unreadable entry is not this one
    }
  }
  return null
}

/** The findings in one sentence for an error message (values bounded and made printable). */
export function describeFindings(findings: RecheckFinding[]): string {
  const one = (f: RecheckFinding) => `${f.field} (shown ${printable(JSON.stringify(f.stored) ?? 'null', 60)}, recomputed ${printable(JSON.stringify(f.recomputed) ?? 'null', 100)} from ${printable(f.source, 80)})`
  return findings.slice(0, 8).map(one).join('; ') + (findings.length > 8 ? `; and ${findings.length - 8} more` : '')
}
