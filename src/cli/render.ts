import {Chalk} from 'chalk'

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

/** A unified diff of two texts, terminal-safe and coloured. */
export async function renderTextDiff(a: {name: string; text: string; header: string}, b: {name: string; text: string; header: string}): Promise<string> {
  const {createTwoFilesPatch} = await import('diff')
  const c = colours()
  const patch = createTwoFilesPatch(a.name, b.name, a.text, b.text, a.header, b.header, {context: 3})
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
export async function renderEntry(e: ShownEntry): Promise<string> {
  const c = colours()
  const p = e.proposal
  const v = visible
  const lines: string[] = []
  lines.push(c.bold(v(`${p.status === 'pending' ? 'proposal' : 'quarantine'} ${p.id}: ${p.operation} ${p.scope}/${p.path}`)) + (p.kind !== 'write' ? v(` [${p.kind}]`) : ''))
  lines.push(`${v(`author ${p.author}, session ${p.session ?? '-'}, origin ${p.origin}`)}${p.tainted ? c.yellow(`, TAINTED (${v(p.taint_reasons.join('; '))})`) : ''}${v(`, created ${p.created}`)}`)
  if (p.note) lines.push(c.yellow(`note: ${v(p.note)}`))
  if (e.stale) lines.push(c.red(v(`STALE: the file changed since this was proposed (base ${p.base ?? 'none'}, now ${e.currentBase ?? 'none'}); accept will refuse`)))
  if (Object.keys(p.redactions).length > 0) lines.push(v(`redacted: ${Object.entries(p.redactions).map(([k, n]) => `${k}×${n}`).join(', ')}`))
  for (const f of p.flags) lines.push(c.yellow(`flag ${v(f.flag)}: ${v(f.reason)}`))
  for (const f of e.unrecordedFlags) {
    lines.push(c.red(`flag ${v(f.flag)}: ${v(f.reason)} — raised by this text now, but missing from the stored entry (edited after the vote?)`))
  }
  if (e.quarantinedAs) lines.push(c.red(`QUARANTINED: this is quarantine entry ${v(e.quarantinedAs)} moved into the review queue by hand; accept will refuse (use \`engram quarantine release\`)`))
  for (const f of e.recheck ?? []) {
    lines.push(c.red(v(`NOT TRUE: ${f.field} is shown as ${JSON.stringify(f.stored)} but recomputed as ${JSON.stringify(f.recomputed)} from ${f.source}; accept will refuse`)))
  }
  if (p.vote) lines.push(`vote: ${p.vote.passed ? c.green('passed') : c.red('failed')}${p.vote.dissent ? c.yellow(' WITH DISSENT') : ''} — ${v(p.vote.summary)}`)
  for (const vote of p.votes) {
    const mark = vote.verdict === 'accept' ? c.green('accept') : vote.verdict === 'reject' ? c.red('reject') : c.gray('abstain')
    lines.push(`  ${v(vote.validator).padEnd(11)} ${mark} ${vote.confidence.toFixed(2)}  ${v(vote.reason)}`)
  }
  for (const ev of p.evidence) lines.push(v(`evidence: ${[ev.session, ev.source, ev.quote && `"${ev.quote}"`].filter(Boolean).join(' ')}`))
  lines.push('')
  lines.push(await renderDiff(e, `${p.scope}/${p.path}`))
  lines.push(c.bold(`digest ${e.digest}`))
  return lines.join('\n')
}
