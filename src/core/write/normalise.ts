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
   * and 'inside-words' when an invisible character sat between two Latin letters
   */
  hidden: string[]
  /** the words (lower case, joined) that an invisible character split, at most 64 */
  split?: string[]
  /** decoded base64/hex blobs (and Unicode tag text), for inspection only */
  decoded: string[]
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
 * Map look-alikes in words that mix scripts ("іgnore": Cyrillic і + Latin). A word written
 * wholly in Cyrillic/Greek is left alone (it is Russian or Greek) unless the text around it
 * is Latin and every letter of the word has a Latin twin ("ехес" in English text).
 */
function mapHomoglyphs(text: string, hidden: Set<string>): string {
  if (!CYRILLIC_GREEK.test(text)) return text
  const latinCount = text.match(LATIN_G)?.length ?? 0
  const otherCount = text.match(CYRILLIC_GREEK_G)?.length ?? 0
  const mostlyLatin = latinCount > 4 * otherCount
  return text.replace(WORD, (word) => {
    if (!CYRILLIC_GREEK.test(word)) return word
    const mixed = LATIN.test(word)
    const allConfusable = [...word].every((ch) => ch in CONFUSABLE)
    if (mixed || (mostlyLatin && allConfusable && word.length >= 3)) {
      const mapped = mapWord(word)
      if (mapped !== word) hidden.add('homoglyph')
      return mapped
    }
    return word
  })
}

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
    // the tag block spells ASCII: show what it said (matchAll starts at lastIndex)
    TAGS.lastIndex = 0
    const smuggled = [...text.matchAll(TAGS)].map((m) => String.fromCharCode(m[0].codePointAt(0)! - 0xe0000)).join('')
    if (/[\x20-\x7e]/.test(smuggled)) decoded.push(smuggled.replace(/[^\x20-\x7e]/g, ''))
    TAGS.lastIndex = 0
    text = text.replace(TAGS, '')
  }
  const split = splitWords(text)
  text = strip(text, ZERO_WIDTH, 'zero-width', hidden)
  text = strip(text, BIDI, 'bidi', hidden)
  if (split.length > 0) hidden.add('inside-words')
  text = text.replace(VARIATION, '')
  text = strip(text, INVISIBLE, 'invisible', hidden)

  const folded = text.normalize('NFKC')
  if (folded !== text && nfkcChangedLetters(text)) hidden.add('homoglyph')
  text = mapHomoglyphs(folded, hidden)

  decodeBlobs(text, decoded, 0)
  return {text, hidden: [...hidden], decoded, ...(split.length > 0 ? {split} : {})}
}

/**
 * The text with invisible characters removed (zero-width, bidi controls, invisible
 * fillers, tag characters) and nothing else changed. The write path stores this form, so
 * a secret split by a zero-width space is still redacted and no hidden text is stored.
 */
export function stripInvisible(text: string): string {
  return text.replace(ZERO_WIDTH, '').replace(BIDI, '').replace(INVISIBLE, '').replace(TAGS, '').replace(VARIATION_IN_WORD, '')
}
