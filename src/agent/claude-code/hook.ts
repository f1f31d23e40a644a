import {appendFileSync, existsSync} from 'node:fs'
import {basename, isAbsolute, join, resolve} from 'node:path'

import {buildContext, buildRecall, renderContext} from '../../core/serve/context.js'
import {readBinding, rememberedBinding, writeBinding} from '../../core/session/bind.js'
import {clearPendingTaint, pendingTaint, recordPendingTaint} from '../../core/session/pending.js'
import {recordPrompt} from '../../core/session/prompts.js'
import {CLAUDE_CODE_HOST, forgetProcessJoin, hostProcess, recordProcessJoin} from '../../core/session/procjoin.js'
import {SessionRecord, endSession, loadSession, sessionIdInUse, startSession, taintSession} from '../../core/session/sessions.js'
import {EngramError, isEngramError, refused} from '../../core/store/errors.js'
import {withStoreLock} from '../../core/store/lock.js'
import {sessionSecret, sessionToken} from '../../core/store/private.js'
import {projectScopeFor} from '../../core/store/scope.js'
import {Store} from '../../core/store/store.js'
import {rootNotPinned} from '../../core/trust/keys.js'
import {clip} from '../../core/text/clip.js'
import {EVENT_NAMES, HookEvent, HookPayload, MAX_PAYLOAD_BYTES, parseCutPayload, parsePayload} from './payload.js'
import {taintLine, taintReason} from './taint.js'

export const HOST = CLAUDE_CODE_HOST

export interface HookOptions {
  /** --base: the store folder, over everything else */
  base?: string
  agent: string
  assigned?: string
  reads: string[]
  budget: number
  taintTools: string[]
  taintCommands: string[]
  /** how long a taint waits for the store lock before it is kept outside the store */
  lockTimeoutMs: number
}

/** What the hook says: JSON for Claude Code on stdout (or nothing), lines for the person on stderr, the exit code. */
export interface HookAnswer {
  stdout?: unknown
  stderr: string[]
  exit: number
}

/** Exit codes as Claude Code reads them: 0 ok, 2 would block (never used), anything else a non-blocking error. */
const FAILED = 1
const REFUSED = 3

const line = (m: string) => `engram hook: ${m.replace(/\s+/g, ' ').trim()}`
const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e))

/**
 * The store folder a hook works on: --base; else ENGRAM_BASE, a relative one taken from the
 * project root (CLAUDE_PROJECT_DIR), so `ENGRAM_BASE=memory` holds from any subfolder; else
 * `$CLAUDE_PROJECT_DIR/memory` when it is a store; else the nearest store upward from the
 * folder the payload names.
 */
export function storeLocation(opts: {base?: string}, env: NodeJS.ProcessEnv, cwd: string | undefined): {base?: string; from?: string} {
  const project = env.CLAUDE_PROJECT_DIR && isAbsolute(env.CLAUDE_PROJECT_DIR) ? env.CLAUDE_PROJECT_DIR : undefined
  const here = cwd && isAbsolute(cwd) ? cwd : process.cwd()
  if (opts.base) return {base: resolve(opts.base)}
  const eb = env.ENGRAM_BASE
  if (eb) return {base: isAbsolute(eb) ? eb : resolve(project ?? here, eb)}
  if (project && existsSync(join(project, 'memory', '.engram'))) return {base: join(project, 'memory')}
  return {from: here}
}

/** `project:<the project folder's name>`, lower-cased and made a scope name ("My Project" → project:my-project). */
export function defaultAssigned(env: NodeJS.ProcessEnv, cwd: string | undefined): string {
  if (env.ENGRAM_ASSIGNED) return env.ENGRAM_ASSIGNED
  return projectScopeFor(basename(env.CLAUDE_PROJECT_DIR || cwd || process.cwd()))
}

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`

async function openStore(opts: HookOptions, env: NodeJS.ProcessEnv, p: HookPayload): Promise<Store> {
  const where = storeLocation(opts, env, p.cwd)
  return Store.open(where.base, {from: where.from})
}

/**
 * The session bound to this host session, verified: the committed binding when it verifies,
 * else the private copy made with it (an agent that deletes or edits the store's binding
 * file still gets its real session tainted and ended).
 */
async function boundSession(store: Store, p: HookPayload, privateCopy = true): Promise<{session?: SessionRecord; problem?: string}> {
  const found = readBinding(store, HOST, p.session_id)
  const candidates: string[] = []
  if (found.binding) candidates.push(found.binding.session)
  const mine = privateCopy ? rememberedBinding(HOST, p.session_id) : undefined
  if (mine && mine.store === store.root && !candidates.includes(mine.session)) candidates.push(mine.session)
  let problem = found.binding ? undefined : found.problem
  for (const id of candidates) {
    try {
      return {session: await loadSession(store, id), problem}
    } catch (error) {
      problem = `the bound session ${id} does not load (${messageOf(error)})`
    }
  }
  return {problem}
}

/** Inside an agent session (ENGRAM_SESSION set), a hook may act only for that very session. */
function refuseOtherSession(event: HookEvent, bound: string | undefined): void {
  const inUse = sessionIdInUse()
  if (inUse === undefined) return
  if (bound !== inUse) {
    throw refused(`engram hook ${event} runs for the harness: inside agent session ${inUse} it acts for no other Claude Code session.`, 'hooks are run by Claude Code itself, outside the agent\'s shell')
  }
}

/** A taint kept outside the store goes in now; a failure leaves it waiting (it still counts). */
async function flushPending(store: Store, id: string, opts: HookOptions, say: string[]): Promise<void> {
  const reasons = pendingTaint(store.root, id)
  if (!reasons) return
  try {
    await taintSession(store, id, reasons, {timeoutMs: opts.lockTimeoutMs})
    clearPendingTaint(store.root, id, reasons)
  } catch (error) {
    say.push(line(`a taint of session ${id} still waits outside the store (${messageOf(error)}); the session counts as tainted.`))
  }
}

async function sessionStart(p: HookPayload, opts: HookOptions, env: NodeJS.ProcessEnv, say: string[]): Promise<HookAnswer> {
  const store = await openStore(opts, env, p)
  // only a binding that verifies continues a session: anything else starts a new, tainted one
  const found = await boundSession(store, p, false)
  refuseOtherSession('session-start', found.session?.id)
  if (found.problem) say.push(line(`${found.problem}; this Claude Code session gets a new, tainted engram session.`))
  let session = found.session
  let started = false
  if (!session || session.ended) {
    // fail closed: a continuation engram did not see start, or whose binding does not verify,
    // may have read anything; an ended session's taint carries over to the one that follows it
    const reasons = session ? [...session.taint_reasons] : []
    if (session) reasons.push(`continues ended session ${session.id}`)
    else if (found.problem) reasons.push(`Claude Code session whose binding did not verify (${clip(found.problem, 120)})`)
    else if (p.source !== 'startup') reasons.push(`resumed a Claude Code session engram did not see start (source: ${clip(p.source, 20)})`)
    const tainted = (session?.tainted ?? false) || (!session && (Boolean(found.problem) || p.source !== 'startup'))
    // this hook sees every prompt the user submits: the session's direct_chat writes are checked against them (prompts.ts)
    const made = await startSession(store, {agent: opts.agent, assigned: opts.assigned ?? defaultAssigned(env, p.cwd), reads: opts.reads, tainted, reasons: tainted ? reasons : [], recordPrompts: true})
    await withStoreLock(store, () => writeBinding(store, HOST, p.session_id, made.id, `source: ${clip(p.source, 20)}${session ? `; follows ended ${session.id}` : ''}`))
    session = await loadSession(store, made.id)
    started = true
  } else {
    await flushPending(store, session.id, opts, say)
    session = await loadSession(store, session.id)
  }
  // the Claude Code process this hook runs for (a /clear gives a new session_id in the same process): its MCP server serves this session from now on
  const proc = hostProcess()
  if (proc) {
    try {
      recordProcessJoin(HOST, store.root, proc, session.id, p.session_id)
    } catch (error) {
      // the session before (a /clear's) must not stay in force for the MCP server: no record, its own session, tainted
      forgetProcessJoin(HOST, store.root, proc)
      say.push(line(`could not record which session Claude Code process ${proc.pid} is bound to (${messageOf(error)}); engram mcp of this process serves a session of its own, tainted.`))
    }
  }
  const token = sessionToken(sessionSecret(false), session.id)
  if (env.CLAUDE_ENV_FILE) {
    try {
      appendFileSync(env.CLAUDE_ENV_FILE, [`export ENGRAM_SESSION=${shellQuote(session.id)}`, `export ENGRAM_SESSION_TOKEN=${shellQuote(token)}`, `export ENGRAM_BASE=${shellQuote(store.root)}`, ''].join('\n'))
    } catch (error) {
      say.push(line(`could not append the session to CLAUDE_ENV_FILE (${messageOf(error)}); the agent's engram commands will not know their session.`))
    }
  }
  const notice = await rootNotPinned(store)
  if (notice) say.push(line(notice.message))
  const block = await buildContext(store, session, {budget: opts.budget})
  const status = `engram session ${session.id} (${started ? 'started' : 'continued'}; agent ${session.agent}, assigned ${session.assigned}${session.tainted ? ', tainted: its writes are marked so' : ''}). Propose memory with \`engram write\`; it is reviewed before it is served.`
  const context = `${status}\n${notice ? `${notice.message}\n` : ''}\n${renderContext(block, 'markdown')}`
  return {stdout: {hookSpecificOutput: {hookEventName: EVENT_NAMES['session-start'], additionalContext: context}}, stderr: say, exit: 0}
}

async function userPromptSubmit(p: HookPayload, opts: HookOptions, env: NodeJS.ProcessEnv, say: string[]): Promise<HookAnswer> {
  const store = await openStore(opts, env, p)
  const {session, problem} = await boundSession(store, p)
  refuseOtherSession('user-prompt-submit', session?.id)
  if (!session) return {stderr: [...say, line(`no engram session is bound to this Claude Code session${problem ? ` (${problem})` : ''}; no memory recalled.`)], exit: FAILED}
  await flushPending(store, session.id, opts, say)
  // Claude Code runs its hooks outside the agent's shell, where ENGRAM_SESSION is not set: one run
  // with it set is the agent's own, and a prompt it makes up is no prompt the user typed
  if (session.prompts === 'recorded' && sessionIdInUse() !== undefined) {
    say.push(line(`inside agent session ${session.id} this hook records no prompt: only Claude Code's own run of it sees what the user typed.`))
  } else if (session.prompts === 'recorded') {
    try {
      recordPrompt(store.root, session.id, p.prompt ?? '')
    } catch (error) {
      // fail closed: a value of this prompt is not known as typed, so a write stating it is read as third-party text
      say.push(line(`could not record this prompt's values for session ${session.id} (${messageOf(error)}); a write stating them is read as third-party text.`))
    }
  }
  const block = await buildRecall(store, session, p.prompt ?? '', {limit: 5})
  if (block.entries.length === 0) return {stderr: say, exit: 0}
  const context = renderContext(block, 'markdown').replace(/^# engram memory/, '# engram memory: recalled for this prompt')
  return {stdout: {hookSpecificOutput: {hookEventName: EVENT_NAMES['user-prompt-submit'], additionalContext: context}}, stderr: say, exit: 0}
}

/**
 * The stdin a hook was given: its text, or, past MAX_PAYLOAD_BYTES, the part read (`cut`).
 * A string is a payload read whole.
 */
export type HookInput = string | {head: string; cut: true}

async function postToolUse(event: HookEvent, p: HookPayload, opts: HookOptions, env: NodeJS.ProcessEnv, say: string[], unread = false): Promise<HookAnswer> {
  const list = {tools: [...opts.taintTools], commands: [...opts.taintCommands]}
  let store: Store | undefined
  let openError: unknown
  try {
    store = await openStore(opts, env, p)
    list.tools.push(...store.config.taint.tools)
    list.commands.push(...store.config.taint.commands)
  } catch (error) {
    openError = error
  }
  // a tool whose name or input was past the part read, or whose input cannot be read, taints: what it did cannot be told (fail closed)
  const unknown = (why: string) => taintLine(EVENT_NAMES[event], p.tool_name ?? 'a tool', `(${why})`)
  let reason: string | undefined
  if (unread) reason = unknown(`a payload over ${MAX_PAYLOAD_BYTES / 1024 / 1024} MiB, its tool input not read`)
  else {
    try {
      reason = taintReason(EVENT_NAMES[event], p.tool_name ?? '', p.tool_input ?? {}, list)
    } catch {
      reason = unknown('its tool input could not be read')
    }
  }
  let target: {root: string; session: string} | undefined
  if (store) {
    // no refusal inside a session here: a taint only ever adds to what a session is marked with
    const {session} = await boundSession(store, p)
    if (session) target = {root: store.root, session: session.id}
  } else {
    // the store does not open: the private copy of the binding still names the session
    const mine = rememberedBinding(HOST, p.session_id)
    if (mine) target = {root: mine.store, session: mine.session}
  }
  if (!target) {
    // a tool that taints nothing needs no session (and no word: this hook runs after every matched tool)
    if (!reason) return {stderr: say, exit: 0}
    return {stderr: [...say, line(`no engram session is bound to this Claude Code session${openError ? ` (${messageOf(openError)})` : ''}; nothing to taint.`)], exit: FAILED}
  }
  if (!reason) {
    if (store) await flushPending(store, target.session, opts, say)
    return {stderr: say, exit: 0}
  }
  try {
    if (!store) throw openError
    const waiting = pendingTaint(store.root, target.session) ?? []
    await taintSession(store, target.session, [...waiting, reason], {timeoutMs: opts.lockTimeoutMs})
    clearPendingTaint(store.root, target.session, waiting)
    return {stderr: say, exit: 0}
  } catch (error) {
    // fail closed: a taint that cannot be recorded in the store is kept outside it, and counts
    let kept: string
    try {
      kept = recordPendingTaint(target.root, target.session, reason)
    } catch (error2) {
      return {stderr: [...say, line(`could not record the taint of session ${target.session} anywhere (${messageOf(error)}; ${messageOf(error2)}): stop the session, its writes may not be marked tainted.`)], exit: FAILED}
    }
    return {stderr: [...say, line(`could not record the taint of session ${target.session} in the store (${messageOf(error)}); kept at ${kept}: the session counts as tainted, and the next hook records it.`)], exit: FAILED}
  }
}

async function sessionEnd(p: HookPayload, opts: HookOptions, env: NodeJS.ProcessEnv, say: string[]): Promise<HookAnswer> {
  const store = await openStore(opts, env, p)
  const {session} = await boundSession(store, p)
  refuseOtherSession('session-end', session?.id)
  if (!session) return {stderr: say, exit: 0}
  await flushPending(store, session.id, opts, say)
  await endSession(store, session.id, `Claude Code session ended (${clip(p.reason ?? 'no reason given', 40)})`)
  return {stderr: say, exit: 0}
}

/** One hook event: parse the payload, act, answer. Never throws: every failure is one line and a non-blocking exit. */
export async function runHook(event: HookEvent, input: HookInput, opts: HookOptions, env: NodeJS.ProcessEnv = process.env): Promise<HookAnswer> {
  const say: string[] = []
  try {
    // an empty ENGRAM_SESSION is a broken session, whoever runs: refused before anything is read
    sessionIdInUse()
    if (typeof input !== 'string') {
      // only the tool events read a cut payload (parseCutPayload refuses the others)
      const cut = parseCutPayload(event, input.head)
      return await postToolUse(event, cut.payload, opts, env, say, !cut.whole)
    }
    const p = parsePayload(event, input)
    if (event === 'session-start') return await sessionStart(p, opts, env, say)
    if (event === 'user-prompt-submit') return await userPromptSubmit(p, opts, env, say)
    if (event === 'session-end') return await sessionEnd(p, opts, env, say)
    return await postToolUse(event, p, opts, env, say)
  } catch (error) {
    const refusedHere = isEngramError(error) && (error as EngramError).code === 'refused' && /inside agent session|ENGRAM_SESSION is set/.test(error.message)
    const what = event === 'session-start' || event === 'user-prompt-submit' ? 'no memory for this session: ' : ''
    return {stderr: [...say, line(`${what}${messageOf(error)}`)], exit: refusedHere ? REFUSED : FAILED}
  }
}
