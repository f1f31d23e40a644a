/**
 * A normalised view of a write's text for the checks that follow redaction (flags, the
 * delivery validator): invisible characters removed, compatibility forms folded (NFKC),
 * Cyrillic/Greek look-alikes inside Latin words mapped to Latin, and obvious base64/hex
 * blobs decoded for inspection. It is never what gets stored.
 */

export interface Normalised {
  text: string
  /**
   * what was hidden: 'zero-width', 'bidi', 'tag', 'invisible', 'homoglyph' (each at most once),
   * 'inside-words' when an invisible character sat between two Latin letters, 'tag-text' when
   * tag characters spelt text (not one of the three flags of Great Britain's nations),
   * 'variation-text' when variation selectors carried bytes, and 'zero-width-text' for a long run of zero-width characters
   */
  hidden: string[]
  /** the words (lower case, joined) that an invisible character split, at most 64 */
  split?: string[]
  /**
   * decoded base64/hex blobs, Unicode tag text, bytes in variation selectors, runs of HTML or
   * code escapes that spell ASCII, sentences in a cipher the text names (ROT13, backwards)
   * deciphered, sentences in leetspeak spelt out: for inspection only
   */
  decoded: string[]
  /** how many words spell a Latin word with look-alikes of another script ("іgnore", "раypal"), when any */
  lookalikes?: number
}

const ZERO_WIDTH = /[\u200B-\u200D\u2060\uFEFF]/g
// An invisible character between two Latin letters splits a word for a filter and not for a
// reader: no keyboard types one there (an emoji sequence joins emoji; Persian and Indic scripts,
// which use the joiners in their spelling, are not Latin). Every character Unicode says a reader
// ignores (Default_Ignorable_Code_Point: zero-width and bidi characters, joiners, fillers,
// variation selectors, invisible operators, tags, and the ones yet unassigned) counts, but a soft
// hyphen alone, which pasted text carries honestly ("Donau\u00addampf").
const IGNORABLE_RUN = /\p{Script=Latin}(\p{Default_Ignorable_Code_Point}+)(?=\p{Script=Latin})/gu
// a run of letters and ignorables, greedy and without a lazy part: one pass over the text
const SPLIT_WORD = /[\p{L}\p{M}\p{Default_Ignorable_Code_Point}]+/gu
const IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu
/** At most this many split words are named; a text with more has an agenda's words split too. */
export const SPLIT_CAP = 64

/** True when an ignorable character other than a lone soft hyphen sits between two Latin letters. */
function splitsWords(text: string): boolean {
  for (const m of text.matchAll(IGNORABLE_RUN)) if (/[^\u00AD]/.test(m[1])) return true
  return false
}

// Variation selectors choose a glyph (an emoji's colour form, a CJK variant): the checks read
// past them everywhere; the stored text loses them only between two Latin letters.
const VARIATION = /[\uFE00-\uFE0F\u{E0100}-\u{E01EF}]/gu
const VARIATION_IN_WORD = /(?<=\p{Script=Latin})[\uFE00-\uFE0F\u{E0100}-\u{E01EF}]+(?=\p{Script=Latin})/gu

/** The words an invisible character splits between two Latin letters, joined and lower-cased. */
function splitWords(text: string): string[] {
  if (!splitsWords(text)) return []
  const out = new Set<string>()
  for (const m of text.matchAll(SPLIT_WORD)) {
    if (!splitsWords(m[0])) continue
    out.add(m[0].replace(IGNORABLE, '').toLowerCase())
    if (out.size >= SPLIT_CAP) break
  }
  return [...out]
}
const BIDI = /[\u200E\u200F\u202A-\u202E\u2066-\u2069\u061C]/g
// Every other character that renders as nothing (Default_Ignorable_Code_Point, but the variation
// selectors above): soft hyphen, combining grapheme joiner, Mongolian vowel separator and
// variation selectors, invisible operators, Hangul fillers, Khmer inherent vowels, shorthand
// format controls, musical symbol formatting, the unassigned ones.
const INVISIBLE = /(?![\uFE00-\uFE0F\u{E0100}-\u{E01EF}])\p{Default_Ignorable_Code_Point}/gu
// Unicode tag characters (U+E0000–E007F) mirror ASCII invisibly: "ASCII smuggling".
const TAGS = /[\u{E0000}-\u{E007F}]/gu

// Cyrillic and Greek letters that look like Latin ones.
const CONFUSABLE: Record<string, string> = {
  // Cyrillic lower
  а: 'a', в: 'b', е: 'e', к: 'k', м: 'm', н: 'h', о: 'o', р: 'p', с: 'c', т: 't', у: 'y', х: 'x',
  ѕ: 's', і: 'i', ј: 'j', ԁ: 'd', һ: 'h', ԛ: 'q', ԝ: 'w', ӏ: 'l', ү: 'y', ь: 'b', ɡ: 'g',
  // Cyrillic upper
  А: 'A', В: 'B', Е: 'E', К: 'K', М: 'M', Н: 'H', О: 'O', Р: 'P', С: 'C', Т: 'T', Х: 'X',
  У: 'Y', Ѕ: 'S', І: 'I', Ј: 'J', Ԁ: 'D', Ԛ: 'Q', Ԝ: 'W', Ӏ: 'I', Ү: 'Y',
  // Greek lower
  α: 'a', β: 'b', ε: 'e', ι: 'i', κ: 'k', ν: 'v', ο: 'o', ρ: 'p', τ: 't', υ: 'u', χ: 'x', γ: 'y',
  // Greek upper
  Α: 'A', Β: 'B', Ε: 'E', Ζ: 'Z', Η: 'H', Ι: 'I', Κ: 'K', Μ: 'M', Ν: 'N', Ο: 'O', Ρ: 'P',
  Τ: 'T', Υ: 'Y', Χ: 'X',
}

const WORD = /[\p{L}\p{M}]+/gu
const OTHER_LOOKALIKE = /[\p{Script=Armenian}\p{Script=Cherokee}\p{Script=Lisu}]/u
// a plain word of four letters or more: lower case, capitalised, or all capitals
const DISGUISED_WORD = /^(?:[a-z]{4,}|[A-Z][a-z]{3,}|[A-Z]{4,})$/
const LATIN = /\p{Script=Latin}/u
const CYRILLIC_GREEK = /[\p{Script=Cyrillic}\p{Script=Greek}]/u
const CYRILLIC_GREEK_G = /[\p{Script=Cyrillic}\p{Script=Greek}]/gu
const LATIN_G = /\p{Script=Latin}/gu

const MAX_BLOBS = 32
const MAX_BLOB_CHARS = 64 * 1024

function strip(text: string, re: RegExp, name: string, hidden: Set<string>): string {
  re.lastIndex = 0
  if (!re.test(text)) return text
  hidden.add(name)
  re.lastIndex = 0
  return text.replace(re, '')
}

/** True when NFKC folded a letter (fullwidth ｉ, mathematical 𝐢, ligature ﬁ…). */
function nfkcChangedLetters(text: string): boolean {
  for (const ch of text) {
    if (ch.charCodeAt(0) < 0x80) continue
    if (/\p{L}/u.test(ch) && ch.normalize('NFKC') !== ch) return true
  }
  return false
}

function mapWord(word: string): string {
  let out = ''
  for (const ch of word) out += CONFUSABLE[ch] ?? ch
  return out
}

/**
 * Whether a word with Cyrillic or Greek letters is read as the Latin one it imitates: one that mixes
 * scripts ("іgnore": Cyrillic і + Latin), or one of `wholly` letters or more that all have a Latin
 * twin ("ехес"; Infinity: never).
 */
function readsAsLatin(word: string, wholly: number): boolean {
  return CYRILLIC_GREEK.test(word) && (LATIN.test(word) || (word.length >= wholly && [...word].every((ch) => ch in CONFUSABLE)))
}

/**
 * Map look-alikes in words that mix scripts ("іgnore": Cyrillic і + Latin). A word written
 * wholly in Cyrillic/Greek is left alone (it is Russian or Greek) unless the text around it
 * is Latin and every letter of the word has a Latin twin ("ехес" in English text).
 */
function mapHomoglyphs(text: string, hidden: Set<string>, count: {lookalikes: number}): string {
  if (!CYRILLIC_GREEK.test(text)) return text
  const latinCount = text.match(LATIN_G)?.length ?? 0
  const otherCount = text.match(CYRILLIC_GREEK_G)?.length ?? 0
  const mostlyLatin = latinCount > 4 * otherCount
  return text.replace(WORD, (word) => {
    if (!readsAsLatin(word, mostlyLatin ? 3 : Infinity)) return word
    const mapped = mapWord(word)
    if (mapped !== word) {
      hidden.add('homoglyph')
      // A disguise mixes scripts inside a word to spell a plain one ("Рlеаsе" → "Please"). Not
      // counted: a word wholly in Cyrillic or Greek (a Russian or Greek name: "Омск", "ΟΤΕ"),
      // science's Greek letters beside Latin ones ("TNFα", "NF-κB", "hν", "αvβ3"), decorative
      // text that mixes accents and scripts ("Τǿ ċo").
      if (LATIN.test(word) && DISGUISED_WORD.test(mapped)) count.lookalikes++
    }
    return mapped
  })
}

/** The last index i of `starts` (ascending) with starts[i] <= x, or -1. */
function lastAtOrBefore(starts: number[], x: number): number {
  let lo = 0
  let hi = starts.length - 1
  let found = -1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    if (starts[mid] <= x) {
      found = mid
      lo = mid + 1
    } else hi = mid - 1
  }
  return found
}

/** A span of the text, [ts, te), read as view units [vs, ve), replaced by `marker` (redact/index.ts). */
export interface ReplacedSpan {
  vs: number
  ve: number
  ts: number
  te: number
  marker: string
}

/** A span replaced by a marker since the reading was made, in the coordinates of its making. */
interface Patch {
  bvs: number
  bve: number
  bts: number
  bte: number
  marker: string
}

/**
 * A text's look-alike reading (lookalikeReading). The view, as made, is the text but for its
 * pieces read otherwise, each an edit: view units [v, v + vl) read from text [t, t + tl), taken as
 * one character. Between edits the two are the same, one unit for one. Spans replaced by markers
 * since (`replaced`) are patches over that: a marker is one piece, the same in text and view.
 */
export class LookalikeReading {
  private patches: Patch[] = []
  // per patch, in order: where it starts in today's view and text, and the shifts before it
  private cvs: number[] = []
  private cts: number[] = []
  private dvBefore: number[] = []
  private dtBefore: number[] = []

  constructor(
    public view: string,
    private readonly v: number[],
    private readonly vl: number[],
    private readonly t: number[],
    private readonly tl: number[],
    /** Whether combining marks that compose with nothing were read as nothing (lookalikeReading). */
    public readonly droppedMarks: boolean,
  ) {}

  /** Where in the text the character read as the view's unit k starts. */
  from(k: number): number {
    const [i, inside, dv, dt] = this.patchAt(this.cvs, k)
    if (inside) return this.cts[i]
    const kb = k - dv
    const e = lastAtOrBefore(this.v, kb)
    return (e >= 0 && kb < this.v[e] + this.vl[e] ? this.t[e] : kb + this.shift(e)) + dt
  }

  /** Where in the text it ends (its combining marks included). */
  to(k: number): number {
    const [i, inside, dv, dt] = this.patchAt(this.cvs, k)
    if (inside) return this.cts[i] + this.patches[i].marker.length
    const kb = k - dv
    const e = lastAtOrBefore(this.v, kb)
    return (e >= 0 && kb < this.v[e] + this.vl[e] ? this.t[e] + this.tl[e] : kb + this.shift(e) + 1) + dt
  }

  /** The view unit where text position x falls between characters, or -1 inside one read as several units or none. */
  at(x: number): number {
    const [i, inside, dv, dt] = this.patchAt(this.cts, x)
    if (inside) return x === this.cts[i] ? this.cvs[i] : -1
    const xb = x - dt
    const e = lastAtOrBefore(this.t, xb)
    if (e >= 0 && xb < this.t[e] + this.tl[e]) return xb === this.t[e] ? this.v[e] + dv : -1
    return xb - this.shift(e) + dv
  }

  /**
   * The text span of the piece read as one character (a character read as several units or none,
   * a letter with its marks, a marker) that text position x falls inside, not at its start; or null.
   */
  inside(x: number): [number, number] | null {
    const [i, inPatch, , dt] = this.patchAt(this.cts, x)
    if (inPatch) return x === this.cts[i] ? null : [this.cts[i], this.cts[i] + this.patches[i].marker.length]
    const xb = x - dt
    const e = lastAtOrBefore(this.t, xb)
    return e >= 0 && xb > this.t[e] && xb < this.t[e] + this.tl[e] ? [this.t[e] + dt, this.t[e] + this.tl[e] + dt] : null
  }

  private shift(e: number): number {
    return e < 0 ? 0 : this.t[e] + this.tl[e] - (this.v[e] + this.vl[e])
  }

  /** The last patch starting at or before today's position k (in `starts`), whether k is in its marker, and the shifts that apply at k. */
  private patchAt(starts: number[], k: number): [number, boolean, number, number] {
    const i = lastAtOrBefore(starts, k)
    if (i < 0) return [i, false, 0, 0]
    const p = this.patches[i]
    if (k < starts[i] + p.marker.length) return [i, true, 0, 0]
    return [i, false, this.dvBefore[i] + p.marker.length - (p.bve - p.bvs), this.dtBefore[i] + p.marker.length - (p.bte - p.bts)]
  }

  /**
   * This reading, after each span [ts, te) of the text, read as today's view units [vs, ve), is
   * replaced by `marker` (ascending, apart). Not read again: a span over earlier markers takes
   * them in, and the cost is the number of markers, not the text's length.
   */
  replaced(spans: ReplacedSpan[]): LookalikeReading {
    let view = ''
    let lastV = 0
    const add: Patch[] = []
    for (const s of spans) {
      view += this.view.slice(lastV, s.vs) + s.marker
      lastV = s.ve
      // where the span starts and ends as made: a marker it starts or ends in is taken in whole
      const [i, inStart, dvs, dts] = this.patchAt(this.cvs, s.vs)
      const [j, inEnd, dve, dte] = this.patchAt(this.cvs, s.ve - 1)
      const bvs = inStart ? this.patches[i].bvs : s.vs - dvs
      const bts = inStart ? this.patches[i].bts : s.ts - dts
      const bve = inEnd ? this.patches[j].bve : s.ve - dve
      const bte = inEnd ? this.patches[j].bte : s.te - dte
      add.push({bvs, bve, bts, bte, marker: s.marker})
    }
    this.view = view + this.view.slice(lastV)
    // the new patches replace the old ones they cover
    const merged: Patch[] = []
    let a = 0
    for (const p of this.patches) {
      while (a < add.length && add[a].bve <= p.bvs) merged.push(add[a++])
      if (a < add.length && add[a].bvs <= p.bvs && p.bve <= add[a].bve) continue // taken in
      merged.push(p)
    }
    while (a < add.length) merged.push(add[a++])
    this.patches = merged
    let dv = 0
    let dt = 0
    this.cvs = []
    this.cts = []
    this.dvBefore = []
    this.dtBefore = []
    for (const p of this.patches) {
      this.dvBefore.push(dv)
      this.dtBefore.push(dt)
      this.cvs.push(p.bvs + dv)
      this.cts.push(p.bts + dt)
      dv += p.marker.length - (p.bve - p.bvs)
      dt += p.marker.length - (p.bte - p.bts)
    }
    return this
  }
}

/**
 * The text with look-alikes read as the ASCII they imitate, and where in the text each unit of
 * that reading was read from: for redaction, so that a secret's name spelt with look-alikes
 * ("pаssword is …", Cyrillic а; "𝐩𝐚𝐬𝐬𝐰𝐨𝐫𝐝"; "p̲a̲s̲s̲w̲o̲r̲d̲") is found and its value replaced where it
 * stands in the text itself. Null when there are none.
 *
 * Read as ASCII: a letter, digit or symbol whose compatibility form (NFKC) is ASCII letters and
 * digits — fullwidth ｐ, mathematical 𝐩 and 𝟏, ſ, the Kelvin sign, Roman numerals (Ⅻ reads XII),
 * circled ⓟ and ①, ligatures — but not a superscript, subscript or modifier letter (a footnote's
 * ¹, an exponent's ², ᵢ: they mark the word before them, they do not spell it); fullwidth, small
 * and vertical signs (`：`, `﹕`, `﹦`) as the ASCII sign; the spaces NFKC folds (no-break,
 * ideographic, the typographic ones) as a space. Combining marks after a letter or digit: as the
 * letter they compose with (e + ◌́ reads é, as if written so), else as nothing (p̲ reads p) — or,
 * with `keepMarks`, as written (the second reading redaction makes of a text with such marks: a
 * mark that parts two words, `x́pin`, must part them). Then
 * Armenian and Cherokee letters that imitate Latin ones in a word that mixes them with Latin,
 * Cyrillic or Greek letters; then Cyrillic and Greek letters as normalise() maps them
 * (mapHomoglyphs), in words that mix scripts and in words wholly of look-alikes (here of any
 * length: `іѕ`, a lone `Ε` between digits) — in any text,
 * not only a mostly Latin one: which words are read as Latin must not change when redaction takes
 * a value out of the text, or redacting twice would find more (a Russian word read as Latin
 * gibberish here names no secret). Where anything is read so, Chinese, Japanese and Korean letters
 * and their punctuation read as line breaks: no secret is written in them, a value read after a
 * fullwidth name ends where they start ("ｔｏｋｅｎ：见环境变量。" names no token), and a name before
 * them is not read with a colon after them ("token 有効期限：2025-12-31" is the token's expiry).
 */
export function lookalikeReading(text: string, keepMarks = false): LookalikeReading | null {
  if (!NON_ASCII.test(text)) return null
  const v: number[] = []
  const vl: number[] = []
  const t: number[] = []
  const tl: number[] = []
  const edit = (at: number, read: string, from: number, length: number) => {
    v.push(at)
    vl.push(read.length)
    t.push(from)
    tl.push(length)
  }
  // the view so far, in pieces (a letter's marks take back its last unit: never the whole view)
  const parts: string[] = []
  let length = 0
  const put = (piece: string) => {
    parts.push(piece)
    length += piece.length
  }
  let last = 0 // in the text, the end of what the view holds
  let base = -1 // where the letter that a combining mark here would belong to starts, or -1
  let dropped = false
  const re = new RegExp(MAY_READ_AS.source, 'gu')
  let m: RegExpExecArray | null
  while ((m = re.exec(text)) !== null) {
    const i = m.index
    const ch = m[0]
    if (i > last) {
      put(text.slice(last, i))
      base = MARKED.test(text[i - 1]) ? i - 1 : -1
    } else if (i < last) continue
    last = i + ch.length
    if (MARK.test(ch)) {
      if (base < 0) {
        put(ch)
        continue
      }
      // the marks in a row, with the letter before them: composed if they compose, else dropped
      MARKS.lastIndex = i
      const end = i + MARKS.exec(text)![0].length
      const letter = base
      const plain = text.slice(letter, i)
      const composed = text.slice(letter, end).normalize('NFC')
      const composes = [...composed].length === 1 && composed !== plain
      last = end
      re.lastIndex = end
      base = -1
      if (!composes && keepMarks) {
        put(text.slice(i, end)) // the marks as written (a reading for a mark that parts two words: `x́pin`)
        continue
      }
      if (!composes) dropped = true
      const e = v.length - 1
      const wasEdit = e >= 0 && t[e] === letter
      const units = wasEdit ? vl[e] : plain.length // what the view holds of the letter: the end of its last piece
      const piece = parts.pop()!
      const held = piece.slice(piece.length - units)
      if (piece.length > units) parts.push(piece.slice(0, piece.length - units))
      length -= units
      const read = composes ? composed : held
      if (wasEdit) v.pop(), vl.pop(), t.pop(), tl.pop()
      edit(length, read, letter, end - letter)
      put(read)
      continue
    }
    const cp = ch.codePointAt(0)!
    const read = cp >= 0xff01 && cp <= 0xff5e ? String.fromCharCode(cp - 0xfee0) : ODD_SPACE.test(ch) ? ' ' : asciiOf(cp, ch)
    if (read === null || read === ch) {
      put(ch)
      base = MARKED.test(ch) ? i : -1
      continue
    }
    edit(length, read, i, ch.length)
    put(read)
    base = /^[A-Za-z0-9]{1,4}$/.test(read) ? i : -1
  }
  let view = parts.join('') + text.slice(last)
  // one for one from here: Cyrillic, Greek, Armenian and Cherokee letters are in the BMP and each
  // maps to one ASCII letter, so the edits stand
  if (OTHER_LOOKALIKE.test(view))
    view = view.replace(WORD, (word) =>
      OTHER_LOOKALIKE.test(word) && (LATIN.test(word) || CYRILLIC_GREEK.test(word)) ? [...word].map((c) => OTHER_CONFUSABLE[c] ?? c).join('') : word,
    )
  // (here a word wholly of look-alikes of any length: `іѕ` between Latin words, `Ε` inside a token)
  if (CYRILLIC_GREEK.test(view)) view = view.replace(WORD, (word) => (readsAsLatin(word, 1) ? mapWord(word) : word))
  if (view === text) return null
  return new LookalikeReading(view.replace(CJK, (ch) => '\n'.repeat(ch.length)), v, vl, t, tl, dropped)
}

/**
 * What a character reads as under NFKC, or null: ASCII letters and digits (1 to 4), or for a
 * small or vertical form one ASCII sign. Cached: texts hold few distinct characters.
 */
function asciiOf(cp: number, ch: string): string | null {
  let read = nfkcAscii.get(cp)
  if (read === undefined) {
    const folded = ch.normalize('NFKC')
    const sign = (cp >= 0xfe10 && cp <= 0xfe19) || (cp >= 0xfe30 && cp <= 0xfe6b)
    read = folded !== ch && (/^[A-Za-z0-9]{1,4}$/.test(folded) || (sign && /^[!-~]$/.test(folded))) ? folded : null
    if (nfkcAscii.size > 4096) nfkcAscii.clear()
    nfkcAscii.set(cp, read)
  }
  return read
}
const nfkcAscii = new Map<number, string | null>()

/**
 * What the reading may read otherwise: combining marks, the spaces NFKC folds, fullwidth, small
 * and vertical forms, and the blocks that hold every character NFKC reads as ASCII letters or
 * digits (letterlike symbols, Roman numerals, enclosed and mathematical alphanumerics, ligatures,
 * squared abbreviations, …) but superscripts, subscripts and modifier letters (SCRIPT_FORMS): a
 * test enumerates them all. Any other character is read as itself.
 */
export const MAY_READ_AS =
  /[\p{M}\u00a0\u0132\u0133\u017f\u01c7-\u01cc\u01f1-\u01f3\u2000-\u200a\u202f\u205f\u20a8\u2102-\u2149\u2160-\u217f\u2460-\u24ff\u3000\u3250-\u325f\u32b1-\u32bf\u32cc-\u32cf\u3371-\u33ff\ufb00-\ufb06\ufe10-\ufe19\ufe30-\ufe6b\uff01-\uff5e\u{1ccd6}-\u{1ccf9}\u{1d400}-\u{1d7ff}\u{1f12b}-\u{1f190}\u{1fbf0}-\u{1fbf9}]/gu
/** Superscripts, subscripts and modifier letters: NFKC reads them as letters and digits, the reading does not. */
export const SCRIPT_FORMS = /[\u00aa\u00b2\u00b3\u00b9\u00ba\u02b0-\u02ff\u1d2c-\u1dbf\u2070-\u209f\u2c7c\u2c7d\ua7f1-\ua7f4\u{107a5}]/u
const MARK = /^\p{M}$/u
const MARKS = /\p{M}+/uy
// a letter or digit a combining mark belongs to
const MARKED = /[\p{Script=Latin}\p{Script=Cyrillic}\p{Script=Greek}\p{Script=Armenian}\p{Script=Cherokee}\p{Nd}]/u
const ODD_SPACE = /^[\u00a0\u2000-\u200a\u202f\u205f\u3000]$/
// Armenian and Cherokee letters that imitate Latin ones (Unicode's confusables), read so only in a
// word that mixes them with Latin, Cyrillic or Greek letters: a word wholly in Armenian is Armenian
const OTHER_CONFUSABLE: Record<string, string> = {
  օ: 'o', ս: 'u', հ: 'h', ո: 'n', ց: 'g', զ: 'q', Ս: 'U', Օ: 'O', Տ: 'S', Լ: 'L',
  Ꭺ: 'A', Ᏼ: 'B', Ꮯ: 'C', Ꭰ: 'D', Ꭼ: 'E', Ꮐ: 'G', Ꮋ: 'H', Ꭻ: 'J', Ꮶ: 'K', Ꮮ: 'L', Ꮇ: 'M', Ꮲ: 'P', Ꮪ: 'S', Ꭲ: 'T', Ꮩ: 'V', Ꮃ: 'W', Ꮓ: 'Z',
}

const NON_ASCII = /[^\x00-\x7f]/
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u3001-\u303f\u30fc\uff5f-\uff65]/gu

/** Mostly printable text: no NUL/control bytes beyond whitespace, at most 5 % odd ones. */
function printable(s: string): boolean {
  if (s.length === 0) return false
  let bad = 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if ((c < 0x20 && c !== 9 && c !== 10 && c !== 13) || c === 0x7f || c === 0xfffd) bad++
  }
  return bad / s.length <= 0.05 && /[\p{L}\p{N}]{2}/u.test(s)
}

const utf8 = new TextDecoder('utf-8', {fatal: true})

function decodeUtf8(buf: Buffer): string | null {
  try {
    const s = utf8.decode(buf)
    return printable(s) ? s : null
  } catch {
    return null
  }
}

const BASE64 = /(?<![A-Za-z0-9+/_\-])[A-Za-z0-9+/_\-]{24,}={0,2}(?![A-Za-z0-9+/_\-=])/g
const HEX = /(?<![0-9A-Za-z])(?:[0-9a-fA-F]{2}){16,}(?![0-9A-Za-z])/g
const DATA_URI_PREFIX = /data:[\w.+-]+\/[\w.+-]+;base64,$/

function decodeBlobs(text: string, out: string[], depth: number): void {
  if (out.length >= MAX_BLOBS) return
  for (const m of text.matchAll(HEX)) {
    if (out.length >= MAX_BLOBS) return
    const blob = m[0].slice(0, MAX_BLOB_CHARS)
    const s = decodeUtf8(Buffer.from(blob, 'hex'))
    if (s !== null) {
      out.push(s)
      if (depth < 2) decodeBlobs(s, out, depth + 1)
    }
  }
  for (const m of text.matchAll(BASE64)) {
    if (out.length >= MAX_BLOBS) return
    const blob = m[0]
    if (blob.length > MAX_BLOB_CHARS) continue
    // a hex run is handled above; pure hex (git SHAs, digests) is not base64 text
    if (/^[0-9a-fA-F]+$/.test(blob)) continue
    // image payloads are binary by definition; skip the decode
    if (DATA_URI_PREFIX.test(text.slice(Math.max(0, m.index - 64), m.index))) continue
    const body = blob.replace(/=+$/, '')
    if (body.length % 4 === 1) continue
    const s = decodeUtf8(Buffer.from(body, /[_-]/.test(body) ? 'base64url' : 'base64'))
    if (s !== null) {
      out.push(s)
      if (depth < 2) decodeBlobs(s, out, depth + 1)
    }
  }
}

export function normalise(text: string): Normalised {
  const hidden = new Set<string>()
  const decoded: string[] = []

  TAGS.lastIndex = 0
  if (TAGS.test(text)) {
    hidden.add('tag')
    // the tag block spells ASCII: show what it said (matchAll starts at lastIndex); the flags of
    // England, Scotland and Wales (🏴, tags "gbeng", the cancel tag) are the tags' one honest use
    const spelt = text.replace(FLAG_TAGS, '')
    TAGS.lastIndex = 0
    const smuggled = [...spelt.matchAll(TAGS)].map((m) => String.fromCharCode(m[0].codePointAt(0)! - 0xe0000)).join('').replace(/[^\x20-\x7e]/g, '')
    if (/[\x21-\x7e]/.test(smuggled)) {
      decoded.push(smuggled)
      if ((smuggled.match(/[\x21-\x7e]/g)?.length ?? 0) >= 3) hidden.add('tag-text')
    }
    TAGS.lastIndex = 0
    text = text.replace(TAGS, '')
  }
  // Bytes in variation selectors (VS1–VS256 after one character): a glyph takes one selector at
  // most, so a run of them carries data that a model can be told to read back.
  VARIATION_RUN.lastIndex = 0
  if (VARIATION_RUN.test(text)) {
    hidden.add('variation-text')
    VARIATION_RUN.lastIndex = 0
    for (const m of text.matchAll(VARIATION_RUN)) {
      const bytes = [...m[0]].map((ch) => {
        const cp = ch.codePointAt(0)!
        return cp <= 0xfe0f ? cp - 0xfe00 : cp - 0xe0100 + 16
      })
      const s = decodeUtf8(Buffer.from(bytes))
      if (s !== null && decoded.length < MAX_BLOBS) decoded.push(s)
    }
  }
  // zero-width characters in a long run, as bits or as padding: no spelling needs more than one in a row
  if (ZERO_WIDTH_RUN.test(text)) hidden.add('zero-width-text')
  const split = splitWords(text)
  text = strip(text, ZERO_WIDTH, 'zero-width', hidden)
  text = strip(text, BIDI, 'bidi', hidden)
  if (split.length > 0) hidden.add('inside-words')
  text = text.replace(VARIATION, '')
  text = strip(text, INVISIBLE, 'invisible', hidden)

  const folded = text.normalize('NFKC')
  if (folded !== text && nfkcChangedLetters(text)) hidden.add('homoglyph')
  const count = {lookalikes: 0}
  text = mapHomoglyphs(folded, hidden, count)
  // Armenian, Cherokee and Lisu letters that look Latin ("օ", "Ꮪ", "ꓢ") inside a Latin word are a disguise too
  if (OTHER_LOOKALIKE.test(text)) {
    for (const word of text.match(WORD) ?? []) if (word.length >= 4 && LATIN.test(word) && OTHER_LOOKALIKE.test(word)) count.lookalikes++
    if (count.lookalikes > 0) hidden.add('homoglyph')
  }

  decodeBlobs(text, decoded, 0)
  decodeEscapes(text, decoded)
  decipher(text, decoded)
  spellLeet(text, decoded)
  return {
    text,
    hidden: [...hidden],
    decoded,
    ...(split.length > 0 ? {split} : {}),
    ...(count.lookalikes > 0 ? {lookalikes: count.lookalikes} : {}),
  }
}

// four selectors in a row carry bytes (the veto); two already are more than a glyph takes (dropped when stored)
const VARIATION_RUN = /[\uFE00-\uFE0F\u{E0100}-\u{E01EF}]{4,}/gu
const VARIATION_PAIR = /[\uFE00-\uFE0F\u{E0100}-\u{E01EF}]{2,}/gu
const ZERO_WIDTH_RUN = /[\u200B-\u200D\u2060\uFEFF]{8,}/

// Words of three letters or more that most sentences of a language have, in the languages the
// corpus writes most, none of them another's reversal ("nie"/"ein"): a sentence with none of
// them may be in a cipher.
const COMMON_WORDS = new Set(
  (
    'the and for with that this you your will can may must from are not all any have has was were been ' +
    'der die das und ist mit für nicht von den eine sie ' +
    'les est pour avec des une que qui pas vous ' +
    'los las para con del una por ' +
    'com uma não ' +
    'jest się ' +
    'bir için ile'
  ).split(' '),
)

function commonWords(sentence: string): number {
  let n = 0
  for (const w of sentence.toLowerCase().match(/\p{L}+/gu) ?? []) if (COMMON_WORDS.has(w)) n++
  return n
}

/** The sentences of `text` that do not read as words as written, deciphered with `decode`. */
function deciphered(text: string, decode: (s: string) => string): string[] {
  const out: string[] = []
  for (const sentence of text.split(/(?<=[.!?:;])\s+|\n+/)) {
    if (sentence.length < 12 || commonWords(sentence) > 0) continue
    out.push(decode(sentence))
  }
  return out
}

// The flags of England, Scotland and Wales: 🏴 (U+1F3F4, perhaps with VS16), the tags "gbeng",
// "gbsct" or "gbwls", the cancel tag (U+E007F). Other tag sequences are not in general use.
const FLAG_TAGS = /\u{1F3F4}\uFE0F?\u{E0067}\u{E0062}(?:\u{E0065}\u{E006E}\u{E0067}|\u{E0073}\u{E0063}\u{E0074}|\u{E0077}\u{E006C}\u{E0073})\u{E007F}/gu

// A run of six or more escapes, HTML ("&#83;&#97;", "&#x53;") or code ("\u0053", "\x53"):
// text written so that a reader sees codes where a model sees words.
const ESCAPE_RUN = /(?:&#(?:\d{2,7}|[xX][0-9a-fA-F]{2,6});?\s?|\\u[0-9a-fA-F]{4}|\\u\{[0-9a-fA-F]{2,6}\}|\\x[0-9a-fA-F]{2}){6,}/g
const ONE_ESCAPE = /&#(\d{2,7});?|&#[xX]([0-9a-fA-F]{2,6});?|\\u([0-9a-fA-F]{4})|\\u\{([0-9a-fA-F]{2,6})\}|\\x([0-9a-fA-F]{2})/g

function unescapeRun(run: string): string | null {
  const out = run.replace(/(&#(?:\d+|[xX][0-9a-fA-F]+);?)\s/g, '$1').replace(ONE_ESCAPE, (_m, dec, hexEnt, u4, uBrace, x2) => {
    const code = dec ? Number.parseInt(dec, 10) : Number.parseInt(hexEnt ?? u4 ?? uBrace ?? x2, 16)
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : ''
  })
  return printable(out) ? out : null
}

// A text that names the reading it wants: ROT13 (or a Caesar shift of 13), backwards.
const ROT13_CUE = /\brot[\s-]?13\b|\bcaesar\b/i
const BACKWARDS_CUE =
  /\b(?:read|reads|write|written|wrote|spelt|spelled|typed)\b[^.\n]{0,40}?\b(?:backwards?|in\s+reverse|right[\s-]+to[\s-]+left|from\s+(?:the\s+)?(?:end|last\s+letter))\b|\b(?:backwards|reversed|mirrored)\s+(?:text|line|note|string|sentence|message)\b|\bread\s+(?:it\s+|this\s+|the\s+\w+\s+)?right[\s-]+to[\s-]+left\b|(?:czyta\w*|zapisan\w*|napisan\w*)\s+od\s+ty[łl]u|tersten\s+(?:oku|yaz)|(?:l[ée]e(?:lo)?|escrit[oa])\s+al\s+rev[ée]s|(?:leia|lido|escrit[oa])\s+de\s+tr[áa]s\s+para\s+a\s+frente|(?:lis|lire|écrit)\s+à\s+l['’]envers|(?:lies|lesen|gelesen|geschrieben)\s+(?:\w+\s+)?r[üu]ckw[äa]rts|r[üu]ckw[äa]rts\s+(?:lesen|gelesen|geschrieben)|(?:читай|прочитай|написано)\s+(?:задом\s+наперёд|наоборот)|倒着(?:读|念)|逆から読|거꾸로\s*읽/i
function rot13(text: string): string {
  return text.replace(/[A-Za-z]/g, (ch) => {
    const base = ch <= 'Z' ? 65 : 97
    return String.fromCharCode(((ch.charCodeAt(0) - base + 13) % 26) + base)
  })
}

/**
 * Runs of escapes that spell ASCII: a person sees codes where a model sees words. Escapes that
 * spell another script are how JSON and HTML carry it honestly (Python's json.dumps writes every
 * non-ASCII letter so), and are left alone.
 */
function decodeEscapes(text: string, out: string[]): void {
  if (!text.includes('&#') && !text.includes('\\')) return
  for (const m of text.matchAll(ESCAPE_RUN)) {
    if (out.length >= MAX_BLOBS) return
    const s = unescapeRun(m[0].slice(0, MAX_BLOB_CHARS))
    if (s === null) continue
    const letters = s.match(/\p{L}/gu)?.length ?? 0
    const ascii = s.match(/[A-Za-z]/g)?.length ?? 0
    if (letters > 0 && ascii >= 0.8 * letters) out.push(s)
  }
}

/**
 * The sentences of a text written in a cipher it names (docs/vote-rounds.md "Round thirteen"): when the text
 * says ROT13, or that it is to be read backwards, each sentence that does not read as words as
 * written is deciphered and inspected like a decoded blob. A sentence that was not in the cipher
 * deciphers to nonsense, which no check reads as an order.
 */
function decipher(text: string, out: string[]): void {
  if (text.length > MAX_BLOB_CHARS) return
  const backwards = (s: string) => [...s].reverse().join('')
  for (const [cue, decode] of [
    [ROT13_CUE, rot13],
    [BACKWARDS_CUE, backwards],
  ] as const) {
    if (!cue.test(text)) continue
    for (const r of deciphered(text, decode)) if (out.length < MAX_BLOBS) out.push(r)
  }
}

// A word of leetspeak: lower-case letters with digits standing for letters ("r3m3mb3r",
// "4ss1st4nt"); not a numeronym ("k8s", "i18n", "a11y"), an ordinal, a model number or a digest.
const LEET_WORD = /(?<![\p{L}\p{N}_@.])(?=[a-z0-9]*[a-z])(?=[a-z0-9]*[013457])[a-z0-9]{2,20}(?![\p{L}\p{N}_@])/gu
const LEET: Record<string, string> = {'0': 'o', '1': 'i', '3': 'e', '4': 'a', '5': 's', '7': 't'}
const LEET_PAIR = /[a-z][013457]|[013457][a-z]/g
const leetWord = (w: string) => /[a-z][013457]|[013457][a-z]/.test(w) && !/^[a-z](?:\d{2}|[2689])[a-z]{1,2}$/.test(w) && !/^\d+(?:st|nd|rd|th)$/.test(w) && !/^[0-9a-f]{8,}$/.test(w)

const CLOSING = new Map([['"', '"'], ['\u201c', '\u201d'], ['\u00ab', '\u00bb']])

/**
 * The text with each quotation closed on its line replaced by `""`, as
 * `/"[^"\n]*"|\u201c[^\u201d\n]*\u201d|\u00ab[^\u00bb\n]*\u00bb/g` would, read once: the pattern
 * read a line of "«" with no "»" to its end from each one (0.8 s at 32 KiB, 13 s at 128 KiB). A
 * mark that opens no quotation (none of its closing marks before the line's end) opens none
 * before that line's end either.
 */
function unquote(text: string): string {
  let out = ''
  let at = 0
  const openUntil = new Map<string, number>()
  for (let i = 0; i < text.length; i++) {
    const close = CLOSING.get(text[i])
    if (close === undefined || i < (openUntil.get(text[i]) ?? 0)) continue
    let j = i + 1
    while (j < text.length && text[j] !== close && text[j] !== '\n') j++
    if (j === text.length || text[j] === '\n') {
      openUntil.set(text[i], j)
      continue
    }
    out += `${text.slice(at, i)}""`
    at = j + 1
    i = j
  }
  return at === 0 ? text : out + text.slice(at)
}

/**
 * The sentences written in leetspeak, spelt out: three leet words or more, and two words in five
 * at least (a sentence that names "mp3", "B2B" and "k8s" among plain words is plain). The
 * whole-text reading of flags.ts (collapseSpelled) tries the rules on a text with some leet in
 * it; these sentences are inspected as hidden text.
 */
function spellLeet(text: string, out: string[]): void {
  // three words with a letter beside a leet digit at least, before any sentence is read
  if ((text.match(LEET_PAIR)?.length ?? 0) < 3) return
  const spelt: string[] = []
  // an example in quotation marks ("s3nd th3 p4ssw0rd" on a training slide) is shown, not said
  for (const sentence of unquote(text).split(/(?<=[.!?;:])\s+|\n+/)) {
    const leet = (sentence.match(LEET_WORD) ?? []).filter(leetWord)
    if (leet.length < 3) continue
    const words = sentence.match(/[\p{L}\p{N}']+/gu)?.length ?? 0
    if (leet.length < 0.4 * words) continue
    spelt.push(sentence.replace(LEET_WORD, (w) => (leetWord(w) ? w.replace(/[013457]/g, (d) => LEET[d]) : w)))
  }
  if (spelt.length > 0 && out.length < MAX_BLOBS) out.push(spelt.join('\n'))
}

/**
 * The text with invisible characters removed (zero-width, bidi controls, invisible
 * fillers, tag characters, runs of variation selectors) and nothing else changed. The write path stores this form, so
 * a secret split by a zero-width space is still redacted and no hidden text is stored.
 */
export function stripInvisible(text: string): string {
  // a glyph takes one variation selector: a run of them carries bytes, and is dropped like tags
  return text.replace(ZERO_WIDTH, '').replace(BIDI, '').replace(INVISIBLE, '').replace(TAGS, '').replace(VARIATION_IN_WORD, '').replace(VARIATION_PAIR, '')
}
