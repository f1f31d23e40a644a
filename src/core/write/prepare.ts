/**
 * What redaction and normalisation make of a write's text: the part of planning a write
 * (plan.ts) whose cost grows with the text. A write of 8 KiB or more has it done in a worker
 * under the vote's time budget (vote/budget.ts, README "The write path"), like its vote.
 * No I/O: text in, text out.
 */
import {deriveTitle} from '../memory/memory.js'
import {normalise, stripInvisible, type Normalised} from './normalise.js'
import {redact} from './redact/index.js'

export type RedactionRules = Parameters<typeof redact>[1]

export interface PreparedText {
  /** the raw text this was made from (planWrite checks it is the text it plans) */
  raw: string
  /** what the raw text holds, read before invisible characters are dropped */
  rawView: Normalised
  body: string
  bodyRedactions: Record<string, number>
  title: string
  titleRedactions: Record<string, number>
  /** the tags given with the write, redacted */
  givenTags?: string[]
  /** what the flags and the vote read (candidateView); only when asked for */
  view?: Normalised
}

/**
 * Invisible characters are dropped before redaction (a zero-width space must not hide a
 * secret) and before storage; the raw text's own reading keeps what they spelled.
 */
export function prepareText(raw: string, title0: string | undefined, tags: string[] | undefined, extra: RedactionRules, withView: boolean): PreparedText {
  const rawView = normalise(raw)
  const red = redact(stripInvisible(raw), extra)
  const titleRed = redact(title0 ?? deriveTitle(red.text), extra)
  return {
    raw,
    rawView,
    body: red.text,
    bodyRedactions: red.redactions,
    title: titleRed.text,
    titleRedactions: titleRed.redactions,
    ...(tags ? {givenTags: tags.map((t) => redact(t, extra).text)} : {}),
    ...(withView ? {view: candidateView(rawView, red.text, extra)} : {}),
  }
}

/**
 * The text the flags and the vote read: the stored (redacted) body normalised, with what only the
 * raw text held — the invisible characters it carried, the words they split, and what tag
 * characters and variation selectors spelt, redacted like the body (docs/vote-rounds.md "Round thirteen").
 * The corpus tally and the vote's tests build their candidates with it, as the write path does.
 */
export function candidateView(rawView: Normalised, body: string, extra: RedactionRules): Normalised {
  const norm = normalise(body)
  return {
    ...norm,
    hidden: [...new Set([...rawView.hidden, ...norm.hidden])],
    decoded: [...new Set([...norm.decoded, ...rawView.decoded.map((d) => redact(d, extra).text)])],
    ...(rawView.split ? {split: rawView.split} : {}),
  }
}
