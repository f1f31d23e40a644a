/**
 * Make untrusted text safe to print to a reviewer's terminal: escape sequences, other
 * control characters and bidi/zero-width marks are shown as visible codes, so a proposal
 * can neither erase nor reorder what the reviewer sees (Trojan Source, ANSI injection).
 * Every command prints every stored string through it (STANDARD.md R16). (Its own module
 * so that the fast search path prints without loading chalk.)
 */
// C0/C1 controls, every format character (\p{Cf}: zero-width marks, bidi controls incl.
// U+061C, soft hyphen, U+180E, the tag characters U+E0001/E0020–E007F that "smuggle" ASCII
// a terminal shows as nothing), the unassigned rest of the tag block, and the invisible
// fillers and selectors that are not Cf: combining grapheme joiner U+034F, Hangul fillers
// U+115F/1160/3164/FFA0, Mongolian and other variation selectors (U+180B–180F,
// U+FE00–FE0F, U+E0100–E01EF). Ordinary text (accents, CJK, emoji without selectors)
// is untouched.
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\p{Cf}\u034f\u115f\u1160\u180b-\u180f\u3164\ufe00-\ufe0f\uffa0\u{E0000}-\u{E007F}\u{E0100}-\u{E01EF}]/gu
const hex = (ch: string) => ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')
/** A JSON `\u` escape of one character; a code point above U+FFFF as its surrogate pair. */
const jsonEscape = (ch: string) => {
  let out = ''
  for (let i = 0; i < ch.length; i++) out += `\\u${ch.charCodeAt(i).toString(16).toUpperCase().padStart(4, '0')}`
  return out
}

export function visible(text: string): string {
  return text.replace(UNSAFE, (ch) => `<U+${hex(ch)}>`)
}

/**
 * JSON text safe for a terminal: the characters `visible` would mark are written as
 * `\uXXXX` escapes, so the parsed data is byte for byte the stored data, but no raw
 * escape, C1 control or bidi mark reaches the screen. (Only string contents can hold
 * them: JSON.stringify already escapes C0 controls.)
 */
export function safeJson(value: unknown, space = 2): string {
  return JSON.stringify(value, null, space).replace(UNSAFE, jsonEscape)
}
