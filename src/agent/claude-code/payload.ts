import {badInput} from '../../core/store/errors.js'

/**
 * Claude Code's hook input (its hooks reference, "Hook input"): every event sends
 * `session_id`, `transcript_path`, `cwd`, `hook_event_name` (and `permission_mode`);
 * SessionStart adds `source` (startup | resume | clear | compact), UserPromptSubmit
 * `prompt`, PostToolUse and PostToolUseFailure `tool_name`, `tool_input`, `tool_response`
 * (the failure: `error`), SessionEnd `reason`. engram relies on these fields only.
 */
export const HOOK_EVENTS = ['session-start', 'user-prompt-submit', 'post-tool-use', 'post-tool-use-failure', 'session-end'] as const
export type HookEvent = (typeof HOOK_EVENTS)[number]

/** The `hook_event_name` Claude Code sends for each event (and answers with in hookSpecificOutput). */
export const EVENT_NAMES: Record<HookEvent, string> = {
  'session-start': 'SessionStart',
  'user-prompt-submit': 'UserPromptSubmit',
  'post-tool-use': 'PostToolUse',
  'post-tool-use-failure': 'PostToolUseFailure',
  'session-end': 'SessionEnd',
}

export interface HookPayload {
  session_id: string
  transcript_path?: string
  cwd?: string
  hook_event_name?: string
  /** SessionStart: how the session began; anything but `startup` is a continuation */
  source: string
  prompt?: string
  tool_name?: string
  tool_input?: Record<string, unknown>
  error?: string
  reason?: string
}

const bad = (event: HookEvent, problem: string) =>
  badInput(`engram hook ${event}: ${problem}`, 'run it as a Claude Code hook, which sends the event as JSON on stdin')

function optionalString(r: Record<string, unknown>, key: string, event: HookEvent): string | undefined {
  const v = r[key]
  if (v === undefined || v === null) return undefined
  if (typeof v !== 'string') throw bad(event, `"${key}" must be a string.`)
  return v
}

/**
 * The most a hook reads of its stdin. Claude Code clips what its tools return (shell output,
 * MCP results) long before this, so a payload this large is an anomaly; it is never held
 * whole. What a taint is decided on, the tool's name and input, comes before the tool's
 * response in the payload and is read from the part that was read (README "Claude Code hooks").
 */
export const MAX_PAYLOAD_BYTES = 8 * 1024 * 1024

/** Parse and check one event's payload; anything else is bad input, before anything is read or written. */
export function parsePayload(event: HookEvent, text: string): HookPayload {
  if (text.trim() === '') throw bad(event, 'no payload on stdin.')
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw bad(event, 'the payload on stdin is not JSON.')
  }
  return checkPayload(event, parsed)
}

/**
 * A payload cut at MAX_PAYLOAD_BYTES: its members read whole, checked as a whole payload's
 * are. Only the tool events read one, so that a long response cannot cost a taint; `whole`
 * says whether the tool's name and input, all a taint is decided on, were among them.
 */
export function parseCutPayload(event: HookEvent, head: string): {payload: HookPayload; whole: boolean} {
  const over = `the payload is over ${MAX_PAYLOAD_BYTES / 1024 / 1024} MiB`
  if (event !== 'post-tool-use' && event !== 'post-tool-use-failure') throw bad(event, `${over} and was not read.`)
  const members = completeMembers(head)
  if (typeof members.session_id !== 'string') throw bad(event, `${over}, and the part read names no "session_id".`)
  const name = typeof members.tool_name === 'string' && members.tool_name !== '' ? members.tool_name : undefined
  const whole = name !== undefined && 'tool_input' in members
  return {payload: checkPayload(event, whole ? members : {...members, tool_name: name ?? 'a tool', tool_input: {}}), whole}
}

const skipSpace = (t: string, i: number) => {
  while (i < t.length && (t[i] === ' ' || t[i] === '\n' || t[i] === '\r' || t[i] === '\t')) i++
  return i
}

/** Where the JSON string opening at t[i] ends (one past its closing quote), or -1 if the text ends first. */
function stringEnd(t: string, i: number): number {
  for (let j = i + 1; j < t.length; j++) {
    if (t[j] === '\\') j++
    else if (t[j] === '"') return j + 1
  }
  return -1
}

/** Where the JSON value starting at t[i] ends, or -1 if the text ends first. */
function valueEnd(t: string, i: number): number {
  if (t[i] === '"') return stringEnd(t, i)
  if (t[i] === '{' || t[i] === '[') {
    let depth = 0
    for (let j = i; j < t.length; j++) {
      const c = t[j]
      if (c === '"') {
        const e = stringEnd(t, j)
        if (e < 0) return -1
        j = e - 1
      } else if (c === '{' || c === '[') depth++
      else if ((c === '}' || c === ']') && --depth === 0) return j + 1
    }
    return -1
  }
  // a number, true, false or null ends at a delimiter, which must have been read too
  let j = i
  while (j < t.length && !',}] \n\r\t'.includes(t[j])) j++
  return j < t.length && j > i ? j : -1
}

/**
 * The top-level members of a JSON object's text that end before the text does, each read by
 * JSON.parse (a later duplicate wins, as in JSON.parse). A text cut anywhere gives the members
 * before the cut; the member cut, and any after it, are left out.
 */
export function completeMembers(text: string): Record<string, unknown> {
  // no prototype: a member named "__proto__" is a member, as JSON.parse makes it
  const out: Record<string, unknown> = Object.create(null)
  let i = skipSpace(text, 0)
  if (text[i] !== '{') return out
  i++
  for (;;) {
    i = skipSpace(text, i)
    if (text[i] !== '"') return out
    const keyEnd = stringEnd(text, i)
    if (keyEnd < 0) return out
    const keyText = text.slice(i, keyEnd)
    i = skipSpace(text, keyEnd)
    if (text[i] !== ':') return out
    const start = skipSpace(text, i + 1)
    const end = valueEnd(text, start)
    if (end < 0) return out
    try {
      out[JSON.parse(keyText) as string] = JSON.parse(text.slice(start, end))
    } catch {
      return out
    }
    i = skipSpace(text, end)
    if (text[i] !== ',') return out
    i++
  }
}

function checkPayload(event: HookEvent, parsed: unknown): HookPayload {
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw bad(event, 'the payload is not a JSON object.')
  const r = parsed as Record<string, unknown>
  const id = r.session_id
  if (typeof id !== 'string' || id.trim() === '') throw bad(event, 'the payload has no "session_id" string.')
  if (id.length > 200 || /[\u0000-\u001f\u007f]/.test(id)) throw bad(event, '"session_id" is not a session id (too long, or control characters).')
  const name = optionalString(r, 'hook_event_name', event)
  if (name !== undefined && name !== EVENT_NAMES[event]) throw bad(event, `the payload is a ${name.slice(0, 40)} event, not ${EVENT_NAMES[event]}: check the hook's command in .claude/settings.json.`)
  const cwd = optionalString(r, 'cwd', event)
  const p: HookPayload = {session_id: id, cwd, transcript_path: optionalString(r, 'transcript_path', event), hook_event_name: name, source: optionalString(r, 'source', event) ?? 'startup'}
  if (event === 'user-prompt-submit') {
    const prompt = r.prompt
    if (typeof prompt !== 'string') throw bad(event, 'the payload has no "prompt" string.')
    p.prompt = prompt
  }
  if (event === 'post-tool-use' || event === 'post-tool-use-failure') {
    const tool = r.tool_name
    if (typeof tool !== 'string' || tool === '') throw bad(event, 'the payload has no "tool_name" string.')
    p.tool_name = tool
    const input = r.tool_input
    if (input !== undefined && input !== null && (typeof input !== 'object' || Array.isArray(input))) throw bad(event, '"tool_input" must be an object.')
    p.tool_input = (input ?? {}) as Record<string, unknown>
    p.error = typeof r.error === 'string' ? r.error : undefined
  }
  if (event === 'session-end') p.reason = optionalString(r, 'reason', event)
  return p
}
