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

/** Parse and check one event's payload; anything else is bad input, before anything is read or written. */
export function parsePayload(event: HookEvent, text: string): HookPayload {
  if (text.trim() === '') throw bad(event, 'no payload on stdin.')
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw bad(event, 'the payload on stdin is not JSON.')
  }
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
