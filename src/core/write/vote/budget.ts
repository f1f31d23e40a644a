/**
 * The write path's text work under a time budget (README "The write path", "Known limits").
 * Redaction, normalisation and the vote's checks are regular expressions and loops over text
 * that an agent writes; each is meant to run in time linear in the text's length, and the ones
 * audits found were not are rewritten (test/unit/vote-linear-*.test.ts). A pattern no audit
 * found could still cost the square of some long run, and a synchronous pattern cannot be
 * interrupted in the thread that runs it: so a large write's text is redacted and read
 * (prepareWithin), voted on (runVoteWithin), and at review its flags recomputed
 * (textFlagsWithin) in a worker thread, each stopped after `vote.budget_ms` of CPU time (signed
 * config): the write refused, quarantined, or its flags shown unchecked — never accepted
 * unexamined. A small write stays in this thread: its cost is bounded by its size, and a
 * worker's start (loading the modules and the learned model, tens of milliseconds) would
 * double the cost of a typical write.
 */
import {Worker} from 'node:worker_threads'
import {join} from 'node:path'
import {packageRoot} from '../../store/package-root.js'
import {normalise} from '../normalise.js'
import {rulesNowInForce} from '../redact/index.js'
import type {PreparedText, RedactionRules} from '../prepare.js'
import {EXIT_CODES, EngramError, type ErrorCode} from '../../store/errors.js'
import {flagsFrom, instructionHits} from './flags.js'
import {externalPayload, runExternal} from './external.js'
import {decide, lookUpNeighbours, runVote} from './index.js'
import type {FlagHit, Neighbour, VoteContext, VoteResult, WriteCandidate} from './types.js'

/** Text of at least this many bytes (voteTextBytes for a vote; title and body otherwise) goes to a worker, under the budget. */
export const WORKER_FROM_BYTES = 8 * 1024

/** What the worker is given: everything runVote needs, with the neighbours already looked up… */
export interface VoteJob {
  kind: 'vote'
  /** the redaction rules in force in this thread (a worker's own start empty): what a reason or a flag quotes is redacted with them */
  rules: {kind: string; pattern: string}[]
  candidate: WriteCandidate
  neighbours: Neighbour[]
  lookupError?: string
  recentWrites: VoteContext['recentWrites']
  config: VoteContext['config']
  cwd?: string
}

/** …or a stored entry's text, whose flags review recomputes (review/recheck.ts). */
export interface FlagsJob {
  kind: 'flags'
  rules: {kind: string; pattern: string}[]
  candidate: Omit<WriteCandidate, 'normalised'>
}

/** …or a large write's text, to redact and read before the write is planned (prepare.ts). */
export interface PrepareJob {
  kind: 'prepare'
  rules: {kind: string; pattern: string}[]
  raw: string
  title0?: string
  tags?: string[]
  extra: RedactionRules
}

/**
 * prepareText, in a worker under `budgetMs` when the text is large; undefined for a small one
 * (planWrite prepares it in the process). Past the budget nothing can be stored — not even in
 * quarantine, since the text was not redacted — so the write is refused (exit 3), nothing written.
 */
export async function prepareWithin(raw: string, title0: string | undefined, tags: string[] | undefined, extra: RedactionRules, budgetMs: number, fromBytes = WORKER_FROM_BYTES): Promise<PreparedText | undefined> {
  if (Buffer.byteLength(raw) + Buffer.byteLength(title0 ?? '') < fromBytes) return undefined
  const job: PrepareJob = {kind: 'prepare', rules: rulesNowInForce(), raw, ...(title0 === undefined ? {} : {title0}), ...(tags ? {tags} : {}), extra}
  const run = await inWorker<PreparedText>(workerScript(), job, budgetMs)
  if (run.finished) return run.value
  throw new EngramError('refused', `The write's text could not be redacted and read within ${budgetMs} ms of CPU time (vote.budget_ms); nothing was written.`, {
    nextStep: 'write it in smaller parts, or ask the owner to raise vote.budget_ms in the signed config',
    data: {over_budget: true, budget_ms: budgetMs},
  })
}

/** The flags a text raises by itself (no neighbours: contradiction and duplicate need the store as it was). */
export function textFlags(c: Omit<WriteCandidate, 'normalised'>): FlagHit[] {
  const full: WriteCandidate = {...c, normalised: normalise(c.body)}
  return flagsFrom(full, {hits: instructionHits(full), findings: []})
}

/**
 * textFlags, in a worker under `budgetMs` when the text is large: review recomputes a stored
 * entry's flags each time it is shown, and the entry may be the very write whose vote ran out
 * of time. Undefined when the budget ran out.
 */
export async function textFlagsWithin(c: Omit<WriteCandidate, 'normalised'>, budgetMs: number, fromBytes = WORKER_FROM_BYTES): Promise<FlagHit[] | undefined> {
  if (Buffer.byteLength(c.title) + c.bodyBytes < fromBytes) return textFlags(c)
  const job: FlagsJob = {kind: 'flags', rules: rulesNowInForce(), candidate: c}
  const run = await inWorker<FlagHit[]>(workerScript(), job, budgetMs)
  return run.finished ? run.value : undefined
}

/** The worker's script: compiled beside this module in dist/ (the bundles in dist/fast/ hold no worker). */
export const workerScript = (): string => join(packageRoot(), 'dist', 'core', 'write', 'vote', 'vote-worker.js')

/** The vote a write gets when its vote overran the budget: a veto that names the budget. */
export function overBudget(c: WriteCandidate, budgetMs: number): VoteResult {
  const kib = Math.max(1, Math.round((Buffer.byteLength(c.title) + c.bodyBytes) / 1024))
  const reason = `the vote did not finish within ${budgetMs} ms of CPU time on this ${kib} KiB write (vote.budget_ms): held for review, not judged`
  return {
    passed: false,
    dissent: false,
    votes: [{validator: 'budget', verdict: 'reject', confidence: 1, reason}],
    flags: [],
    summary: `failed: ${reason}`,
  }
}

/**
 * runVote, in a worker under `budgetMs` when the write is large (`fromBytes`). The neighbours
 * are looked up here (the lookup reads this process's store and index) and handed over. An
 * error inside the worker is thrown here as runVote would throw it; only running out of time
 * turns into a verdict.
 */
export async function runVoteWithin(c: WriteCandidate, ctx: VoteContext, budgetMs: number, fromBytes = WORKER_FROM_BYTES): Promise<VoteResult> {
  if (voteTextBytes(c) < fromBytes) return runVote(c, ctx)
  // looked up here: the lookup reads this process's store and index
  const {neighbours, lookupError} = await lookUpNeighbours(c, ctx)
  // External validators run here, after the worker: a worker stopped mid-vote takes their
  // timers with it, and the processes it had started would run on past their own timeouts.
  const job: VoteJob = {kind: 'vote', rules: rulesNowInForce(), candidate: c, neighbours, lookupError, recentWrites: ctx.recentWrites, config: {...ctx.config, external: []}, cwd: ctx.cwd}
  const run = await inWorker<VoteResult>(workerScript(), job, budgetMs)
  if (!run.finished) return overBudget(c, budgetMs)
  if (ctx.config.external.length === 0) return run.value
  const payload = externalPayload(c, run.value.flags)
  const votes = [...run.value.votes, ...(await Promise.all(ctx.config.external.map((e) => runExternal(e, payload, ctx.cwd))))]
  return {...decide(votes, ctx.config), votes, flags: run.value.flags}
}

/**
 * The bytes of text the vote reads: the title, the body, what hidden characters spelled and
 * encoded blobs decode to (the checks read those too), and the file an update replaces.
 */
export function voteTextBytes(c: WriteCandidate): number {
  const texts = [c.title, ...c.normalised.decoded, ...c.normalised.hidden, c.baseBody ?? '']
  return c.bodyBytes + texts.reduce((n, t) => n + Buffer.byteLength(t), 0)
}

/**
 * Run `script` in a worker thread with `data` and wait for its `{result}` (after an optional
 * `{ready}` once its modules are loaded), at most
 * `budgetMs` of CPU time; past that the worker is stopped where it stands (V8 interrupts even a
 * regular expression mid-match) and `{finished: false}` is returned. An error inside the worker,
 * or its exit before it answers, is thrown.
 */
export function inWorker<T>(script: string, data: unknown, budgetMs: number): Promise<{finished: true; value: T} | {finished: false}> {
  return new Promise((resolve, reject) => {
    let settled = false
    const worker = new Worker(script, {workerData: data})
    const finish = (fn: () => void): void => {
      if (settled) return
      settled = true
      clearInterval(poll)
      clearTimeout(cap)
      void worker.terminate()
      fn()
    }
    // The budget is CPU time: this process's, which is the worker's while this thread waits. A
    // loaded machine, or a process stopped by a signal, does not run it out; the wall clock's
    // limit, three times the budget and a second, still ends every job. It counts from the
    // worker's {ready} (its modules loaded: 45 to 70 ms that are no text's doing), or from its start.
    let started = process.cpuUsage()
    const poll = setInterval(() => {
      const used = process.cpuUsage(started)
      if ((used.user + used.system) / 1000 >= budgetMs) finish(() => resolve({finished: false}))
    }, Math.min(50, budgetMs))
    const cap = setTimeout(() => finish(() => resolve({finished: false})), budgetMs * 3 + 1000)
    worker.on('message', (m: {ready: true} | {result: T}) => {
      if ('ready' in m) started = process.cpuUsage()
      else finish(() => resolve({finished: true, value: m.result}))
    })
    // an engram error thrown in the worker arrives as a plain Error that kept its code: made one again
    worker.once('error', (error: Error & {code?: unknown; nextStep?: string}) => finish(() => reject(
      typeof error.code === 'string' && error.code in EXIT_CODES ? new EngramError(error.code as ErrorCode, error.message, {nextStep: error.nextStep}) : error,
    )))
    worker.once('exit', (code) => finish(() => reject(new Error(`the vote's worker stopped (exit code ${code}) before it answered`))))
  })
}
