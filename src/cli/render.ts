import {Chalk} from 'chalk'

import {FIELD_ORDER, parseFrontmatter} from '../core/memory/memory.js'
import type {ShownEntry} from '../core/review/review.js'
import {visible} from '../core/text/visible.js'

export {visible} from '../core/text/visible.js'

/** Colour only for a terminal, and never under NO_COLOR. */
export function colours() {
  const on = Boolean(process.stdout.isTTY) && !process.env.NO_COLOR
  return new Chalk({level: on ? 1 : 0})
}

/** A unified diff of the base file against the proposed file (the `diff` package), coloured. */
async function renderDiff(e: ShownEntry, label: string): Promise<string> {
  return renderTextDiff(
    {name: e.baseText === null ? '/dev/null' : `a/${label}`, text: e.baseText ?? '', header: e.currentBase ?? 'new file'},
    {name: e.proposal.operation === 'delete' ? '/dev/null' : `b/${label}`, text: e.proposedText, header: `proposal ${e.proposal.id}`},
  )
}

/**
 * Frontmatter fields that every accept rewrites (the reviewer's name, digest and signature
 * of the last accept, the version counter, the update time and proposal id): their change
 * says nothing about the memory, and it used to fill most of a short diff. Every other
 * field, including any the schema does not know, is shown when it changes.
 */
const BOOKKEEPING = new Set(['reviewed_by', 'digest', 'signature', 'version', 'updated', 'proposal'])

/**
 * What the reviewer decides on (README "Review"): the frontmatter fields that change (all
 * of them for a new file), then the diff of the body alone. `full` (or a file that does not
 * parse) gives the unified diff of the whole files, as they are written.
 */
export async function renderReviewDiff(e: ShownEntry, label: string, full = false): Promise<string> {
  if (full) return renderDiff(e, label)
  let base: {data: Record<string, unknown>; body: string} | null
  let next: {data: Record<string, unknown>; body: string} | null
  try {
    base = e.baseText === null ? null : parseFrontmatter(e.baseText, label)
    next = e.proposal.operation === 'delete' ? null : parseFrontmatter(e.proposedText, label)
  } catch {
    return renderDiff(e, label) // a file that does not parse is shown as it is
  }
  const c = colours()
  const lines: string[] = []
  const keys = [...new Set([...FIELD_ORDER, ...Object.keys(base?.data ?? {}), ...Object.keys(next?.data ?? {})])]
  const shown = (v: unknown) => (v === undefined ? '(none)' : JSON.stringify(v))
  for (const k of keys) {
    if (BOOKKEEPING.has(k)) continue
    const was = base?.data[k]
    const now = next?.data[k]
    if (JSON.stringify(was) === JSON.stringify(now)) continue
    if (!base) lines.push(visible(`  ${k}: ${shown(now)}`))
    else if (!next) continue
    else lines.push(`  ${visible(`${k}:`)} ${c.red(visible(shown(was)))} → ${c.green(visible(shown(now)))}`)
  }
  const head = !base ? 'fields (new file):' : !next ? 'deletes the file' : lines.length ? 'fields changed:' : 'fields: unchanged'
  const same = base !== null && next !== null && base.body === next.body
  const body = same ? '' : await renderTextDiff(
    {name: base ? `a/${label}` : '/dev/null', text: base?.body ?? '', header: e.currentBase ?? 'new file'},
    {name: next ? `b/${label}` : '/dev/null', text: next?.body ?? '', header: `proposal ${e.proposal.id}`},
  )
  return [c.bold(head), ...lines, c.bold(same ? 'body: unchanged' : 'body:'), ...(same ? [] : [body]), c.gray('(reviewer, digest, signature, version, update time and proposal id left out: --full shows the whole files)')].join('\n')
}

/**
 * How long a diff may take. Its cost grows with the product of the two texts' changed lines: an
 * agent's update that changes every line of a long curated note took 19 s to show at 12,000
 * lines (and would take many minutes at the largest write), so past this the reviewer gets the
 * whole proposed text instead of a line-by-line comparison.
 */
export const DIFF_TIMEOUT_MS = 3000

/** A unified diff of two texts, terminal-safe and coloured. */
export async function renderTextDiff(a: {name: string; text: string; header: string}, b: {name: string; text: string; header: string}, timeoutMs = DIFF_TIMEOUT_MS): Promise<string> {
  const {createTwoFilesPatch} = await import('diff')
  const c = colours()
  const patch = createTwoFilesPatch(a.name, b.name, a.text, b.text, a.header, b.header, {context: 3, timeout: timeoutMs}) ?? [
    '',
    `--- ${a.name}\t${a.header}`,
    `+++ ${b.name}\t${b.header}`,
    `(no line-by-line diff: comparing these texts took longer than ${timeoutMs} ms; every line of the first is replaced by the whole text below)`,
    ...b.text.split('\n').map((l) => `+${l}`),
  ].join('\n')
  return patch
    .split('\n')
    .slice(1) // the "Index:" line
    .map(visible)
    .map((l) => (l.startsWith('+') && !l.startsWith('+++') ? c.green(l) : l.startsWith('-') && !l.startsWith('---') ? c.red(l) : l.startsWith('@@') ? c.cyan(l) : l))
    .join('\n')
}

/**
 * The reviewer's view of one entry: header, flags, votes, diff, digest. Every stored
 * string is passed through `visible` before colour is added (STANDARD.md R16); the result
 * is printed as is (EngramCommand.logRendered).
 */
export async function renderEntry(e: ShownEntry, opts: {full?: boolean} = {}): Promise<string> {
  const c = colours()
  const p = e.proposal
  const v = visible
  const lines: string[] = []
  lines.push(c.bold(v(`${p.status === 'pending' ? 'proposal' : 'quarantine'} ${p.id}: ${p.operation} ${p.scope}/${p.path}`)) + (p.kind !== 'write' ? v(` [${p.kind}]`) : ''))
  lines.push(`${v(`author ${p.author}, session ${p.session ?? '-'}, origin ${p.origin}`)}${p.tainted ? c.yellow(`, TAINTED (${v(p.taint_reasons.join('; '))})`) : ''}${v(`, created ${p.created}`)}`)
  if (e.signer?.ok) lines.push(c.green(v(`signed by ${e.signer.role} key ${e.signer.name} (${e.signer.keyid})`)))
  else if (e.signer) lines.push(c.red(v(`UNSIGNED: ${e.signer.why}; its origin ${p.origin} is not trusted and accept will refuse`)))
  if (p.note) lines.push(c.yellow(`note: ${v(p.note)}`))
  if (e.stale) lines.push(c.red(v(`STALE: the file changed since this was proposed (base ${p.base ?? 'none'}, now ${e.currentBase ?? 'none'}); accept will refuse`)))
  if (Object.keys(p.redactions).length > 0) lines.push(v(`redacted: ${Object.entries(p.redactions).map(([k, n]) => `${k}×${n}`).join(', ')}`))
  for (const f of p.flags) lines.push(c.yellow(`flag ${v(f.flag)}: ${v(f.reason)}`))
  for (const f of e.unrecordedFlags ?? []) {
    lines.push(c.red(`flag ${v(f.flag)}: ${v(f.reason)} — raised by this text now, but missing from the stored entry (edited after the vote?)`))
  }
  if (e.flagsUnchecked) lines.push(c.red(`FLAGS NOT RECOMPUTED: ${v(e.flagsUnchecked)}`))
  if (e.quarantinedAs) lines.push(c.red(`QUARANTINED: this is quarantine entry ${v(e.quarantinedAs)} moved into the review queue by hand; accept will refuse (use \`engram quarantine release\`)`))
  for (const f of e.recheck ?? []) {
    lines.push(c.red(v(`NOT TRUE: ${f.field} is shown as ${JSON.stringify(f.stored)} but recomputed as ${JSON.stringify(f.recomputed)} from ${f.source}; accept will refuse`)))
  }
  if (p.vote) lines.push(`vote: ${p.vote.passed ? c.green('passed') : c.red('failed')}${p.vote.dissent ? c.yellow(' WITH DISSENT') : ''} — ${v(p.vote.summary)}`)
  for (const vote of p.votes) {
    const mark = vote.verdict === 'accept' ? c.green('accept') : vote.verdict === 'reject' ? c.red('reject') : c.gray('abstain')
    lines.push(`  ${v(vote.validator).padEnd(11)} ${mark} ${vote.confidence.toFixed(2)}  ${v(vote.reason)}`)
  }
  for (const ev of p.evidence) {
    const line = v(`evidence: ${[ev.session, ev.timestamp, ev.source, ev.quote && `"${ev.quote}"`].filter(Boolean).join(' ')}`)
    lines.push(ev.tainted ? `${line}${c.yellow(' (tainted: outside text)')}` : line)
  }
  lines.push('')
  lines.push(await renderReviewDiff(e, `${p.scope}/${p.path}`, opts.full))
  for (const r of e.removed ?? []) {
    lines.push(c.bold(v(`also deletes ${p.scope}/${r.path}${r.stale ? ' (STALE: changed or gone since proposed; accept will refuse)' : ''}:`)))
    lines.push(await renderTextDiff({name: `a/${p.scope}/${r.path}`, text: r.text ?? '', header: r.blob ?? 'gone'}, {name: '/dev/null', text: '', header: `proposal ${p.id}`}))
  }
  lines.push(c.bold(`digest ${e.digest}`))
  return lines.join('\n')
}
