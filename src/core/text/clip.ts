/**
 * Shorten free text for a one-line reason (a vote's, a flag's): whitespace runs become one
 * space, and text longer than `n` characters ends in "…" within `n`. Text that may hold a
 * secret is redacted before it is clipped (`clip(redactText(s))`): a token cut first
 * leaves a fragment no rule recognises (STANDARD.md R9).
 */
export function clip(s: string, n = 60): string {
  const t = s.replace(/\s+/g, ' ').trim()
  return t.length > n ? `${t.slice(0, n - 1)}…` : t
}
