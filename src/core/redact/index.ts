/**
 * Secret redaction for the write path (DESIGN.md §4): every secret is replaced with
 * `[REDACTED:<kind>]` before anything is stored, and the kinds are counted for the proposal.
 *
 * Redaction is idempotent: a span that overlaps an existing marker is never replaced, so
 * redacting redacted text changes nothing, whatever the rules (built-in or from config).
 */
import {badInput} from '../errors.js'
import {BUILTIN_RULES, type RedactionRule, type MatchContext} from './rules.js'

export type {RedactionRule, MatchContext} from './rules.js'
export {entropy} from './rules.js'

export interface RedactResult {
  text: string
  /** kind -> number of replacements; only kinds that occurred */
  redactions: Record<string, number>
}

/** The built-in kinds, in the order their rules run. */
export const REDACTION_KINDS: string[] = [...new Set(BUILTIN_RULES.map((r) => r.kind))]

const MARKER_OPEN = '[REDACTED:'
const SECRET_GROUPS = ['secret', 'secret2', 'secret3'] as const

/** Kind names are lowercase-hyphenated so a marker always reads `[REDACTED:[a-z0-9-]+]`. */
export function normaliseKind(kind: string): string {
  return (
    kind
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 64) || 'custom'
  )
}

const MARKER = /\[REDACTED:[a-z0-9-]{0,64}\]/g

/**
 * Spans of the markers already in `text`, in order. Found once per rule application so
 * that checking many matches stays linear (a backward search per match would not be).
 */
function markerSpans(text: string): number[] {
  if (!text.includes(MARKER_OPEN)) return []
  const spans: number[] = []
  MARKER.lastIndex = 0
  for (const m of text.matchAll(MARKER)) spans.push(m.index, m.index + m[0].length)
  return spans
}

function applyRule(text: string, rule: RedactionRule, counts: Record<string, number>): string {
  const re = rule.pattern
  re.lastIndex = 0
  let out = ''
  let last = 0
  let n = 0
  let m: RegExpExecArray | null
  const markers = markerSpans(text)
  let mi = 0 // index into markers; matches arrive in increasing order
  while ((m = re.exec(text)) !== null) {
    if (m[0].length === 0) {
      re.lastIndex++ // a pattern that can match empty (from config) must still advance
      continue
    }
    let start = m.index
    let end = start + m[0].length
    const groups = m.indices?.groups
    if (groups) {
      for (const g of SECRET_GROUPS) {
        const span = groups[g]
        if (span) {
          ;[start, end] = span
          break
        }
      }
    }
    if (start === end || start < last) continue
    while (mi < markers.length && markers[mi + 1] <= start) mi += 2
    if (mi < markers.length && markers[mi] < end) continue // never touch an existing marker
    const secret = text.slice(start, end)
    const ctx: MatchContext = {text, start, end, match: m}
    if (rule.validate && !rule.validate(secret, ctx)) continue
    out += text.slice(last, start) + `[REDACTED:${rule.kind}]`
    last = end
    n++
  }
  re.lastIndex = 0
  if (n === 0) return text
  counts[rule.kind] = (counts[rule.kind] ?? 0) + n
  return out + text.slice(last)
}

// Config rules are compiled once per distinct (kind, pattern), not once per write.
const extraCache = new Map<string, RedactionRule>()

function compileExtra(e: {kind: string; pattern: string}): RedactionRule {
  const key = `${e.kind}\u0000${e.pattern}`
  let rule = extraCache.get(key)
  if (!rule) {
    let pattern: RegExp
    try {
      pattern = new RegExp(e.pattern, 'gd')
    } catch {
      throw badInput(
        `redaction rule "${e.kind}": the pattern is not a valid regular expression.`,
        'fix redaction.extra in .engram/config.yml',
      )
    }
    rule = {kind: normaliseKind(e.kind), pattern}
    if (extraCache.size > 256) extraCache.clear()
    extraCache.set(key, rule)
  }
  return rule
}

/**
 * Replace every secret in `text` with `[REDACTED:<kind>]`. Rules from config (`extra`) run
 * first, so a store's own token format is reported under its own kind.
 */
export function redact(text: string, extra: {kind: string; pattern: string}[] = []): RedactResult {
  const counts: Record<string, number> = {}
  let out = text
  for (const e of extra) out = applyRule(out, compileExtra(e), counts)
  for (const rule of BUILTIN_RULES) out = applyRule(out, rule, counts)
  return {text: out, redactions: counts}
}
