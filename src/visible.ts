/**
 * Make untrusted text safe to print to a reviewer's terminal: escape sequences, other
 * control characters and bidi/zero-width marks are shown as visible codes, so a proposal
 * can neither erase nor reorder what the reviewer sees (Trojan Source, ANSI injection).
 * (Its own module so that the fast search path prints without loading chalk.)
 */
export function visible(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/g, (ch) => `<U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}>`)
}
