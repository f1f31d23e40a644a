import {readFileSync} from 'node:fs'
import {createRequire} from 'node:module'

import type JsYaml from 'js-yaml'

import {badInput} from './errors.js'
import {parseScope} from './scope.js'

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
  }
  redaction: {extra: {kind: string; pattern: string}[]}
  /** Quarantined writes by one session (or author) before it is escalated. */
  escalate_after: number
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
  },
  redaction: {extra: []},
  escalate_after: 3,
}

export const DEFAULT_CONFIG_YAML = `# engram store configuration. See README "Configuration".
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
  #  - name: classifier
  #    command: ./bin/classify
  #    args: []
  #    timeout_ms: 5000
redaction:
  # Extra secret patterns: [{kind: my-token, pattern: "myco_[A-Za-z0-9]{32}"}]
  extra: []
# Rejected writes from one session or author before it is escalated.
escalate_after: 3
`

const num = (v: unknown, name: string, min: number, max: number): number => {
  if (typeof v !== 'number' || Number.isNaN(v) || v < min || v > max) {
    throw badInput(`config.yml: "${name}" must be a number from ${min} to ${max}.`, 'fix .engram/config.yml')
  }
  return v
}

/** js-yaml, loaded at the first config parse (a search never parses the config). */
let yaml: typeof JsYaml | undefined

export function parseConfig(text: string, label = '.engram/config.yml'): EngramConfig {
  let raw: unknown
  try {
    yaml ??= createRequire(import.meta.url)('js-yaml') as typeof JsYaml
    raw = yaml.load(text)
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error)
    throw badInput(`${label} is malformed: ${reason}`, 'fix the YAML, or compare with the example in README "Configuration"')
  }
  if (raw === undefined || raw === null) raw = {}
  if (typeof raw !== 'object' || Array.isArray(raw)) throw badInput(`${label} must be a YAML mapping.`, 'fix .engram/config.yml')
  const r = raw as Record<string, any>
  const c: EngramConfig = structuredClone(DEFAULT_CONFIG)
  if (r.version !== undefined && r.version !== 1) throw badInput(`${label}: unsupported config version ${String(r.version)}.`)
  if (r.read_only !== undefined) {
    if (!Array.isArray(r.read_only) || !r.read_only.every((s: unknown) => typeof s === 'string')) {
      throw badInput(`${label}: "read_only" must be a list of scopes.`)
    }
    for (const s of r.read_only) parseScope(s)
    c.read_only = [...new Set(['org', ...r.read_only])]
  }
  if (r.max_body_bytes !== undefined) c.max_body_bytes = num(r.max_body_bytes, 'max_body_bytes', 1, 64 * 1024 * 1024)
  if (r.escalate_after !== undefined) c.escalate_after = num(r.escalate_after, 'escalate_after', 1, 1000)
  if (r.vote !== undefined) {
    if (typeof r.vote !== 'object' || r.vote === null) throw badInput(`${label}: "vote" must be a mapping.`)
    if (r.vote.pass_ratio !== undefined) c.vote.pass_ratio = num(r.vote.pass_ratio, 'vote.pass_ratio', 0, 1)
    if (r.vote.veto !== undefined) c.vote.veto = num(r.vote.veto, 'vote.veto', 0, 1)
    if (r.vote.burst !== undefined) {
      const b = r.vote.burst
      if (b.window_minutes !== undefined) c.vote.burst.window_minutes = num(b.window_minutes, 'vote.burst.window_minutes', 1, 100000)
      if (b.per_session !== undefined) c.vote.burst.per_session = num(b.per_session, 'vote.burst.per_session', 1, 1e6)
      if (b.per_author !== undefined) c.vote.burst.per_author = num(b.per_author, 'vote.burst.per_author', 1, 1e6)
    }
    if (r.vote.external !== undefined && r.vote.external !== null) {
      if (!Array.isArray(r.vote.external)) throw badInput(`${label}: "vote.external" must be a list.`)
      c.vote.external = r.vote.external.map((e: any, i: number) => {
        if (!e || typeof e.command !== 'string' || e.command.length === 0) {
          throw badInput(`${label}: vote.external[${i}] needs a "command".`)
        }
        return {
          name: typeof e.name === 'string' ? e.name : `external-${i + 1}`,
          command: e.command,
          args: Array.isArray(e.args) ? e.args.map(String) : [],
          timeout_ms: e.timeout_ms === undefined ? 5000 : num(e.timeout_ms, `vote.external[${i}].timeout_ms`, 10, 600000),
        }
      })
    }
  }
  if (r.redaction?.extra !== undefined && r.redaction.extra !== null) {
    if (!Array.isArray(r.redaction.extra)) throw badInput(`${label}: "redaction.extra" must be a list.`)
    c.redaction.extra = r.redaction.extra.map((e: any, i: number) => {
      if (!e || typeof e.kind !== 'string' || typeof e.pattern !== 'string') {
        throw badInput(`${label}: redaction.extra[${i}] needs "kind" and "pattern".`)
      }
      try {
        new RegExp(e.pattern, 'g')
      } catch {
        throw badInput(`${label}: redaction.extra[${i}].pattern is not a valid regular expression.`)
      }
      return {kind: e.kind, pattern: e.pattern}
    })
  }
  return c
}

export function loadConfig(file: string): EngramConfig {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch {
    return structuredClone(DEFAULT_CONFIG)
  }
  return parseConfig(text)
}
