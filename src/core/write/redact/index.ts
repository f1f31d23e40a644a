/**
 * Secret redaction for the write path and every message (README "Redaction"): every secret is replaced with
 * `[REDACTED:<kind>]` before anything is stored, and the kinds are counted for the proposal.
 *
 * Redaction is idempotent: a span that overlaps an existing marker is never replaced, and passes
 * run until one finds nothing more (at most MAX_PASSES), so redacting redacted text changes
 * nothing, whatever the rules (built-in or from config).
 */
import {badInput} from '../../store/errors.js'
import {lookalikeReading, type LookalikeReading, type ReplacedSpan} from '../normalise.js'
import {BUILTIN_RULES, LOOKALIKE_RULES, TOKEN_OPEN, hasRun, type RedactionRule, type MatchContext} from './rules.js'

export type {RedactionRule, MatchContext} from './rules.js'
export {entropy} from './rules.js'

export interface RedactResult {
  text: string
  /** kind -> number of replacements; only kinds that occurred */
  redactions: Record<string, number>
}

/** The built-in kinds, in the order their rules run. */
export const REDACTION_KINDS: string[] = [...new Set([...BUILTIN_RULES.map((r) => r.kind), 'encoded-secret'])]

const MARKER_OPEN = '[REDACTED:'
const SECRET_GROUPS = ['secret', 'secret2', 'secret3'] as const

/** Kind names are lowercase-hyphenated so a marker always reads `[REDACTED:[a-z0-9-]+]`. */
function normaliseKind(kind: string): string {
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

/**
 * A rule matched on the text itself, or on its look-alike reading (lookalikeReading: each unit of
 * its view read from a span of the text), and each secret it finds replaced where it stands in the
 * text — every character its units were read from. Returns the text after it, and the spans.
 */
function applyRuleOn(
  text: string,
  reading: LookalikeReading | null,
  rule: RedactionRule,
  counts: Record<string, number>,
  beforeMarks: 'take' | 'leave' = 'take',
): {text: string; spans: ReplacedSpan[]} {
  const view = reading?.view ?? text
  const re = rule.pattern
  re.lastIndex = 0
  const spans: ReplacedSpan[] = []
  if (rule.mayMatch && !rule.mayMatch(view)) return {text, spans}
  let out = ''
  let last = 0 // in the view
  let lastText = 0 // in the text
  let m: RegExpExecArray | null
  const markers = markerSpans(view)
  let mi = 0 // index into markers; matches arrive in increasing order
  while ((m = re.exec(view)) !== null) {
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
    let textStart = start
    let textEnd = end
    if (!reading) {
      // a match that ends between a letter and its mark, where a reading reads the two as one, is
      // left to that reading: it reads on (`…9aQ̲RSTUV` is one token there)
      if (beforeMarks === 'leave' && MARK_AT.test(text.slice(end, end + 1))) continue
      // never half a character: a cap ({0,127}) may end between the two halves of an emoji
      if (lowSurrogate(text, end)) textEnd = ++end
      if (lowSurrogate(text, start) && start - 1 >= last) textStart = --start
    } else {
      // a match that starts inside a character read as several units ("㎏" reads "kg": "5㎏hp_…"
      // matched from its g) starts after it: the character is the writer's, not the secret's
      while (start < end && start > 0 && reading.from(start) === reading.from(start - 1)) start++
      if (start === end) continue
      textStart = reading.from(start)
      textEnd = reading.to(end - 1)
      if (lowSurrogate(text, textEnd)) textEnd++
      if (lowSurrogate(text, textStart) && start - 1 >= last) textStart = reading.from(--start)
      if (textStart < lastText) continue // two matches in one character (Ⅻ reads XII): the first has it
    }
    while (mi < markers.length && markers[mi + 1] <= start) mi += 2
    // never touch an existing marker — but the look-alike reading may take in whole markers of the
    // plain one: a key block whose BEGIN and END lines are fullwidth, whose lines the plain reading
    // redacted one by one where they looked random, is one secret (each line, the others too)
    let inner = 0
    if (mi < markers.length && markers[mi] < end) {
      // only a match that the look-alikes made (it reads otherwise in the text itself): the same
      // match in plain letters never takes in a marker, whatever else the text holds
      if (!reading || view.slice(start, end) === text.slice(textStart, textEnd)) continue
      while (mi + 2 * inner < markers.length && markers[mi + 2 * inner] < end) inner++
      if (markers[mi] < start || markers[mi + 2 * inner - 1] > end) continue
    }
    const secret = view.slice(start, end)
    const ctx: MatchContext = {text: view, start, end, match: m}
    if (rule.validate && !rule.validate(secret, ctx)) continue
    for (let k = 0; k < inner; k++) {
      const kind = view.slice(markers[mi + 2 * k] + MARKER_OPEN.length, markers[mi + 2 * k + 1] - 1)
      if ((counts[kind] = (counts[kind] ?? 1) - 1) <= 0) delete counts[kind]
    }
    const marker = `[REDACTED:${rule.kind}]`
    out += text.slice(lastText, textStart) + marker
    // a match that ends inside a character read as several units (㎑ reads kHz, a cap stopped
    // after its k) ends after it in the view too: the rest of it is replaced with it
    let viewEnd = end
    if (reading) while (viewEnd < view.length && reading.from(viewEnd) < textEnd) viewEnd++
    spans.push({vs: start, ve: viewEnd, ts: textStart, te: textEnd, marker})
    last = viewEnd
    lastText = textEnd
  }
  re.lastIndex = 0
  if (spans.length === 0) return {text, spans}
  counts[rule.kind] = (counts[rule.kind] ?? 0) + spans.length
  return {text: out + text.slice(lastText), spans}
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

// The store's own rules (the signed `redaction.extra`) once its policy is loaded: every
// message of this process is redacted with them too, not only what a command passes its
// rules for (a secret of the store's format in an echoed query or an error, R9).
let rulesInForce: {kind: string; pattern: string}[] = []

/** Set the extra rules in force for this process (the signed policy's `redaction.extra`). */
export function setRulesInForce(extra: {kind: string; pattern: string}[]): void {
  rulesInForce = [...extra]
}

/**
 * The extra rules in force (a copy): a worker thread has its own, empty, and is sent these with
 * each job (vote/reading.ts, vote/budget.ts), so what it redacts is what this thread would.
 */
export function rulesNowInForce(): {kind: string; pattern: string}[] {
  return rulesInForce.map(({kind, pattern}) => ({kind, pattern}))
}

/**
 * Replace every secret in `text` with `[REDACTED:<kind>]`. Rules from config (`extra`,
 * by default the rules in force) run first, so a store's own token format is reported
 * under its own kind.
 */
export function redact(text: string, extra: {kind: string; pattern: string}[] = rulesInForce): RedactResult {
  const rules = extra.map(compileExtra)
  const counts: Record<string, number> = {}
  let out = redactDepth(text, rules, 0, counts).text
  // A marker is a boundary the secret it replaced was not: a token glued before another one
  // (`AKIA…ghp_…`: the AWS key's end is a letter until the GitHub token, a later rule, is a
  // marker) is found by the next pass. Passes run while they find more, at most MAX_PASSES, so
  // what is stored is what redaction leaves unchanged.
  for (let pass = 1; pass < MAX_PASSES && Object.keys(counts).length > 0; pass++) {
    const again = redactDepth(out, rules, 0, counts).text
    if (again === out) break
    out = again
  }
  return {text: out, redactions: counts}
}

/**
 * Passes of redaction at most. Each pass after the first frees the secrets glued before one just
 * replaced; a chain of tokens glued in alternating order needs one pass per two of them, so the
 * cap keeps redaction linear (README "Redaction", known limits).
 */
const MAX_PASSES = 8

function redactDepth(text: string, extra: RedactionRule[], depth: number, counts: Record<string, number> = {}): RedactResult {
  // A secret's name spelt with look-alike letters ("pаssword is …" with a Cyrillic а, "ＡＰＩ ｋｅｙ",
  // "𝐩𝐚𝐬𝐬𝐰𝐨𝐫𝐝") reads plainly to a model and to the vote, which read the folded text: each rule
  // runs on the text, then on the text read that way (lookalikeReading), each secret it finds
  // replaced where it stands in the text itself — rule by rule, so that which rule has a span is
  // the same as in plain letters (in a decoded run too: "p%D0%B0ssword%20is%20…" is an encoded
  // secret). A reading is made once and follows each replacement (LookalikeReading.replaced).
  let out = text
  // the readings of `out`: look-alikes with the marks that compose with nothing read as nothing
  // (p̲a̲s̲s̲ is pass), and, where there are such marks, with them as written (x́pin is not xpin);
  // undefined: not made for `out` yet
  const readings: (LookalikeReading | null | undefined)[] = [undefined, undefined]
  const made = (k: number): LookalikeReading | null =>
    k === 0 ? lookalikeReading(out) : readings[0]?.droppedMarks ? lookalikeReading(out, true) : null
  // each span replaced in the other readings too, where the text's span falls between characters
  // they read (else they are read again)
  const follows = (before: string, spans: ReplacedSpan[], except: number) => {
    for (let k = 0; k < readings.length; k++) {
      const r = readings[k]
      if (k !== except && r) readings[k] = follow(r, before, spans)
    }
  }
  const both = (rule: RedactionRule, asRead: RedactionRule): void => {
    const before = out
    if (readings[0] === undefined) readings[0] = made(0)
    const plain = applyRuleOn(out, null, rule, counts, readings[0] ? 'leave' : 'take')
    if (plain.spans.length > 0) {
      out = plain.text
      follows(before, plain.spans, -1)
    }
    for (let k = 0; k < readings.length; k++) {
      if (readings[k] === undefined) readings[k] = made(k)
      const reading = readings[k]
      if (!reading) continue
      const was = out
      const read = applyRuleOn(out, reading, asRead, counts)
      if (read.spans.length > 0) {
        out = read.text
        readings[k] = reading.replaced(read.spans)
        follows(was, read.spans, k)
      }
    }
  }
  for (const rule of extra) both(rule, rule)
  // a token broken across lines (or by spaces, or a `\` continuation) is joined first, so
  // that the rules below do not redact its first line and leave the rest
  const unjoined = out
  out = joinSplitTokens(out, extra, counts)
  // wrapped secrets (base64, hex, %-encoding) before the bare-string rule claims the wrapping
  if (depth < MAX_DECODE_DEPTH) out = redactEncoded(out, extra, depth, counts)
  if (out !== unjoined) readings.fill(undefined)
  for (let i = 0; i < BUILTIN_RULES.length; i++) both(BUILTIN_RULES[i], LOOKALIKE_RULES[i])
  return {text: out, redactions: counts}
}

const MARK_AT = /^\p{M}/u

/** Whether text[i] is the second half of a surrogate pair (so i cuts a character in two). */
function lowSurrogate(text: string, i: number): boolean {
  if (i <= 0 || i >= text.length) return false
  const lo = text.charCodeAt(i)
  const hi = text.charCodeAt(i - 1)
  return lo >= 0xdc00 && lo <= 0xdfff && hi >= 0xd800 && hi <= 0xdbff
}

/**
 * The reading of the text after the plain rule's replacements: each span replaced in it too. A
 * span that starts or ends inside a piece the reading takes as one character (a letter and its
 * marks: the rule took the letter, not its mark) takes that piece in, the part of it the rule
 * left becoming part of the marker's piece. Undefined (read again) if two spans meet in one piece.
 */
function follow(reading: LookalikeReading, before: string, spans: ReplacedSpan[]): LookalikeReading | undefined {
  const pieces: ReplacedSpan[] = []
  for (const s of spans) {
    const ts = reading.inside(s.ts)?.[0] ?? s.ts
    const te = reading.inside(s.te)?.[1] ?? s.te
    const vs = reading.at(ts)
    const ve = reading.at(te)
    if (vs < 0 || ve < 0 || (pieces.length > 0 && pieces[pieces.length - 1].te > ts)) return undefined
    pieces.push({vs, ve, ts, te, marker: before.slice(ts, s.ts) + s.marker + before.slice(s.te, te)})
  }
  return reading.replaced(pieces)
}

/**
 * The text with every secret replaced: for messages and stored free text (reasons, commit
 * messages, echoed input). Redaction always runs on the whole text, before any clipping,
 * so a clipped secret can never slip past a rule that needs its full length.
 */
export function redactText(text: string, extra: {kind: string; pattern: string}[] = rulesInForce): string {
  return redact(String(text), extra).text
}

/**
 * At most `max` characters of `text`, redacted first (with the rules in force, `extra`) and
 * only then clipped: a secret cut before redaction leaves a fragment no rule recognises
 * (STANDARD.md R9). A marker is never cut in half. For stored or committed free text.
 */
export function clipRedacted(text: string, max: number, extra: {kind: string; pattern: string}[] = rulesInForce): string {
  const t = redactText(text, extra)
  if (t.length <= max) return t
  let cut = max
  const open = t.lastIndexOf(MARKER_OPEN, cut)
  if (open >= 0 && t.indexOf(']', open) >= cut) cut = open
  return t.slice(0, cut)
}

// ---- split tokens --------------------------------------------------------------------
// Prefixes of token shapes that are long and random after their prefix. A fragment that
// starts with one is followed across line breaks and short runs of spaces.
const SPLIT_PREFIXES = String.raw`(?:gh[pousr]_|github_pat_|gl(?:pat|dt|rt|ptt|ft|soat|cbt|imt|oas)-|xox[abprse]-|[sr]k_(?:live|test)_|whsec_|sk-ant-|sk-proj-|sk-svcacct-|sk-|npm_|pypi-|AKIA|ASIA|AIza|GOCSPX-|hf_|lin_api_|do[opr]_v1_|shp(?:at|ss|ca|pa)_|AGE-SECRET-KEY-1)`
const SPLIT_START = new RegExp(`${TOKEN_OPEN}${SPLIT_PREFIXES}`, 'g')
// the prefixes without the boundary before them: a text none of them is in holds no start,
// and this finds that in a fraction of the time a scan that tries the lookbehind everywhere takes
const ANY_SPLIT_PREFIX = new RegExp(SPLIT_PREFIXES)
const SPLIT_START_AT = new RegExp(SPLIT_START.source, 'y')
// bounded, so that many prefixes in one long run each look at most 512 characters ahead
const FRAGMENT = /[A-Za-z0-9_\-]{1,512}/y
// a line break (with a `\` continuation, indentation, a `> ` quote or `//`, `#` comment
// leader), an escaped one inside a JSON or code string (`\n`, `\r\n`), or one or two spaces.
// The spaces before a `\` are one run, those after it another: `[ \t]*\\?[ \t]*` split a long run
// of spaces two ways (1 s for 32 KiB of spaces after a token's prefix)
const SEPARATOR = /(?:[ \t]*(?:\\[ \t]*)?\r?\n[ \t]*(?:(?:>|\/\/|#)[ \t]*)?|(?:\\r)?\\n|[ \t]{1,2})/y
const MAX_FRAGMENTS = 16
// the token() rules (and the age key, which has no boundary): shapes that are long and random after a prefix
const SPLITTABLE = BUILTIN_RULES.filter((r) => r.pattern.source.startsWith(`${TOKEN_OPEN}(?:`) || r.kind === 'age-secret-key')
// a fragment that is a plain word ends a token rather than continuing it
const PLAIN_WORD = /^[A-Za-z][a-z]{0,15}$/

const stickyCache = new WeakMap<RedactionRule, RegExp>()
function sticky(rule: RedactionRule): RegExp {
  let re = stickyCache.get(rule)
  if (!re) stickyCache.set(rule, (re = new RegExp(rule.pattern.source, rule.pattern.flags.replace('g', '') + 'y')))
  re.lastIndex = 0
  return re
}

// A rule's pattern with every assertion dropped (lookarounds, `\b`, `$`) accepts at least
// what the rule does, and no longer looks past the end of its match: if the rule matches a
// join whole, this one matches, at 0, every longer string that starts with that join. So
// one run of it over the longest join tells which rules can match any of the shorter joins;
// the others are never tried on them (a fragment that can extend no rule costs one test per
// rule, not one per join).
function withoutAssertions(src: string): string | null {
  if (/\\k<|\\[1-9]/.test(src)) return null // a backreference could change meaning
  let out = ''
  for (let i = 0; i < src.length; ) {
    const c = src[i]
    if (c === '\\') {
      if (src[i + 1] === 'b' || src[i + 1] === 'B') out += ''
      else out += src.slice(i, i + 2)
      i += 2
    } else if (c === '[') {
      let j = i + 1
      if (src[j] === '^') j++
      if (src[j] === ']') j++
      while (j < src.length && src[j] !== ']') j += src[j] === '\\' ? 2 : 1
      out += src.slice(i, j + 1)
      i = j + 1
    } else if (c === '$') {
      i++
    } else if (src.startsWith('(?=', i) || src.startsWith('(?!', i) || src.startsWith('(?<=', i) || src.startsWith('(?<!', i)) {
      let depth = 0
      let j = i
      for (; j < src.length; j++) {
        const d = src[j]
        if (d === '\\') j++
        else if (d === '[') {
          j++
          while (j < src.length && src[j] !== ']') j += src[j] === '\\' ? 2 : 1
        } else if (d === '(') depth++
        else if (d === ')' && --depth === 0) break
      }
      i = j + 1
      // a quantifier left on a dropped assertion would have nothing to repeat
      if (/[?*+{]/.test(src[i] ?? '')) return null
    } else {
      out += c
      i++
    }
  }
  return out
}

const openCache = new WeakMap<RedactionRule, RegExp | null>()
function openEnded(rule: RedactionRule): RegExp | null {
  let re = openCache.get(rule)
  if (re === undefined) {
    re = null
    const src = withoutAssertions(rule.pattern.source)
    if (src !== null) {
      try {
        re = new RegExp(src, rule.pattern.flags.replace(/[gy]/g, '') + 'y')
      } catch {
        re = null // tried on every join, as before
      }
    }
    openCache.set(rule, re)
  }
  if (re) re.lastIndex = 0
  return re
}

function candidates(longest: string, extra: RedactionRule[]): RedactionRule[] {
  return [...extra, ...SPLITTABLE].filter((rule) => {
    const re = openEnded(rule)
    return !re || re.test(longest)
  })
}

function fullMatch(joined: string, rules: RedactionRule[]): RedactionRule | undefined {
  for (const rule of rules) {
    const m = sticky(rule).exec(joined)
    if (m && m[0].length === joined.length && (!rule.validate || rule.validate(m[0], {text: joined, start: 0, end: joined.length, match: m}))) return rule
  }
  return undefined
}

function joinSplitTokens(text: string, extra: RedactionRule[], counts: Record<string, number>): string {
  if (!/[\n ]|\\n/.test(text) || !ANY_SPLIT_PREFIX.test(text)) return text
  let out = ''
  let last = 0
  // the end of the first fragment of the last start examined: a prefix inside it (after a
  // `_` or `-`) starts no other token worth a second look, and looking again at every one
  // of them would make a long run of prefixes quadratic
  let examined = 0
  SPLIT_START.lastIndex = 0
  for (let m = SPLIT_START.exec(text); m !== null; m = SPLIT_START.exec(text)) {
    if (m.index < last || m.index < examined) continue
    FRAGMENT.lastIndex = m.index
    const first = FRAGMENT.exec(text)
    if (!first) continue
    examined = FRAGMENT.lastIndex
    // fragments and where each ends in `text`
    const parts: string[] = [first[0]]
    const ends: number[] = [m.index + first[0].length]
    while (parts.length < MAX_FRAGMENTS) {
      SEPARATOR.lastIndex = ends[ends.length - 1]
      const sep = SEPARATOR.exec(text)
      if (!sep) break
      // a fragment that starts with a token prefix starts a token of its own (examined
      // when the scan reaches it), so it never continues this one; without this stop every
      // prefix in a run of `ghp_ ghp_ …` would join and test the sixteen that follow it
      SPLIT_START_AT.lastIndex = SEPARATOR.lastIndex
      if (SPLIT_START_AT.test(text)) break
      FRAGMENT.lastIndex = SEPARATOR.lastIndex
      const next = FRAGMENT.exec(text)
      if (!next) break
      parts.push(next[0])
      ends.push(FRAGMENT.lastIndex)
    }
    if (parts.length < 2) continue
    const rules = candidates(parts.join(''), extra)
    if (rules.length === 0) continue
    // the fewest fragments that make a whole token, then more while they still do and
    // are not plain words (the prose after a token)
    let k = 0
    let kind: string | undefined
    for (let i = 2; i <= parts.length && !kind; i++) {
      const rule = fullMatch(parts.slice(0, i).join(''), rules)
      if (rule) [k, kind] = [i, rule.kind]
    }
    if (!kind) continue
    if (fullMatch(parts[0], rules)) {
      // already whole on its first line: only a random-looking continuation joins it
      if (PLAIN_WORD.test(parts[1]) || !/\d/.test(parts[1])) continue
    }
    while (k < parts.length && !PLAIN_WORD.test(parts[k]) && fullMatch(parts.slice(0, k + 1).join(''), rules)) k++
    const joined = parts.slice(0, k).join('')
    // random bodies hold a digit; a prefix followed by words of prose does not
    if (!/\d/.test(joined.slice(4))) continue
    out += text.slice(last, m.index) + `[REDACTED:${kind}]`
    last = ends[k - 1]
    counts[kind] = (counts[kind] ?? 0) + 1
    SPLIT_START.lastIndex = last
  }
  SPLIT_START.lastIndex = 0
  return last === 0 ? text : out + text.slice(last)
}

// ---- encoded secrets -----------------------------------------------------------------
const MAX_DECODE_DEPTH = 2
const MAX_DECODED_RUN = 64 * 1024
// a run of base64, base64url or hex characters, and a run holding %-escapes
const B64_RUN = /(?<![A-Za-z0-9+/=_\-])[A-Za-z0-9+/_\-]{16,}={0,2}(?![A-Za-z0-9+/=_\-])/g
const PCT_RUN = /(?<![A-Za-z0-9_.~+%\-])(?:%[0-9A-Fa-f]{2}|[A-Za-z0-9_.~+\-])*%[0-9A-Fa-f]{2}(?:%[0-9A-Fa-f]{2}|[A-Za-z0-9_.~+\-])*/g

/** Decoded text that reads as text (so binary data, hashes and signatures are not "decoded"). */
function readable(bytes: Buffer): string | undefined {
  if (bytes.length < 8) return undefined
  const s = bytes.toString('utf8')
  let bad = 0
  for (const ch of s) {
    const c = ch.codePointAt(0)!
    if (c === 0xfffd || (c < 0x20 && c !== 9 && c !== 10 && c !== 13) || (c >= 0x7f && c < 0xa0)) bad++
  }
  return bad <= s.length * 0.05 ? s : undefined
}

function decodeRun(run: string): string | undefined {
  if (run.length > MAX_DECODED_RUN) return undefined
  if (/^(?:[0-9a-f]{2})+$/.test(run) || /^(?:[0-9A-F]{2})+$/.test(run)) return readable(Buffer.from(run, 'hex'))
  const body = run.replace(/=+$/, '')
  if (body.length % 4 === 1 || (/[+/]/.test(body) && /[-_]/.test(body))) return undefined
  return readable(Buffer.from(body.replace(/-/g, '+').replace(/_/g, '/'), 'base64'))
}

function decodePercent(run: string): string | undefined {
  try {
    return decodeURIComponent(run.replace(/\+/g, ' '))
  } catch {
    return undefined
  }
}

/** Each kind of encoded run, its decoder, and what a text must hold for it to match: a %-escape; 16 run characters in a row. */
const ENCODED_RUNS = [
  [PCT_RUN, decodePercent, (t: string) => t.includes('%')],
  [B64_RUN, decodeRun, (t: string) => hasRun(t, 16)],
] as const

/** A base64, hex or %-encoded run whose decoded text holds a secret is replaced whole. */
function redactEncoded(text: string, extra: RedactionRule[], depth: number, counts: Record<string, number>): string {
  let out = text
  for (const [re, decode, mayMatch] of ENCODED_RUNS) {
    if (!mayMatch(out)) continue
    const src = out
    const markers = markerSpans(src)
    let mi = 0 // index into markers; runs arrive in increasing order (a search of every marker for each run was quadratic)
    let acc = ''
    let last = 0
    re.lastIndex = 0
    for (const m of src.matchAll(re)) {
      const start = m.index
      const end = start + m[0].length
      while (mi < markers.length && markers[mi + 1] <= start) mi += 2
      if (mi < markers.length && markers[mi] < end) continue
      const decoded = decode(m[0])
      if (decoded === undefined || decoded === m[0]) continue
      const inner = redactDepth(decoded, extra, depth + 1)
      if (Object.keys(inner.redactions).length === 0) continue
      acc += src.slice(last, start) + '[REDACTED:encoded-secret]'
      last = end
      counts['encoded-secret'] = (counts['encoded-secret'] ?? 0) + 1
    }
    if (last > 0) out = acc + src.slice(last)
  }
  return out
}
