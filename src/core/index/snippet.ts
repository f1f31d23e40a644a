import {termOf} from './tokenize.js'

const SNIPPET_LENGTH = 200
const WORD_RE = /[\p{L}\p{N}]+/gu

/** A one-line excerpt of the body around the first word whose term matched. */
export function makeSnippet(body: string, matched: Set<string>): string {
  let pos = -1
  // Stemming only ever changes a word's ending and keeps at least its first two
  // characters, so a word whose first two are no matched term's cannot match: most words
  // are passed over without stemming them.
  const heads = new Set<string>()
  for (const t of matched) heads.add(t.slice(0, 2))
  for (const m of body.matchAll(WORD_RE)) {
    let w = m[0].toLowerCase()
    if (/[^\u0000-\u007f]/.test(w)) w = w.normalize('NFD').replace(/\p{M}+/gu, '')
    if (!heads.has(w.slice(0, 2))) continue
    const t = termOf(w)
    if (t !== undefined && matched.has(t)) {
      pos = m.index ?? 0
      break
    }
  }
  let start = pos <= 60 ? 0 : pos - 60
  if (start > 0) {
    const space = body.lastIndexOf(' ', start)
    if (space > start - 20 && space >= 0) start = space + 1
  }
  let end = Math.min(body.length, start + SNIPPET_LENGTH)
  if (end < body.length) {
    const space = body.lastIndexOf(' ', end)
    if (space > start + SNIPPET_LENGTH / 2) end = space
  }
  const text = body.slice(start, end).replace(/\s+/g, ' ').trim()
  return `${start > 0 ? '…' : ''}${text}${end < body.length ? '…' : ''}`
}
