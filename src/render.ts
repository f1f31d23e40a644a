import {Chalk} from 'chalk'

import type {ShownEntry} from './core/review.js'
import {visible} from './visible.js'

export {visible} from './visible.js'

/** Colour only for a terminal, and never under NO_COLOR. */
export function colours() {
  const on = Boolean(process.stdout.isTTY) && !process.env.NO_COLOR
  return new Chalk({level: on ? 1 : 0})
}

/** A unified diff of the base file against the proposed file (the `diff` package), coloured. */
export async function renderDiff(e: ShownEntry, label: string): Promise<string> {
  const {createTwoFilesPatch} = await import('diff')
  const c = colours()
  const patch = createTwoFilesPatch(
    e.baseText === null ? '/dev/null' : `a/${label}`,
    e.proposal.operation === 'delete' ? '/dev/null' : `b/${label}`,
    e.baseText ?? '',
    e.proposedText,
    e.currentBase ?? 'new file',
    `proposal ${e.proposal.id}`,
    {context: 3},
  )
  return patch
    .split('\n')
    .slice(1) // the "Index:" line
    .map(visible)
    .map((l) => (l.startsWith('+') && !l.startsWith('+++') ? c.green(l) : l.startsWith('-') && !l.startsWith('---') ? c.red(l) : l.startsWith('@@') ? c.cyan(l) : l))
    .join('\n')
}

/** The reviewer's view of one entry: header, flags, votes, diff, digest. */
export async function renderEntry(e: ShownEntry): Promise<string> {
  const c = colours()
  const p = e.proposal
  const lines: string[] = []
  lines.push(c.bold(`${p.status === 'pending' ? 'proposal' : 'quarantine'} ${p.id}: ${p.operation} ${p.scope}/${p.path}`) + (p.kind !== 'write' ? ` [${p.kind}]` : ''))
  lines.push(`author ${p.author}, session ${p.session ?? '-'}, origin ${p.origin}${p.tainted ? c.yellow(`, TAINTED (${visible(p.taint_reasons.join('; '))})`) : ''}, created ${p.created}`)
  if (p.note) lines.push(c.yellow(`note: ${visible(p.note)}`))
  if (e.stale) lines.push(c.red(`STALE: the file changed since this was proposed (base ${p.base ?? 'none'}, now ${e.currentBase ?? 'none'}); accept will refuse`))
  if (Object.keys(p.redactions).length > 0) lines.push(`redacted: ${Object.entries(p.redactions).map(([k, n]) => `${k}×${n}`).join(', ')}`)
  for (const f of p.flags) lines.push(c.yellow(`flag ${visible(f.flag)}: ${visible(f.reason)}`))
  for (const f of e.unrecordedFlags) {
    lines.push(c.red(`flag ${visible(f.flag)}: ${visible(f.reason)} — raised by this text now, but missing from the stored entry (edited after the vote?)`))
  }
  if (e.quarantinedAs) lines.push(c.red(`QUARANTINED: this is quarantine entry ${visible(e.quarantinedAs)} moved into the review queue by hand; accept will refuse (use \`engram quarantine release\`)`))
  for (const f of e.recheck ?? []) {
    lines.push(c.red(visible(`NOT TRUE: ${f.field} is shown as ${JSON.stringify(f.stored)} but recomputed as ${JSON.stringify(f.recomputed)} from ${f.source}; accept will refuse`)))
  }
  if (p.vote) lines.push(`vote: ${p.vote.passed ? c.green('passed') : c.red('failed')}${p.vote.dissent ? c.yellow(' WITH DISSENT') : ''} — ${p.vote.summary}`)
  for (const v of p.votes) {
    const mark = v.verdict === 'accept' ? c.green('accept') : v.verdict === 'reject' ? c.red('reject') : c.gray('abstain')
    lines.push(`  ${v.validator.padEnd(11)} ${mark} ${v.confidence.toFixed(2)}  ${visible(v.reason)}`)
  }
  for (const ev of p.evidence) lines.push(visible(`evidence: ${[ev.session, ev.source, ev.quote && `"${ev.quote}"`].filter(Boolean).join(' ')}`))
  lines.push('')
  lines.push(await renderDiff(e, `${p.scope}/${p.path}`))
  lines.push(c.bold(`digest ${e.digest}`))
  return lines.join('\n')
}
