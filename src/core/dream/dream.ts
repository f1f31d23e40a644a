/**
 * `engram dream`: the scheduled consolidation job. It reads what the sessions of one scope
 * saw and said in a period (their committed run: scratchpads, agent transcripts) and the
 * scope's curated memory, plans proposals (engine.ts, or a model: model.ts), and sends each
 * through the write path — redaction, flags, the vote — into the review queue, signed by
 * the dreamer key. It never writes curated memory: every change waits for the owner.
 */
import {statSync} from 'node:fs'

import {catBlobs, gitRead, gitWrite} from '../git/git.js'
import {listScopeFiles} from '../memory/curated.js'
import {isIndirectOrigin, parseMemory} from '../memory/memory.js'
import {listEntries, type Evidence} from '../review/proposal.js'
import {proposeDeletion} from '../review/forget.js'
import {signProposal} from '../review/signed.js'
import {EngramError, badInput, refused} from '../store/errors.js'
import {formatScope, parseScope, printable, scopeDir} from '../store/scope.js'
import type {Store} from '../store/store.js'
import {listSessions, refuseInsideSession} from '../session/sessions.js'
import {loadKeyring} from '../trust/keys.js'
import {findPrivateKey, unlockPrivateKey} from '../trust/privatekey.js'
import {ServingGate} from '../trust/serving.js'
import type {KeyPair} from '../trust/sign.js'
import {clipRedacted, redactText} from '../write/redact/index.js'
import {writeSignedProposal} from '../write/write.js'
import {CuratedView, DREAM_KINDS, DreamKind, FactCounter, PlannedDream, RunFile, planDreams} from './engine.js'
import {modelPlanner} from './model.js'
import {Observation, ReadStats, readMarkdownTranscript, readTranscript, transcriptFiles} from './transcripts.js'

export interface DreamOptions {
  scope: string
  /** `7d`, `36h`, `2w`, or an ISO date (default 7d) */
  since?: string
  transcripts?: string[]
  dryRun?: boolean
  branch?: boolean
  keyName?: string
  now?: Date
  /** a model's proposals instead of the engine's (model.ts): the command, and how long it may take */
  llmCommand?: string
  llmTimeoutMs?: number
}

/** What the planners see: the observations are summarised as recurring facts for the engine, given whole to a model. */
export interface DreamInputs {
  scope: string
  since: string
  facts: FactCounter
  observations: Observation[]
  curated: CuratedView[]
  runs: RunFile[]
}

export interface DreamItem {
  kind: DreamKind
  scope: string
  path: string
  operation: string
  removes: string[]
  status: 'pending' | 'quarantined' | 'would-propose' | 'duplicate' | 'decided' | 'stale' | 'refused'
  /** why the write path refused the proposal (status refused: its text ran past vote.budget_ms) */
  refusal?: string
  proposal?: string
  digest?: string
  flags: string[]
  tainted: boolean
  reason: string
  evidence: Evidence[]
}

export interface DreamSummary {
  scope: string
  since: string
  dry_run: boolean
  branch: string | null
  sessions_read: number
  transcripts: number
  run_notes: number
  lines_read: number
  lines_skipped: number
  /** of the lines skipped, those longer than 16 MiB (transcripts.ts MAX_LINE_BYTES): skipped unread */
  lines_too_long: number
  proposals: Record<DreamKind, number>
  pending: number
  quarantined: number
  flagged: number
  tainted: number
  skipped: {duplicate: number; decided: number; stale: number; refused: number}
  /** the model engine's proposals that were refused, each with why */
  rejected: {index: number; reason: string}[]
  items: DreamItem[]
}

/** `7d` / `36h` / `2w` before now, or an ISO date. */
export function parseSince(since: string | undefined, now: Date): string {
  const s = (since ?? '7d').trim()
  const m = /^(\d{1,5})([hdw])$/.exec(s)
  if (m) return new Date(now.getTime() - Number(m[1]) * {h: 3_600_000, d: 86_400_000, w: 604_800_000}[m[2] as 'h' | 'd' | 'w']).toISOString()
  if (/^\d{4}-\d{2}-\d{2}(?:T[\d:.]+Z?)?$/.test(s) && !Number.isNaN(Date.parse(s))) return new Date(s).toISOString()
  throw badInput(`--since "${printable(s, 40)}" is not a period.`, 'e.g. --since 7d, --since 36h, --since 2w or --since 2026-11-24')
}

/** The dreamer key to sign with: a trusted, unrevoked key of role dreamer in this store's keyring. */
export async function dreamerKey(store: Store, name?: string): Promise<KeyPair> {
  refuseInsideSession('Dreaming')
  const found = findPrivateKey(name)
  const keyring = await loadKeyring(store)
  const k = keyring.trusted(found.keyid)
  if (!k || k.role !== 'dreamer') {
    const info = keyring.status(found.keyid)
    const is = !info ? 'not known to this store' : info.status !== 'trusted' ? info.status : `a ${info.role} key`
    throw refused(`Key ${found.name} (${found.keyid}) is ${is}, not a trusted dreamer key; the dream job signs its proposals with one.`, 'make one with `engram keys generate nightly` and have the owner trust it: `engram keys trust nightly.pub --role dreamer`; then `engram dream --key nightly`')
  }
  return unlockPrivateKey(found)
}

export async function dream(store: Store, opts: DreamOptions): Promise<DreamSummary> {
  refuseInsideSession('Dreaming')
  const now = opts.now ?? new Date()
  const scope = formatScope(parseScope(opts.scope))
  if (scope.startsWith('run:')) throw badInput('Dream a curated scope (project:, tenant:, or org); its sessions\' run: scratchpads are its input.')
  if (scope === 'org' && !store.config.dream.allow_org) throw refused('The dream job does not propose to org unless the signed config sets dream.allow_org.', 'dream a project: or tenant: scope')
  const since = parseSince(opts.since, now)
  const files = transcriptFiles(opts.transcripts ?? [])
  if (opts.llmTimeoutMs !== undefined && !(opts.llmTimeoutMs >= 1000 && opts.llmTimeoutMs <= 3_600_000)) throw badInput('--llm-timeout must be from 1 to 3600 seconds.')
  const key = opts.dryRun ? undefined : await dreamerKey(store, opts.keyName)

  const branch = opts.branch && !opts.dryRun ? await openBranch(store, now) : null
  try {
    const inputs = await gather(store, scope, since, files, opts.llmCommand !== undefined)
    const model = opts.llmCommand !== undefined
      ? await modelPlanner(inputs.inputs, {command: opts.llmCommand, timeoutMs: opts.llmTimeoutMs ?? 120_000, allowOrg: store.config.dream.allow_org, extra: store.config.redaction.extra})
      : undefined
    const planned = model
      ? model.planned
      : planDreams({scope, now, minSessions: store.config.dream.min_sessions, retentionDays: store.config.dream.run_retention_days, retireUnconfirmedDays: store.config.dream.retire_unconfirmed_days, facts: inputs.inputs.facts, curated: inputs.inputs.curated, runs: inputs.inputs.runs, clean: (t) => redactText(t, store.config.redaction.extra)})
    const summary: DreamSummary = {
      scope, since, dry_run: !!opts.dryRun, branch: branch?.name ?? null, sessions_read: inputs.stats.sessions.size, transcripts: inputs.stats.files - inputs.runNotes,
      run_notes: inputs.runNotes, lines_read: inputs.stats.lines, lines_skipped: inputs.stats.skipped, lines_too_long: inputs.stats.too_long ?? 0,
      proposals: Object.fromEntries(DREAM_KINDS.map((k) => [k, 0])) as Record<DreamKind, number>,
      pending: 0, quarantined: 0, flagged: 0, tainted: 0, skipped: {duplicate: 0, decided: 0, stale: 0, refused: 0}, rejected: model?.rejected ?? [], items: [],
    }
    const earlier = await earlierDreams(store)
    const queued = new Set([...listEntries(store, 'pending'), ...listEntries(store, 'quarantined')].flatMap((e) => (e.proposal ? [e.proposal.id] : [])))
    for (const d of planned) {
      const item = await propose(store, d, key, earlier, queued, !!opts.dryRun)
      summary.items.push(item)
      if (item.status === 'duplicate' || item.status === 'decided' || item.status === 'stale' || item.status === 'refused') {
        summary.skipped[item.status]++
        continue
      }
      summary.proposals[d.kind]++
      if (item.status === 'pending') summary.pending++
      if (item.status === 'quarantined') summary.quarantined++
      if (item.flags.length > 0) summary.flagged++
      if (item.tainted) summary.tainted++
    }
    return summary
  } finally {
    if (branch) await branch.close()
  }
}

/** Everything the planners read, within the period. */
async function gather(store: Store, scope: string, since: string, files: string[], keepObservations: boolean) {
  const stats: ReadStats = {files: 0, lines: 0, skipped: 0, sessions: new Set()}
  const facts = new FactCounter()
  const observations: Observation[] = []
  const take = (o: Observation) => {
    facts.add(o)
    if (keepObservations) observations.push(o)
  }
  // the scope's curated memory, as served: signed, in the manifest (a planted file is no input)
  const gate = await ServingGate.open(store)
  const curated: CuratedView[] = []
  for (const path of listScopeFiles(store, scope)) {
    const served = gate.serveFile(scope, path)
    if (!served.ok) continue
    const fm = served.memory.frontmatter
    curated.push({path, blob: served.blob, title: fm.title, body: served.memory.body, created: fm.created, ...(fm.expires ? {expires: fm.expires} : {})})
  }
  // retiring what is not confirmed: a session of the period saying a memory's sentence again confirms it
  const confirming = store.config.dream.retire_unconfirmed_days > 0
  if (confirming) for (const m of curated) facts.watch(m.path, m.body)
  // the committed run: scratchpads of the scope's sessions
  const sessions = (await listSessions(store)).filter((s) => s.assigned === scope)
  const runs: RunFile[] = []
  let runNotes = 0
  if (sessions.length > 0) {
    const prefix = store.gitPath('run/')
    const tree = await gitRead(store.top, ['ls-tree', '-r', '-z', 'HEAD', '--', prefix], {allowFail: true})
    const bySession = new Map(sessions.map((s) => [s.id, s]))
    const entries: {session: string; path: string; blob: string}[] = []
    for (const rec of tree.split('\0').filter(Boolean)) {
      const [meta, file] = rec.split('\t')
      const blob = meta.split(' ')[2]
      const rel = file.slice(prefix.length)
      const slash = rel.indexOf('/')
      const sid = rel.slice(0, slash)
      if (slash < 0 || !bySession.has(sid) || !rel.endsWith('.md')) continue
      entries.push({session: sid, path: rel.slice(slash + 1), blob})
    }
    // the time of the last commit that changed each file, in one pass over history
    const changed = new Map<string, string>()
    const log = await gitRead(store.top, ['log', '--format=%x00%cI', '--name-only', '--', prefix], {allowFail: true})
    let when = ''
    for (const line of log.split('\n')) {
      if (line.startsWith('\0')) when = new Date(line.slice(1)).toISOString()
      else if (line && !changed.has(line)) changed.set(line, when)
    }
    for await (const {index, data} of catBlobs(store, entries.map((e) => e.blob))) {
      const e = entries[index]
      const s = bySession.get(e.session)!
      const committed = changed.get(store.gitPath(`run/${e.session}/${e.path}`)) ?? ''
      runs.push({scope: `run:${e.session}`, path: e.path, blob: e.blob, committed})
      if (!data || committed < since) continue
      stats.files++
      runNotes++
      stats.lines++
      try {
        const m = parseMemory(data.toString('utf8'), `run/${e.session}/${e.path}`)
        stats.sessions.add(s.id)
        const tainted = s.tainted || m.frontmatter.tainted || isIndirectOrigin(m.frontmatter.origin)
        take({session: s.id, timestamp: committed, text: m.body, tainted, source: `run:${s.id} ${e.path}`})
      } catch {
        stats.skipped++
      }
    }
  }
  const progress = dreamProgress(files)
  for (const [i, f] of files.entries()) {
    progress?.file(i)
    for await (const o of (f.endsWith('.md') ? readMarkdownTranscript(f, since, stats, progress?.bytes) : readTranscript(f, since, stats, progress?.bytes))) take(o)
  }
  progress?.done()
  if (confirming) {
    const accepted = await lastChanged(store, scope)
    for (const m of curated) {
      const commit = accepted.get(m.path)
      const said = facts.confirmedBy(m.path)
      const byCommit = commit ? {at: commit.at, by: `${commit.at} (its last accepted version, commit ${commit.commit})`} : {at: m.created, by: `${m.created} (created)`}
      m.confirmed = said && said.timestamp > byCommit.at ? {at: said.timestamp, by: `${said.timestamp} (said again in session ${said.session}, ${said.source})`} : byCommit
    }
  }
  return {stats, runNotes, inputs: {scope, since, facts, observations, curated, runs} satisfies DreamInputs}
}

/**
 * The time of the last commit that changed each file of a scope (its accept, a restore), by
 * scope-relative path, in one pass over the scope's history: a memory's last accepted version.
 * The author date: a rebase or cherry-pick (a sync) keeps it, where it renews the committer date.
 */
async function lastChanged(store: Store, scope: string): Promise<Map<string, {at: string; commit: string}>> {
  const prefix = store.gitPath(`${scopeDir(scope)}/`)
  const out = new Map<string, {at: string; commit: string}>()
  const log = await gitRead(store.top, ['log', '--format=%x00%aI %h', '--name-only', '--', prefix], {allowFail: true})
  let when: {at: string; commit: string} | undefined
  for (const line of log.split('\n')) {
    if (line.startsWith('\0')) {
      const [at, commit] = line.slice(1).split(' ')
      when = {at: new Date(at).toISOString(), commit}
    } else if (line.startsWith(prefix) && when && !out.has(line.slice(prefix.length))) out.set(line.slice(prefix.length), when)
  }
  return out
}

/**
 * The progress line on a terminal (stderr) over long inputs — more than 20 transcripts, or
 * more than 64 MiB of them: `dreaming: 3/500 transcripts, 120/200 MiB`, redrawn at most
 * every 200 ms as bytes are read. Nothing when stderr is not a terminal (a job's log).
 */
function dreamProgress(files: string[]): {file: (i: number) => void; bytes: (n: number) => void; done: () => void} | undefined {
  if (!process.stderr.isTTY) return undefined
  const total = files.reduce((sum, f) => sum + (statSync(f, {throwIfNoEntry: false})?.size ?? 0), 0)
  if (files.length <= 20 && total <= 64 * 1024 * 1024) return undefined
  const mib = (n: number) => (n / 1048576).toFixed(0)
  let index = 0
  let read = 0
  let drawn = 0
  const draw = () => process.stderr.write(`\rdreaming: ${index}/${files.length} transcripts, ${mib(read)}/${mib(total)} MiB`)
  return {
    file(i) {
      index = i
      draw()
    },
    bytes(n) {
      read += n
      const t = Date.now()
      if (t - drawn < 200) return
      drawn = t
      draw()
    },
    done() {
      index = files.length
      draw()
      process.stderr.write('\n')
    },
  }
}

/** Earlier dream proposals on any branch, by fingerprint: their evidence keys and proposal ids. */
async function earlierDreams(store: Store): Promise<Map<string, {evidence: string; id: string}[]>> {
  const out = new Map<string, {evidence: string; id: string}[]>()
  const log = await gitRead(store.top, ['log', '--all', '--format=%(trailers:key=Engram-Dream,valueonly,separator=%x2C)%x09%(trailers:key=Engram-Proposal,valueonly,separator=%x2C)'], {allowFail: true})
  for (const line of log.split('\n')) {
    const [dreamed, id] = line.split('\t')
    const [fp, evidence] = (dreamed ?? '').trim().split(' ')
    if (!fp || !evidence || !id) continue
    out.set(fp, [...(out.get(fp) ?? []), {evidence, id: id.trim()}])
  }
  return out
}

/** One planned proposal: skipped when made before, else through the write path (or the deletion builder). */
async function propose(store: Store, d: PlannedDream, key: KeyPair | undefined, earlier: Map<string, {evidence: string; id: string}[]>, queued: Set<string>, dryRun: boolean): Promise<DreamItem> {
  const extra = store.config.redaction.extra
  // nothing a transcript said leaves this process unredacted: quotes, sources and the reason too
  const evidence: Evidence[] = d.evidence.slice(0, 20).map((e) => ({
    ...(e.session ? {session: redactText(e.session, extra)} : {}), ...(e.timestamp ? {timestamp: e.timestamp} : {}),
    ...(e.source ? {source: clipRedacted(e.source, 200, extra)} : {}), ...(e.quote ? {quote: clipRedacted(e.quote, 200, extra)} : {}), ...(e.tainted ? {tainted: true} : {}),
  }))
  const tainted = d.tainted || evidence.some((e) => e.tainted)
  const reason = clipRedacted(d.reason, 300, extra)
  const item: DreamItem = {kind: d.kind, scope: d.scope, path: d.path, operation: d.operation, removes: d.removes.map((r) => r.path), status: 'would-propose', flags: [], tainted, reason, evidence}
  const before = earlier.get(d.fingerprint) ?? []
  if (before.some((b) => queued.has(b.id))) return {...item, status: 'duplicate'}
  // decided (rejected, or accepted and since changed) on the same evidence: not again until new evidence appears
  if (before.some((b) => b.evidence === d.evidenceKey)) return {...item, status: 'decided'}
  if (dryRun || !key) return item
  const outside = evidence.filter((e) => e.tainted).map((e) => e.source ?? e.session ?? 'evidence')
  const taint = {tainted, reasons: tainted ? [`dream evidence from outside text: ${[...new Set(outside)].slice(0, 3).join('; ') || 'a tainted session'}`.slice(0, 300)] : []}
  const signer = {origin: 'dream' as const, name: key.name, keyid: key.keyid}
  const trailers = {'Engram-Dream': `${d.fingerprint} ${d.evidenceKey}`}
  const note = `dream ${d.kind}: ${reason}`
  try {
    if (d.operation === 'delete') {
      const r = await proposeDeletion(store, {author: key.name, origin: 'dream', taint, key, role: 'dreamer'}, {
        scope: d.scope, path: d.path, kind: 'dream', note, reason, removes: d.removes, base: d.base ?? undefined, evidence, trailers,
      })
      return {...item, status: 'pending', proposal: r.id, digest: r.digest}
    }
    const r = await writeSignedProposal(store, signer, taint, {
      scope: d.scope, path: d.path, content: d.body ?? '', title: d.title, base: d.base ?? 'none', tags: ['dream'],
    }, {evidence, removes: d.removes, note, sign: (p) => signProposal(key, p), trailers})
    return {...item, status: r.status === 'quarantined' ? 'quarantined' : 'pending', proposal: r.proposal, digest: r.digest, flags: r.flags.map((f) => f.flag)}
  } catch (error) {
    // the file moved while dreaming: nothing is proposed against a version nobody planned for
    if (error instanceof EngramError && (error.code === 'stale-digest' || error.code === 'conflict')) return {...item, status: 'stale'}
    // its text could not be redacted and read within the budget: nothing of it is stored, and the
    // run goes on with the other proposals (it is planned again, and refused again, next run)
    if (error instanceof EngramError && error.data?.over_budget === true) return {...item, status: 'refused', refusal: error.message}
    throw error
  }
}

/**
 * `--branch`: the proposals are committed on `dream/<yyyy-mm-dd>`, made from the current
 * branch, which is checked out again afterwards; the owner merges the branch (or checks it
 * out) to review them. Refused over uncommitted changes or when the branch exists.
 */
async function openBranch(store: Store, now: Date): Promise<{name: string; close: () => Promise<void>}> {
  const name = `dream/${now.toISOString().slice(0, 10)}`
  const status = await gitRead(store.top, ['status', '--porcelain', '--untracked-files=no'])
  if (status.trim()) throw new EngramError('conflict', 'The store has uncommitted changes; --branch needs a clean work tree.', {nextStep: 'commit or discard them (`git status`), then dream again'})
  const from = (await gitRead(store.top, ['symbolic-ref', '--short', '-q', 'HEAD'], {allowFail: true})).trim()
  if (!from) throw new EngramError('conflict', 'HEAD is detached; --branch makes the dream branch from a branch.', {nextStep: 'check out your branch first'})
  if ((await gitRead(store.top, ['rev-parse', '--verify', '-q', `refs/heads/${name}`], {allowFail: true})).trim()) {
    throw new EngramError('conflict', `Branch ${name} exists already (dreamed today).`, {nextStep: `merge it (\`git merge ${name}\`) or delete it (\`git branch -D ${name}\`), then dream again`})
  }
  await gitWrite(store.top, ['switch', '-q', '-c', name])
  return {name, close: async () => void (await gitWrite(store.top, ['switch', '-q', from]))}
}
