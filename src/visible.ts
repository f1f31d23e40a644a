/**
 * Make untrusted text safe to print to a reviewer's terminal: escape sequences, other
 * control characters and bidi/zero-width marks are shown as visible codes, so a proposal
 * can neither erase nor reorder what the reviewer sees (Trojan Source, ANSI injection).
 * Every command prints every stored string through it (STANDARD.md R16). (Its own module
 * so that the fast search path prints without loading chalk.)
 */
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/g
const hex = (ch: string) => ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')

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
  return JSON.stringify(value, null, space).replace(UNSAFE, (ch) => `\\u${hex(ch)}`)
}
