/**
 * Personal data a reviewer should notice before it becomes memory every session reads.
 * Reasons name kinds and counts only, never the values.
 */

const EMAIL = /\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b/
const LOCAL_CHAR = /[A-Za-z0-9._%+-]/
const DOMAIN_CHAR = /[A-Za-z0-9.-]/

/**
 * The addresses in a text, counted around each "@" within the lengths an address may have (64
 * before it, 253 after): the pattern tried from every letter of a long run of "a." without an
 * "@" to end it was quadratic (90 s on 256 KB; found by an attacker's review).
 */
function countEmails(text: string): number {
  let n = 0
  let end = 0
  for (let at = text.indexOf('@'); at >= 0; at = text.indexOf('@', at + 1)) {
    if (at < end) continue
    let a = at
    while (a > end && at - a < 64 && LOCAL_CHAR.test(text[a - 1])) a--
    if (a === at) continue
    let b = at + 1
    while (b < text.length && b - at <= 253 && DOMAIN_CHAR.test(text[b])) b++
    // the character after the window decides the closing word boundary, as in the whole text
    const m = EMAIL.exec(text.slice(a, Math.min(text.length, b + 1)))
    if (m === null || a + m.index + m[0].length <= at) continue
    n++
    end = a + m.index + m[0].length
  }
  return n
}
// International or grouped national numbers; dates and versions are ruled out below.
const PHONE = /(?<![\w.])(?:\+\d{1,3}[\s.-]?)?(?:\(\d{1,4}\)[\s.-]?)?\d{2,4}(?:[\s.-]\d{2,4}){1,4}(?!\w|[.-]\d)/g
const IBAN = /\b[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]){11,30}\b/g
const CARD = /(?<!\d|\d[.,])(?:\d[ -]?){12,18}\d(?!\d|[.,]\d)/g

export function luhnValid(digits: string): boolean {
  let sum = 0
  let double = false
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48
    if (d < 0 || d > 9) return false
    if (double) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
    double = !double
  }
  return sum % 10 === 0
}

/** ISO 13616: move the first four characters to the end, letters to numbers, mod 97 must be 1. */
export function ibanValid(raw: string): boolean {
  const s = raw.replace(/\s+/g, '').toUpperCase()
  if (s.length < 15 || s.length > 34 || !/^[A-Z]{2}\d{2}[A-Z0-9]+$/.test(s)) return false
  const moved = s.slice(4) + s.slice(0, 4)
  let rem = 0
  for (const ch of moved) {
    const code = ch.charCodeAt(0)
    const chunk = code >= 65 ? String(code - 55) : ch
    for (const digit of chunk) rem = (rem * 10 + (digit.charCodeAt(0) - 48)) % 97
  }
  return rem === 1
}

const digitsOf = (s: string) => s.replace(/\D/g, '')
const looksLikeDate = (s: string) => /^\d{4}[-./]\d{1,2}[-./]\d{1,2}$|^\d{1,2}[-./]\d{1,2}[-./]\d{2,4}$/.test(s.trim())

export interface SensitiveCounts {
  email: number
  phone: number
  iban: number
  card: number
}

/** The text with each span blanked by spaces of its length. */
function blankOut(text: string, spans: [start: number, end: number][]): string {
  let out = ''
  let at = 0
  for (const [start, end] of spans.sort((x, y) => x[0] - y[0])) {
    if (end <= at) continue
    const from = Math.max(start, at)
    out += text.slice(at, from) + ' '.repeat(end - from)
    at = end
  }
  return at === 0 ? text : out + text.slice(at)
}

export function findSensitive(text: string): SensitiveCounts {
  const counts: SensitiveCounts = {email: 0, phone: 0, iban: 0, card: 0}
  counts.email = countEmails(text)
  // Each number is counted once: cards and IBANs are blanked before looking for phone numbers,
  // where they stand, in a copy of the text made once (one made for each, searched from the start,
  // took time that grew with the square of their number)
  const blanks: [start: number, end: number][] = []
  const blank = (m: RegExpMatchArray) => blanks.push([m.index!, m.index! + m[0].length])
  for (const m of text.matchAll(CARD)) {
    const d = digitsOf(m[0])
    if (d.length >= 13 && d.length <= 19 && !/^(\d)\1+$/.test(d) && luhnValid(d)) {
      counts.card++
      blank(m)
    }
  }
  for (const m of text.matchAll(IBAN)) {
    // The match may have swallowed a following word in capitals ("… 3000 EUR"): drop groups from the end.
    const groups = m[0].split(' ')
    for (let n = groups.length; n > 0; n--) {
      if (ibanValid(groups.slice(0, n).join(''))) {
        counts.iban++
        blank(m)
        break
      }
    }
  }
  for (const m of blankOut(text, blanks).matchAll(PHONE)) {
    const d = digitsOf(m[0])
    const groups = m[0].split(/[\s.()-]+/).filter(Boolean).length
    if (looksLikeDate(m[0])) continue
    if (m[0].startsWith('+')) {
      if (d.length >= 8 && d.length <= 15) counts.phone++
      continue
    }
    // Without a country code: 7 to 11 digits in two or three groups (555-123-4567, 020 7946 0958).
    // A bare run or a long chain of groups is more likely an id or an account number.
    if (d.length >= 7 && d.length <= 11 && groups >= 2 && groups <= 3) counts.phone++
  }
  return counts
}

export function describeSensitive(c: SensitiveCounts): string | null {
  const parts: string[] = []
  const say = (n: number, one: string, many: string) => {
    if (n > 0) parts.push(`${n} ${n === 1 ? one : many}`)
  }
  say(c.email, 'email address', 'email addresses')
  say(c.phone, 'phone number', 'phone numbers')
  say(c.iban, 'IBAN', 'IBANs')
  say(c.card, 'card number (Luhn)', 'card numbers (Luhn)')
  return parts.length > 0 ? parts.join(', ') : null
}
