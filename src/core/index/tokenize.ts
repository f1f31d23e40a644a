import {badInput} from '../store/errors.js'

/**
 * The term pipeline shared by indexing and querying, and the one home of engram's
 * stop-words and stemming: lowercase, fold diacritics, split on anything that is not a
 * letter or digit (`words`, MiniSearch's `tokenize`), drop stop-words, light suffix
 * stemming (`termOf`, MiniSearch's `processTerm`). Both sides must use exactly these
 * functions, so a change here is a format-version change (FORMAT in index.ts).
 */

export const MAX_TERM_LENGTH = 64

export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below between both but by ' +
    'can could did do does doing down during each few for from further had has have having he her here hers herself him ' +
    'himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or other ' +
    'our ours ourselves out over own same she should so some such than that the their theirs them themselves then there ' +
    'these they this those through to too under until up very was we were what when where which while who whom why will ' +
    'with would you your yours yourself yourselves'
  ).split(' '),
)

const WORD_RE = /[\p{L}\p{N}]+/gu
const NON_ASCII_RE = /[^\u0000-\u007f]/
const MARKS_RE = /\p{M}+/gu
const VOWEL_RE = /[aeiouy]/
const DIGIT_RE = /[0-9]/

function undouble(w: string): string {
  const n = w.length
  if (n >= 3 && w[n - 1] === w[n - 2] && !'lsz'.includes(w[n - 1]) && !VOWEL_RE.test(w[n - 1])) return w.slice(0, -1)
  return w
}

/**
 * Light English suffix stripping: plurals, -ed, -ing, -al on a long word, a final -e
 * ("deploys", "deployed", "deploying" → "deploy"; "renewal", "renews" → "renew").
 */
export function stem(word: string): string {
  let w = word
  if (w.length <= 3 || DIGIT_RE.test(w)) return w
  if (w.endsWith('ies') && w.length > 4) w = `${w.slice(0, -3)}y`
  else if (w.endsWith('sses')) w = w.slice(0, -2)
  else if (/(?:x|ch|sh|zz)es$/.test(w)) w = w.slice(0, -2)
  else if (w.endsWith('s') && !/(?:ss|us|is)$/.test(w)) w = w.slice(0, -1)
  if (w.endsWith('ing') && w.length >= 6 && VOWEL_RE.test(w.slice(0, -3))) w = undouble(w.slice(0, -3))
  else if (w.endsWith('ied') && w.length > 4) w = `${w.slice(0, -3)}y`
  else if (w.endsWith('ed') && w.length >= 5 && VOWEL_RE.test(w.slice(0, -2))) w = undouble(w.slice(0, -2))
  // a noun of an action ("renewal", "approval", "removal") finds the verb; short words ("total", "signal") stay
  else if (w.endsWith('al') && w.length >= 7 && !VOWEL_RE.test(w[w.length - 3])) w = w.slice(0, -2)
  if (w.length > 3 && w.endsWith('e')) w = w.slice(0, -1)
  return w
}

/** Lowercased words before stop-word removal and stemming (also used to place snippets). */
export function words(text: string): string[] {
  let t = text.toLowerCase()
  if (NON_ASCII_RE.test(t)) t = t.normalize('NFD').replace(MARKS_RE, '')
  return t.match(WORD_RE) ?? []
}

/** One word → its index term, or undefined for a stop-word or a single letter. */
export function termOf(word: string): string | undefined {
  if (STOP_WORDS.has(word)) return undefined
  if (word.length === 1 && !DIGIT_RE.test(word)) return undefined
  let w = word
  if (w.length > MAX_TERM_LENGTH) {
    // never cut a surrogate pair: a term must survive UTF-8 (the index file) unchanged
    const cut = isHighSurrogate(w.charCodeAt(MAX_TERM_LENGTH - 1)) ? MAX_TERM_LENGTH - 1 : MAX_TERM_LENGTH
    w = w.slice(0, cut)
  }
  return stem(w)
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff
}

/** The term pipeline: text → index terms, in order, with repeats. */
export function tokenize(text: string): string[] {
  const out: string[] = []
  for (const w of words(text)) {
    const t = termOf(w)
    if (t !== undefined) out.push(t)
  }
  return out
}

let rowA = new Int32Array(80)
let rowB = new Int32Array(80)

/** Levenshtein distance, or max+1 as soon as it must exceed max (for "did you mean" hints). */
export function boundedEditDistance(a: string, b: string, max: number): number {
  if (a === b) return 0
  const m = a.length
  const n = b.length
  if (Math.abs(m - n) > max) return max + 1
  if (n + 1 > rowA.length) {
    rowA = new Int32Array(n + 1)
    rowB = new Int32Array(n + 1)
  }
  let prev = rowA
  let cur = rowB
  for (let j = 0; j <= n; j++) prev[j] = j
  for (let i = 1; i <= m; i++) {
    cur[0] = i
    let rowMin = i
    const ca = a.charCodeAt(i - 1)
    for (let j = 1; j <= n; j++) {
      const cost = ca === b.charCodeAt(j - 1) ? 0 : 1
      const v = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
      cur[j] = v
      if (v < rowMin) rowMin = v
    }
    if (rowMin > max) return max + 1
    const t = prev
    prev = cur
    cur = t
  }
  return prev[n]
}

// ---- query syntax -------------------------------------------------------------------

export type TermMode = 'should' | 'must' | 'not'
export interface QueryTerm {
  term: string
  mode: TermMode
  /** prefix and fuzzy expansion allowed (unquoted words among the first few) */
  expand: boolean
}

/** Distinct terms kept from a query; a pasted page of text searches by its first words. */
export const MAX_QUERY_TERMS = 32
/** Only the first few terms get prefix/fuzzy expansion, which costs a dictionary scan each. */
export const MAX_EXPANDED_TERMS = 8

const QUERY_HELP = 'words match by relevance; +word requires a word, -word excludes it, "quoted words" must all appear, e.g. deploy +staging -legacy'

/**
 * Parse the query syntax: plain words (ranked, OR), `+word` (required), `-word`
 * (excluded), `"several words"` (all required, no fuzzy). Throws bad-input on syntax
 * errors and on a query with nothing to search for.
 */
export function parseQuery(query: string): QueryTerm[] {
  if (typeof query !== 'string' || query.trim() === '') throw badInput('The search query is empty.', QUERY_HELP)
  const raw: {text: string; mode: TermMode; quoted: boolean}[] = []
  let i = 0
  const n = query.length
  while (i < n) {
    const c = query[i]
    if (/\s/.test(c)) {
      i++
      continue
    }
    let mode: TermMode = 'should'
    let start = i
    if (c === '+' || c === '-') {
      mode = c === '+' ? 'must' : 'not'
      i++
      if (i >= n || /\s/.test(query[i])) {
        throw badInput(`The query has a "${c}" at position ${start + 1} with no word after it.`, QUERY_HELP)
      }
      start = i
    }
    if (query[i] === '"') {
      const close = query.indexOf('"', i + 1)
      if (close === -1) throw badInput(`The query has an unclosed quote at position ${i + 1}.`, QUERY_HELP)
      raw.push({text: query.slice(i + 1, close), mode: mode === 'should' ? 'must' : mode, quoted: true})
      i = close + 1
      continue
    }
    let end = i
    while (end < n && !/\s/.test(query[end]) && query[end] !== '"') end++
    raw.push({text: query.slice(start, end), mode, quoted: false})
    i = end
  }

  const rank: Record<TermMode, number> = {should: 0, must: 1, not: 2}
  const byTerm = new Map<string, QueryTerm>()
  let excludedOnly = true
  let sawWord = false
  for (const part of raw) {
    for (const term of tokenize(part.text)) {
      sawWord = true
      const prev = byTerm.get(term)
      if (prev) {
        if (rank[part.mode] > rank[prev.mode]) prev.mode = part.mode
        if (part.quoted) prev.expand = false
        continue
      }
      if (byTerm.size >= MAX_QUERY_TERMS) continue
      byTerm.set(term, {term, mode: part.mode, expand: !part.quoted && part.mode !== 'not'})
    }
  }
  const terms = [...byTerm.values()]
  for (const t of terms) if (t.mode !== 'not') excludedOnly = false
  if (!sawWord) throw badInput('The query has no searchable words (only stop-words or punctuation).', QUERY_HELP)
  if (excludedOnly) throw badInput('The query only excludes words; add at least one word to search for.', QUERY_HELP)
  let expanded = 0
  for (const t of terms) {
    if (!t.expand) continue
    if (expanded >= MAX_EXPANDED_TERMS) t.expand = false
    else expanded++
  }
  return terms
}
