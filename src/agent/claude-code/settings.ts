/**
 * What `engram adopt claude-code` asks of Claude Code's project settings, and the merge
 * that keeps whatever else a project already has (README "Claude Code", STANDARD R27).
 *
 * The confinement rests on keys Claude Code consults (its settings, permissions and
 * sandbox documentation): `permissions.deny` with `Read(...)`/`Edit(...)` rules (Edit
 * covers every file-editing tool; a `Write(...)` rule is never consulted), Bash prefix
 * rules for the owner's commands, `sandbox.filesystem.denyRead`/`denyWrite` for what the
 * agent's shell may touch, `sandbox.allowUnsandboxedCommands: false` so a command cannot
 * ask to leave the sandbox, and `autoMemoryEnabled: false` so Claude Code's own
 * unreviewed memory does not run beside engram. Paths are given twice: anchored to the
 * project (`/memory/**`, portable) and absolute (`//abs/memory/**`, unambiguous on this
 * machine), because the anchoring of a leading `/` has changed between releases.
 */
import {posix, relative, sep} from 'node:path'

export type Json = null | boolean | number | string | Json[] | {[k: string]: Json}
export type JsonObject = {[k: string]: Json}

export interface SettingsInput {
  /** absolute project root */
  project: string
  /** absolute store folder */
  store: string
  /** absolute engram config folder (keys, trust pins, the session secret) */
  configDir: string
  /** the user's home, to write `~/` rules when the config folder is under it */
  home: string
  /** how a hook or MCP server starts engram (absolute, so the agent's PATH cannot redirect it) */
  command: string
  assigned: string
  agent: string
  /** other files that unlock the owner key (ENGRAM_PASSPHRASE_FILE, ENGRAM_KEY) when they live outside the config folder */
  secrets?: string[]
  /** tools the store's signed config adds to the taint list (`taint.tools`): the hook must see them */
  taintTools?: string[]
}

/**
 * The tools whose use may taint (engram's hook decides, from its configurable list):
 * every PostToolUse hook is one engram process, so it runs only for these. A tool added
 * to the taint list by name must be added here too.
 */
export const TAINT_MATCHER = 'WebFetch|WebSearch|Bash|mcp__.*'

/** The engram events and the Claude Code hook events they answer. */
/** The PostToolUse matcher for the built-in taint tools and those a store's config adds (a trailing `*` is a prefix). */
export function taintMatcher(extra: string[] = []): string {
  const esc = (n: string) => (n.endsWith('*') ? `${n.slice(0, -1).replace(/[.+?^${}()|[\]\\]/g, '\\$&')}.*` : n.replace(/[.+?^${}()|[\]\\*]/g, '\\$&'))
  const more = [...new Set(extra)].filter((n) => !['WebFetch', 'WebSearch', 'Bash'].includes(n) && !n.startsWith('mcp__')).map(esc)
  return [TAINT_MATCHER, ...more].join('|')
}

export const HOOK_EVENTS: readonly {claude: string; engram: string; matcher?: string}[] = [
  {claude: 'SessionStart', engram: 'session-start', matcher: 'startup|resume|clear|compact'},
  {claude: 'UserPromptSubmit', engram: 'user-prompt-submit'},
  {claude: 'PostToolUse', engram: 'post-tool-use', matcher: TAINT_MATCHER},
  {claude: 'PostToolUseFailure', engram: 'post-tool-use-failure', matcher: TAINT_MATCHER},
  {claude: 'SessionEnd', engram: 'session-end'},
]

/** Owner actions an agent's Bash is never let run (the sandbox keeps it from the store anyway). */
export const OWNER_COMMANDS = [
  'review accept', 'review reject', 'quarantine release', 'quarantine purge', 'keys', 'session start', 'session taint',
  'init', 'config sign', 'manifest', 'restore', 'adopt', 'mcp', 'hook', 'serve',
]

const q = (s: string) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`)

/** The project-relative form of a path inside the project, `undefined` outside it. */
export function inProject(project: string, abs: string): string | undefined {
  const rel = relative(project, abs)
  if (rel === '' || rel.startsWith('..') || rel.startsWith(sep)) return undefined
  return rel.split(sep).join(posix.sep)
}

/** Rules for one folder (or file): the file tools may neither read nor edit it. */
function hiddenRules(input: SettingsInput, abs: string, folder = true): string[] {
  const rules: string[] = []
  const tail = folder ? '/**' : ''
  const rel = inProject(input.project, abs)
  if (rel) rules.push(`Read(/${rel}${tail})`, `Edit(/${rel}${tail})`)
  const underHome = inProject(input.home, abs)
  if (!rel && underHome) rules.push(`Read(~/${underHome}${tail})`, `Edit(~/${underHome}${tail})`)
  rules.push(`Read(/${abs}${tail})`, `Edit(/${abs}${tail})`)
  return rules
}

/**
 * What says how the agent is confined, or what it is told: the agent may not change it.
 * The whole `.claude` folder, not its files one by one (a folder whose files are
 * protected can still be renamed and replaced), so its settings, settings.local.json,
 * hooks, rules and skills (the engram skill among them: a changed skill would be
 * instructions of the agent's own making in every later session); and `.mcp.json`.
 */
export const PROTECTED = ['.claude', '.mcp.json']

export function protectedPaths(project: string): string[] {
  return PROTECTED.map((f) => posix.join(project.split(sep).join(posix.sep), f))
}

const editRule = (f: string) => (f.endsWith('.claude') ? `Edit(/${f}/**)` : `Edit(/${f})`)

/** The folders and files the agent's sandbox can neither read nor write. */
export function hiddenPaths(input: SettingsInput): string[] {
  return [input.store, input.configDir, ...(input.secrets ?? [])]
}

/** The settings engram needs, as a fragment to merge into `.claude/settings.json`. */
export function engramSettings(input: SettingsInput): JsonObject {
  const storeRel = inProject(input.project, input.store)
  const base = storeRel ? `"$CLAUDE_PROJECT_DIR"/${q(storeRel)}` : q(input.store)
  const hooks: JsonObject = {}
  for (const e of HOOK_EVENTS) {
    const extra = e.engram === 'session-start' ? ` --assigned ${q(input.assigned)} --agent ${q(input.agent)}` : ''
    const group: JsonObject = {hooks: [{type: 'command', command: `${input.command} hook ${e.engram} --base ${base}${extra}`, timeout: 30}]}
    if (e.matcher) group.matcher = e.matcher === TAINT_MATCHER ? taintMatcher(input.taintTools) : e.matcher
    hooks[e.claude] = [group]
  }
  const deny = [
    ...hiddenRules(input, input.store),
    ...hiddenRules(input, input.configDir),
    ...(input.secrets ?? []).flatMap((f) => hiddenRules(input, f, false)),
    ...PROTECTED.map(editRule),
    ...protectedPaths(input.project).map(editRule),
    // defence in depth only: `node …/run.js` is not matched; the sandbox is what keeps the store away
    ...OWNER_COMMANDS.map((c) => `Bash(engram ${c}:*)`),
  ]
  const hidden = hiddenPaths(input).map((p) => `/${p}`)
  return {
    autoMemoryEnabled: false,
    // the hooks and the MCP server find the config folder the sandbox hides, whatever environment Claude Code starts with
    env: {ENGRAM_BASE: storeRel ?? input.store, ENGRAM_CONFIG_DIR: input.configDir, CLAUDE_CODE_DISABLE_AUTO_MEMORY: '1'},
    enabledMcpjsonServers: ['engram'],
    permissions: {deny},
    sandbox: {
      enabled: true,
      // no sandbox (bubblewrap missing, say) is an error, never a silent run outside it
      failIfUnavailable: true,
      allowUnsandboxedCommands: false,
      filesystem: {denyRead: hidden, denyWrite: [...hidden, ...protectedPaths(input.project).map((f) => `/${f}`)]},
    },
    hooks,
  }
}

/** The `.mcp.json` entry: engram's MCP server, started by Claude Code outside its sandbox, on this store by absolute path. */
export function engramMcpServer(input: SettingsInput): JsonObject {
  const [cmd, ...pre] = splitCommand(input.command)
  return {command: cmd, args: [...pre, 'mcp', '--base', input.store, '--assigned', input.assigned, '--agent', input.agent]}
}

/** A command line of plain words and single-quoted words, as `q` writes them. */
export function splitCommand(command: string): string[] {
  const out: string[] = []
  const re = /'((?:[^']|'\\'')*)'|(\S+)/g
  for (const m of command.matchAll(re)) out.push(m[1] !== undefined ? m[1].replace(/'\\''/g, `'`) : m[2])
  return out
}

export {q as shellQuote}

const isObject = (v: Json | undefined): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Whether a hook group is one engram put there (any earlier version of it). */
function isEngramHookGroup(g: Json): boolean {
  if (!isObject(g) || !Array.isArray(g.hooks)) return false
  const ours = (c: string) =>
    (/\bhook (session-start|user-prompt-submit|post-tool-use|post-tool-use-failure|session-end)\b/.test(c) && /engram|run\.js/.test(c)) ||
    // the shell scripts of engram's first Claude Code template, replaced by `engram hook`
    /(^|\/)engram-(session-start|taint)\.sh$/.test(c.trim())
  return g.hooks.length > 0 && g.hooks.every((h) => isObject(h) && typeof h.command === 'string' && ours(h.command))
}

/**
 * `ours` merged into `theirs`: objects key by key, string lists as a union (their order
 * first), anything else set to ours. Hook lists keep every group that is not engram's and
 * end with engram's current ones, so running adopt again changes nothing.
 */
export function mergeSettings(theirs: Json | undefined, ours: Json, key = ''): Json {
  if (key === 'hooks' && isObject(ours)) {
    const out: JsonObject = isObject(theirs) ? {...theirs} : {}
    for (const [event, groups] of Object.entries(ours)) {
      const kept = Array.isArray(out[event]) ? (out[event] as Json[]).filter((g) => !isEngramHookGroup(g)) : []
      out[event] = [...kept, ...(groups as Json[])]
    }
    return out
  }
  if (isObject(ours)) {
    const out: JsonObject = isObject(theirs) ? {...theirs} : {}
    for (const [k, v] of Object.entries(ours)) out[k] = mergeSettings(out[k], v, k)
    return out
  }
  if (Array.isArray(ours) && Array.isArray(theirs)) {
    const have = new Set(theirs.map((v) => JSON.stringify(v)))
    return [...theirs, ...ours.filter((v) => !have.has(JSON.stringify(v)))]
  }
  return ours
}

/**
 * What in `settings` falls short of `wanted` (each a dotted path and what is missing):
 * the check behind `adopt claude-code --check` and `engram status`'s confinement line.
 */
export function shortfalls(settings: Json | undefined, wanted: Json, path = ''): string[] {
  if (path === 'hooks' && isObject(wanted)) {
    const out: string[] = []
    for (const [event, groups] of Object.entries(wanted)) {
      const have = isObject(settings) && Array.isArray(settings[event]) ? (settings[event] as Json[]).map((g) => JSON.stringify(g)) : []
      for (const g of groups as Json[]) if (!have.includes(JSON.stringify(g))) out.push(`hooks.${event}: engram's hook is missing or differs`)
    }
    return out
  }
  if (isObject(wanted)) {
    return Object.entries(wanted).flatMap(([k, v]) => shortfalls(isObject(settings) ? settings[k] : undefined, v, path ? `${path}.${k}` : k))
  }
  if (Array.isArray(wanted)) {
    const have = new Set(Array.isArray(settings) ? settings.map((v) => JSON.stringify(v)) : [])
    return wanted.filter((v) => !have.has(JSON.stringify(v))).map((v) => `${path}: ${typeof v === 'string' ? v : JSON.stringify(v)} is missing`)
  }
  return JSON.stringify(settings) === JSON.stringify(wanted) ? [] : [`${path}: is ${settings === undefined ? 'not set' : JSON.stringify(settings)}, needs ${JSON.stringify(wanted)}`]
}
