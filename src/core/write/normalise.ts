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
   * 'inside-words' when an invisible character sat between two Latin letters, and 'tag-text'
   * when tag characters spelt text (not the tags of an emoji flag, 🏴 + "gbsct")
   */
  hidden: string[]
  /** the words (lower case, joined) that an invisible character split, at most 64 */
  split?: string[]
  /**
   * decoded base64/hex blobs, Unicode tag text, runs of HTML or code escapes, and the readings
   * a text asks for or shows (ROT13, backwards, leetspeak): for inspection only
   */
  decoded: string[]
  /** how many words spell Latin with Cyrillic or Greek look-alikes ("іgnore", "раypal"), when any */
  lookalikes?: number
  /** the ciphers a sentence of the text was written in, when one spells words once read ('ROT13', 'backwards') */
  ciphers?: string[]
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
function mapHomoglyphs(text: string, hidden: Set<string>, count: {lookalikes: number}): string {
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
      if (mapped !== word) {
        hidden.add('homoglyph')
        // a disguise spells a plain word ("Рlеаsе" → "Please"); decorative text mixes accents and
        // scripts ("Τǿ ċo", "ẃξ") and is not counted
        if (/^[A-Za-z]+$/.test(mapped)) count.lookalikes++
      }
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
    // the tag block spells ASCII: show what it said (matchAll starts at lastIndex); an emoji
    // flag's tags (🏴 then "gbsct", ended by U+E007F) spell a region, not a message
    const spelt = text.replace(FLAG_TAGS, '')
    TAGS.lastIndex = 0
    const smuggled = [...spelt.matchAll(TAGS)].map((m) => String.fromCharCode(m[0].codePointAt(0)! - 0xe0000)).join('').replace(/[^\x20-\x7e]/g, '')
    if (/[\x21-\x7e]/.test(smuggled)) {
      decoded.push(smuggled)
      if (/[A-Za-z]{2}/.test(smuggled)) hidden.add('tag-text')
    }
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
  const count = {lookalikes: 0}
  text = mapHomoglyphs(folded, hidden, count)

  decodeBlobs(text, decoded, 0)
  const ciphers = readings(text, decoded)
  return {
    text,
    hidden: [...hidden],
    decoded,
    ...(split.length > 0 ? {split} : {}),
    ...(count.lookalikes > 0 ? {lookalikes: count.lookalikes} : {}),
    ...(ciphers.length > 0 ? {ciphers} : {}),
  }
}

// Short words every sentence of a language has, in the languages the corpus writes most: a
// sentence that has none as written and three once read was written in a cipher.
const COMMON_WORDS = new Set(
  (
    'the to and of a an is are be for with any all that this on in from by as it or not you your will can may must ' +
    'der die das und ist mit für nicht zu von den ein eine sie es ' +
    'le la les et est pour avec des un une que qui pas vous ' +
    'el los las y es para con del que una por ' +
    'o os as e é com um uma não ' +
    'i w z na do nie jest się że ' +
    've bir bu için ile'
  ).split(' '),
)

function commonWords(sentence: string): number {
  let n = 0
  for (const w of sentence.toLowerCase().match(/\p{L}+/gu) ?? []) if (COMMON_WORDS.has(w)) n++
  return n
}

/** True when some sentence of `text` reads as words only through `decode`. */
function spellsOnceRead(text: string, decode: (s: string) => string): boolean {
  for (const sentence of text.split(/(?<=[.!?:;])\s+|\n+/)) {
    if (sentence.length < 20) continue
    if (commonWords(sentence) <= 1 && commonWords(decode(sentence)) >= 3) return true
  }
  return false
}

// An emoji flag of a region: 🏴 (U+1F3F4), tag letters or digits, the cancel tag (U+E007F).
const FLAG_TAGS = /\u{1F3F4}[\u{E0030}-\u{E0039}\u{E0061}-\u{E007A}]{2,8}\u{E007F}/gu

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
  /\b(?:read|reads|write|written|wrote|spelt|spelled|typed|say|said)\b[^.\n]{0,40}?\b(?:backwards?|in\s+reverse|right[\s-]+to[\s-]+left|from\s+(?:the\s+)?(?:end|last\s+letter))\b|\b(?:backwards|reversed|mirrored)\s+(?:text|line|note|string|sentence|message)\b|\bright[\s-]+to[\s-]+left\b|od\s+ty[łl]u|tersten|à\s+l['’]envers|al\s+rev[ée]s|de\s+tr[áa]s\s+para\s+a\s+frente|r[üu]ckw[äa]rts|\bwspak\b|наоборот|задом\s+наперёд|倒着|逆から|거꾸로/i
// a word of leetspeak: lower-case letters with digits standing in for letters ("r3m3mb3r", "4ss1st4nt")
const LEET_WORD = /(?<![\p{L}\p{N}_])(?=[a-z0-9@$]*[a-z])(?=[a-z0-9@$]*[0134578@$])[a-z0-9@$]{2,}(?![\p{L}\p{N}_])/gu
const LEET: Record<string, string> = {'0': 'o', '1': 'i', '3': 'e', '4': 'a', '5': 's', '7': 't', '8': 'b', '@': 'a', $: 's'}

function rot13(text: string): string {
  return text.replace(/[A-Za-z]/g, (ch) => {
    const base = ch <= 'Z' ? 65 : 97
    return String.fromCharCode(((ch.charCodeAt(0) - base + 13) % 26) + base)
  })
}

/**
 * The readings of a text that hide its words from a human reader but not from a model: runs of
 * escapes decoded, the whole text in ROT13 or backwards when it names that reading, and the
 * sentences written in leetspeak spelt out. Each is inspected like a decoded blob (README
 * "Round thirteen"): an order found only there was disguised on purpose.
 */
function readings(text: string, out: string[]): string[] {
  const ciphers: string[] = []
  if (out.length >= MAX_BLOBS) return ciphers
  if (text.includes('&#') || text.includes('\\')) {
    for (const m of text.matchAll(ESCAPE_RUN)) {
      if (out.length >= MAX_BLOBS) return ciphers
      const s = unescapeRun(m[0].slice(0, MAX_BLOB_CHARS))
      if (s !== null) out.push(s)
    }
  }
  if (text.length > MAX_BLOB_CHARS) return ciphers
  const backwards = (s: string) => [...s].reverse().join('')
  if (ROT13_CUE.test(text)) {
    out.push(rot13(text))
    if (spellsOnceRead(text, rot13)) ciphers.push('ROT13')
  }
  if (BACKWARDS_CUE.test(text)) {
    // the whole text backwards, and each line backwards (a note whose one line reads right to left)
    out.push(backwards(text))
    out.push(text.split('\n').map(backwards).join('\n'))
    if (spellsOnceRead(text, backwards)) ciphers.push('backwards')
  }
  if (/[0-9@$]/.test(text)) {
    // only the sentences with three words of leetspeak or more: the rest of the text is as written
    const spelt: string[] = []
    for (const sentence of text.split(/(?<=[.!?;:])\s+|\n+/)) {
      const words = sentence.match(LEET_WORD)
      if (!words || words.length < 3) continue
      // a word of leetspeak spells letters only once read: a digit between letters, or at its edge beside one
      // (not an ordinal, a version, a model number, a hex digest or a UUID's piece)
      const real = words.filter((w) => /[a-z][0-9@$]|[0-9@$][a-z]/.test(w) && w.length <= 20 && !/^\d+[a-z]{1,2}$/.test(w) && !/^[a-z]{1,2}\d+$/.test(w) && !/^[0-9a-f]{8,}$/.test(w))
      if (real.length < 3) continue
      spelt.push(sentence.replace(LEET_WORD, (w) => (/[a-z][0-9@$]|[0-9@$][a-z]/.test(w) ? w.replace(/[0-9@$]/g, (d) => LEET[d] ?? d) : w)))
    }
    if (spelt.length > 0) out.push(spelt.join('\n'))
  }
  return ciphers
}

/**
 * The text with invisible characters removed (zero-width, bidi controls, invisible
 * fillers, tag characters) and nothing else changed. The write path stores this form, so
 * a secret split by a zero-width space is still redacted and no hidden text is stored.
 */
export function stripInvisible(text: string): string {
  return text.replace(ZERO_WIDTH, '').replace(BIDI, '').replace(INVISIBLE, '').replace(TAGS, '').replace(VARIATION_IN_WORD, '')
}
