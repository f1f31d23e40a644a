import {isAbsolute, relative, resolve} from 'node:path'

import {badInput} from './errors.js'
import {boundedEditDistance} from '../index/tokenize.js'
import {loadYaml} from '../memory/memory.js'
import {parseScope, printable} from './scope.js'

export interface ExternalValidatorConfig {
  name: string
  command: string
  args: string[]
  timeout_ms: number
}

export interface EngramConfig {
  version: 1
  /** Scopes that refuse agent writes (org always does). */
  read_only: string[]
  max_body_bytes: number
  vote: {
    /** fraction of non-abstaining validators that must accept */
    pass_ratio: number
    /** a reject at or above this confidence vetoes the write */
    veto: number
    burst: {window_minutes: number; per_session: number; per_author: number}
    external: ExternalValidatorConfig[]
    /** the learned validator's weights: the file shipped in the package unless the signed config names another */
    learned: {weights: string | null}
    /** path prefixes and terms whose changes from an indirect origin or a tainted session are quarantined */
    protected: {paths: string[]; terms: string[]}
    /** a write of 8 KiB or more whose vote takes more CPU time than this (ms) is stopped and quarantined (budget.ts) */
    budget_ms: number
  }
  redaction: {extra: {kind: string; pattern: string}[]}
  /** Quarantined writes by one session (or author) before it is escalated. */
  escalate_after: number
  /** Tools and shell command words that taint a Claude Code session, beyond the built-in list (`engram hook`). */
  taint: {tools: string[]; commands: string[]}
  /** The dream job (README "Dreaming"). */
  dream: {
    /** a fact is promoted once it recurs in at least this many sessions */
    min_sessions: number
    /** run: scratchpads older than this many days are proposed for clearing */
    run_retention_days: number
    /** a curated memory not confirmed for this many days is proposed for retirement; 0: never */
    retire_unconfirmed_days: number
    /** whether the dream job may propose to org (no by default) */
    allow_org: boolean
  }
}

export const DEFAULT_CONFIG: EngramConfig = {
  version: 1,
  read_only: ['org'],
  max_body_bytes: 256 * 1024,
  vote: {
    pass_ratio: 2 / 3,
    veto: 0.85,
    burst: {window_minutes: 10, per_session: 20, per_author: 60},
    external: [],
    learned: {weights: null},
    protected: {paths: [], terms: []},
    budget_ms: 10_000,
  },
  redaction: {extra: []},
  escalate_after: 3,
  taint: {tools: [], commands: []},
  dream: {min_sessions: 2, run_retention_days: 30, retire_unconfirmed_days: 0, allow_org: false},
}

export const DEFAULT_CONFIG_YAML = `# engram store configuration. See README "Configuration".
# Changes apply only once an owner signs them: \`engram config sign\`.
version: 1
# Scopes that refuse agent writes. org always does.
read_only:
  - org
# Largest accepted memory body, in bytes.
max_body_bytes: 262144
vote:
  # A write passes when at least this fraction of the validators that did not abstain accept…
  pass_ratio: 0.6667
  # …and no validator rejects with confidence at or above this.
  veto: 0.85
  # Write bursts per session and per author over a window, counted from the store's records.
  burst:
    window_minutes: 10
    per_session: 20
    per_author: 60
  # Extra validators: commands that read the write as JSON on stdin and answer
  # {"verdict": "accept|reject|abstain", "confidence": 0..1, "reason": "..."}.
  external: []
  # The command must be an absolute path outside the store (the tool runs it as you).
  #  - name: classifier
  #    command: /usr/local/bin/classify
  #    args: []
  #    timeout_ms: 5000
  # The learned validator reads the weights shipped with engram; an absolute path outside
  # the store here replaces them (only once signed, like every key in this file).
  # learned:
  #   weights: /opt/engram/vote-lr.json
  # Changes to these path prefixes, or writes that mention these terms, are quarantined when
  # they arrive by third-party text (email, webpage, …) or from a tainted session.
  protected:
    paths: []
    terms: []
  # A write of 8 KiB or more is voted on in a worker; one whose vote takes more than this
  # many milliseconds of CPU time is stopped and quarantined for review.
  # budget_ms: 10000
redaction:
  # Extra secret patterns: [{kind: my-token, pattern: "myco_[A-Za-z0-9]{32}"}]
  extra: []
# Rejected writes from one session or author before it is escalated.
escalate_after: 3
# The dream job (engram dream): a fact recurring in at least min_sessions sessions is
# proposed; run: scratchpads older than run_retention_days are proposed for clearing; a
# memory not confirmed (accepted, or said again by a session) for retire_unconfirmed_days
# is proposed for retirement (0: never).
# dream:
#   min_sessions: 2
#   run_retention_days: 30
#   retire_unconfirmed_days: 0
#   allow_org: false
`

/**
 * Every key config.yml may hold, with its type. A key not listed here is refused with its
 * line and the nearest valid key: a misspelt `pas_ratio` silently ignored would leave the
 * policy the owner thinks they set unset.
 */
type Shape = 'number' | 'string' | 'strings' | 'boolean' | {[key: string]: Shape} | {list: {[key: string]: Shape}}
const SCHEMA: {[key: string]: Shape} = {
  version: 'number',
  read_only: 'strings',
  max_body_bytes: 'number',
  vote: {
    pass_ratio: 'number',
    veto: 'number',
    burst: {window_minutes: 'number', per_session: 'number', per_author: 'number'},
    external: {list: {name: 'string', command: 'string', args: 'strings', timeout_ms: 'number'}},
    learned: {weights: 'string'},
    protected: {paths: 'strings', terms: 'strings'},
    budget_ms: 'number',
  },
  redaction: {extra: {list: {kind: 'string', pattern: 'string'}}},
  escalate_after: 'number',
  taint: {tools: 'strings', commands: 'strings'},
  dream: {min_sessions: 'number', run_retention_days: 'number', retire_unconfirmed_days: 'number', allow_org: 'boolean'},
}

/** The 1-based line of a key in block YAML (by indentation), or undefined. Only for messages. */
function lineOf(text: string, path: (string | number)[]): number | undefined {
  const want = path.filter((p) => typeof p === 'string') as string[]
  const stack: {indent: number; key: string}[] = []
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const m = keyOfLine(lines[i])
    if (!m) continue
    while (stack.length > 0 && stack[stack.length - 1].indent >= m.indent) stack.pop()
    stack.push(m)
    if (stack.length === want.length && stack.every((s, j) => s.key === want[j])) return i + 1
  }
  return undefined
}

/** `\s` of a regular expression, for the character at i of s; ASCII first, as every config line is */
function spaceAt(s: string, i: number): boolean {
  if (i >= s.length) return false
  const code = s.charCodeAt(i)
  if (code < 128) return code === 32 || (code >= 9 && code <= 13)
  return /\s/.test(s[i])
}

/**
 * The key a block-YAML line opens and its indent (sequence dashes count), or undefined: a
 * single left-to-right pass, so a line of any length costs linear time (a regular
 * expression here backtracked quadratically on "a<spaces>b").
 */
export function keyOfLine(line: string): {indent: number; key: string} | undefined {
  let i = 0
  while (spaceAt(line, i)) i++
  // "- " items, each dash followed by whitespace
  while (line[i] === '-' && spaceAt(line, i + 1)) {
    i++
    while (spaceAt(line, i)) i++
  }
  const indent = i
  const quote = line[i] === '"' || line[i] === "'" ? line[i] : ''
  if (quote) i++
  const start = i
  if (i >= line.length || spaceAt(line, i) || ':"\'#'.includes(line[i])) return undefined
  for (let c = line.charCodeAt(i); i < line.length && c !== 58 && c !== 34 && c !== 39 && c !== 35; c = line.charCodeAt(++i)) {
    // up to the first of : " ' #
  }
  let end = i
  if (quote) {
    if (line[i] !== quote) return undefined
    i++
    while (spaceAt(line, i)) i++
  } else {
    // trailing whitespace is not part of the key (by hand: /\s+$/ backtracks quadratically too)
    while (end > start && spaceAt(line, end - 1)) end--
  }
  const key = line.slice(start, end)
  if (line[i] !== ':' || !(i + 1 >= line.length || spaceAt(line, i + 1))) return undefined
  return {indent, key}
}

// key names come from the file, which an agent may have written: never raw control characters in a message
const dotted = (path: (string | number)[]) => path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? printable(p, 60) : `.${printable(p, 60)}`)).join('')

/** The valid key nearest to a misspelt one (at most a third of its letters off), or undefined. */
function nearest(key: string, valid: string[]): string | undefined {
  const max = Math.max(1, Math.ceil(key.length / 3))
  let best: {key: string; d: number} | undefined
  for (const v of valid) {
    const d = boundedEditDistance(key.toLowerCase(), v, max)
    if (d <= max && (!best || d < best.d)) best = {key: v, d}
  }
  return best?.key
}

class ConfigReader {
  constructor(
    readonly text: string,
    readonly label: string,
  ) {}

  fail(path: (string | number)[], problem: string, nextStep = 'fix .engram/config.yml (README "Configuration" lists every key)'): never {
    const line = path.length > 0 ? lineOf(this.text, path) : undefined
    throw badInput(`${this.label}${line ? ` line ${line}` : ''}: ${problem}`, nextStep)
  }

  /** Refuse keys the schema does not know, and values of the wrong type, anywhere in the tree. */
  check(value: unknown, shape: Shape, path: (string | number)[]): void {
    if (value === undefined || value === null) return
    if (shape === 'number') {
      if (typeof value !== 'number' || Number.isNaN(value)) this.fail(path, `\`${dotted(path)}\` must be a number, not ${describe(value)}.`)
      return
    }
    if (shape === 'boolean') {
      if (typeof value !== 'boolean') this.fail(path, `\`${dotted(path)}\` must be true or false, not ${describe(value)}.`)
      return
    }
    if (shape === 'string') {
      if (typeof value !== 'string') this.fail(path, `\`${dotted(path)}\` must be a string, not ${describe(value)}.`)
      return
    }
    if (shape === 'strings') {
      if (!Array.isArray(value) || !value.every((s) => typeof s === 'string')) this.fail(path, `\`${dotted(path)}\` must be a list of strings.`)
      return
    }
    if ('list' in shape && typeof shape.list === 'object') {
      if (!Array.isArray(value)) this.fail(path, `\`${dotted(path)}\` must be a list.`)
      value.forEach((item, i) => {
        if (!item || typeof item !== 'object' || Array.isArray(item)) this.fail(path, `\`${dotted([...path, i])}\` must be a mapping.`)
        this.check(item, shape.list as {[key: string]: Shape}, [...path, i])
      })
      return
    }
    if (typeof value !== 'object' || Array.isArray(value)) {
      this.fail(path, path.length === 0 ? 'must be a YAML mapping.' : `\`${dotted(path)}\` must be a mapping, not ${describe(value)}.`)
    }
    const fields = shape as {[key: string]: Shape}
    for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
      if (!Object.hasOwn(fields, key)) {
        const near = nearest(key, Object.keys(fields))
        this.fail([...path, key], `unknown key \`${dotted([...path, key])}\`${near ? ` — did you mean \`${near}\`?` : '.'}`, `valid keys here: ${Object.keys(fields).join(', ')}`)
      }
      this.check(v, fields[key], [...path, key])
    }
  }

  num(v: unknown, path: (string | number)[], min: number, max: number): number {
    if (typeof v !== 'number' || Number.isNaN(v) || v < min || v > max) this.fail(path, `\`${dotted(path)}\` must be a number from ${min} to ${max}.`)
    return v
  }
}

function describe(v: unknown): string {
  if (Array.isArray(v)) return 'a list'
  if (typeof v === 'string') return `the string ${JSON.stringify(printable(v, 40))}`
  if (typeof v === 'object') return 'a mapping'
  return String(v)
}

/** config.yml is a few hundred bytes; a larger one is malformed, so an unsigned config costs a command next to nothing. */
export const MAX_CONFIG_BYTES = 64 * 1024

/**
 * Parse config.yml strictly: malformed YAML, an unknown key, a wrong type or an out-of-range
 * value is bad input naming the line. `root` (the store folder) lets an external validator's
 * command be checked to lie outside the store.
 */
export function parseConfig(text: string, opts: {label?: string; root?: string} = {}): EngramConfig {
  const label = opts.label ?? '.engram/config.yml'
  if (Buffer.byteLength(text, 'utf8') > MAX_CONFIG_BYTES) {
    throw badInput(`${label} is malformed: it is larger than ${MAX_CONFIG_BYTES / 1024} KiB.`, 'fix the YAML, or compare with the example in README "Configuration"')
  }
  let raw: unknown
  try {
    // js-yaml is loaded at the first config parse (a search never parses the config); aliases are refused
    raw = loadYaml(text)
  } catch (error) {
    const reason = printable(error instanceof Error ? error.message.split('\n')[0] : String(error), 200)
    throw badInput(`${label} is malformed: ${reason}`, 'fix the YAML, or compare with the example in README "Configuration"')
  }
  if (raw === undefined || raw === null) raw = {}
  const rd: ConfigReader = new ConfigReader(text, label)
  rd.check(raw, SCHEMA, [])
  const r = raw as RawConfig
  const c: EngramConfig = structuredClone(DEFAULT_CONFIG)
  if (r.version !== undefined && r.version !== null && r.version !== 1) rd.fail(['version'], `unsupported config version ${String(r.version)}.`)
  if (r.read_only !== undefined && r.read_only !== null) {
    for (const s of r.read_only) parseScope(s)
    c.read_only = [...new Set(['org', ...r.read_only])]
  }
  if (r.max_body_bytes != null) c.max_body_bytes = rd.num(r.max_body_bytes, ['max_body_bytes'], 1, 64 * 1024 * 1024)
  if (r.escalate_after != null) c.escalate_after = rd.num(r.escalate_after, ['escalate_after'], 1, 1000)
  const v = r.vote ?? {}
  if (v.pass_ratio != null) c.vote.pass_ratio = rd.num(v.pass_ratio, ['vote', 'pass_ratio'], 0, 1)
  if (v.veto != null) c.vote.veto = rd.num(v.veto, ['vote', 'veto'], 0, 1)
  if (v.budget_ms != null) c.vote.budget_ms = rd.num(v.budget_ms, ['vote', 'budget_ms'], 1, 600_000)
  const b = v.burst ?? {}
  if (b.window_minutes != null) c.vote.burst.window_minutes = rd.num(b.window_minutes, ['vote', 'burst', 'window_minutes'], 1, 100000)
  if (b.per_session != null) c.vote.burst.per_session = rd.num(b.per_session, ['vote', 'burst', 'per_session'], 1, 1e6)
  if (b.per_author != null) c.vote.burst.per_author = rd.num(b.per_author, ['vote', 'burst', 'per_author'], 1, 1e6)
  if (v.external != null) {
    c.vote.external = v.external.map((e, i) => {
      const at = ['vote', 'external', i]
      if (typeof e.command !== 'string' || e.command.length === 0) rd.fail(at, `\`${dotted(at)}\` needs a "command".`)
      // the tool runs this command as the user who runs engram: a bare name would depend on the
      // caller's PATH and a relative one on its working folder, and a file inside the store
      // can be rewritten by an agent
      if (!isAbsolute(e.command)) rd.fail([...at, 'command'], `\`${dotted([...at, 'command'])}\` must be an absolute path (the tool runs it as you; a bare or relative name depends on the caller's PATH and folder).`)
      if (opts.root && isInside(resolve(e.command), opts.root)) {
        rd.fail([...at, 'command'], `\`${dotted([...at, 'command'])}\` is inside the store, where an agent can rewrite it.`, 'put the validator outside the store folder')
      }
      return {
        name: typeof e.name === 'string' ? e.name : `external-${i + 1}`,
        command: e.command,
        args: Array.isArray(e.args) ? [...e.args] : [],
        timeout_ms: e.timeout_ms == null ? 5000 : rd.num(e.timeout_ms, [...at, 'timeout_ms'], 10, 600000),
      }
    })
  }
  const lw = v.learned?.weights
  if (lw != null) {
    const at = ['vote', 'learned', 'weights']
    // read by the tool on every write: like an external command, never a file an agent can rewrite
    if (!isAbsolute(lw)) rd.fail(at, `\`${dotted(at)}\` must be an absolute path.`)
    if (opts.root && isInside(resolve(lw), opts.root)) rd.fail(at, `\`${dotted(at)}\` is inside the store, where an agent can rewrite it.`, 'put the weights outside the store folder')
    c.vote.learned.weights = lw
  }
  const pr = v.protected ?? {}
  if (pr.paths != null) {
    pr.paths.forEach((p: string, i: number) => {
      if (p.trim() === '' || p.startsWith('/') || p.includes('..')) rd.fail(['vote', 'protected', 'paths'], `\`vote.protected.paths[${i}]\` must be a relative path prefix such as "policy/".`)
    })
    c.vote.protected.paths = [...pr.paths]
  }
  if (pr.terms != null) {
    pr.terms.forEach((t: string, i: number) => {
      if (t.trim().length < 3) rd.fail(['vote', 'protected', 'terms'], `\`vote.protected.terms[${i}]\` must have at least 3 characters.`)
    })
    c.vote.protected.terms = pr.terms.map((t: string) => t.trim())
  }
  const d = r.dream ?? {}
  if (d.min_sessions != null) c.dream.min_sessions = rd.num(d.min_sessions, ['dream', 'min_sessions'], 1, 1000)
  if (d.run_retention_days != null) c.dream.run_retention_days = rd.num(d.run_retention_days, ['dream', 'run_retention_days'], 1, 36500)
  if (d.retire_unconfirmed_days != null) c.dream.retire_unconfirmed_days = rd.num(d.retire_unconfirmed_days, ['dream', 'retire_unconfirmed_days'], 0, 36500)
  if (d.allow_org != null) c.dream.allow_org = d.allow_org === true
  const extra = r.redaction?.extra
  if (extra != null) {
    c.redaction.extra = extra.map((e, i) => {
      const at = ['redaction', 'extra', i]
      if (typeof e.kind !== 'string' || typeof e.pattern !== 'string') rd.fail(at, `\`${dotted(at)}\` needs "kind" and "pattern".`)
      try {
        new RegExp(e.pattern, 'g')
      } catch {
        rd.fail([...at, 'pattern'], `\`${dotted([...at, 'pattern'])}\` is not a valid regular expression.`)
      }
      return {kind: e.kind, pattern: e.pattern}
    })
  }
  const t = r.taint ?? {}
  // names a hook matches exactly (a trailing * matches a prefix): no spaces, no shell syntax
  t.tools?.forEach((n: string, i: number) => {
    if (!/^[A-Za-z0-9_.:-]+\*?$/.test(n)) rd.fail(['taint', 'tools'], `\`taint.tools[${i}]\` must be a tool name such as "WebFetch" or a prefix such as "mcp__github__*".`)
  })
  t.commands?.forEach((n: string, i: number) => {
    if (!/^[A-Za-z0-9_.+-]+$/.test(n)) rd.fail(['taint', 'commands'], `\`taint.commands[${i}]\` must be one command word such as "aria2c".`)
  })
  if (t.tools != null) c.taint.tools = [...t.tools]
  if (t.commands != null) c.taint.commands = [...t.commands]
  return c
}

/**
 * config.yml as it is once `check` has held it against SCHEMA: each key absent, null, or
 * of its schema's type; values read through `num` or checked below are left unknown.
 */
interface RawConfig {
  version?: unknown
  read_only?: string[] | null
  max_body_bytes?: unknown
  escalate_after?: unknown
  vote?: {
    pass_ratio?: unknown
    veto?: unknown
    burst?: {window_minutes?: unknown; per_session?: unknown; per_author?: unknown} | null
    external?: {name?: unknown; command?: unknown; args?: string[]; timeout_ms?: unknown}[] | null
    learned?: {weights?: string | null} | null
    protected?: {paths?: string[] | null; terms?: string[] | null} | null
    budget_ms?: unknown
  } | null
  redaction?: {extra?: {kind?: unknown; pattern?: unknown}[] | null} | null
  taint?: {tools?: string[] | null; commands?: string[] | null} | null
  dream?: {min_sessions?: unknown; run_retention_days?: unknown; retire_unconfirmed_days?: unknown; allow_org?: unknown} | null
}

function isInside(file: string, root: string): boolean {
  const rel = relative(root, file)
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel))
}
