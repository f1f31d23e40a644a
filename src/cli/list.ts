import {Flags} from '@oclif/core'

import type {QueueItem} from '../core/review/review.js'
import {visible} from '../core/text/visible.js'

// the envelope lives in the core: the MCP server's list tool returns the same (src/mcp)
export {listEnvelope, type ListEnvelope} from '../core/serve/envelope.js'

/** `--limit N` of the list commands: the first N in the command's order (newest first for queues and sessions). */
export const limitFlag = Flags.integer({description: 'show at most this many (the JSON `total` counts them all)', min: 1})

/** What a cut list says on stderr: how many it left out, and how to see them. */
export function moreLine(shown: number, total: number): string | undefined {
  const more = total - shown
  if (more <= 0) return undefined
  return `${more} more not shown (${total} in all); raise --limit to see ${more === 1 ? 'it' : 'them'}`
}

/**
 * Rows of a list for a person or a pipe: on a terminal a header line and columns padded
 * to line up (as gh and kubectl print them); piped, no header and tab-separated columns,
 * one row a line, so `cut -f1` and `awk -F'\t'` keep working. Every cell is made
 * terminal-safe here (STANDARD.md R16); a trailing empty cell is dropped.
 */
export function table(header: string[], rows: string[][], tty = Boolean(process.stdout.isTTY)): string[] {
  const safe = rows.map((r) => trimEnd(r.map((cell) => visible(cell))))
  if (!tty) return safe.map((r) => r.join('\t'))
  if (safe.length === 0) return []
  const all = [header, ...safe]
  const widths = header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)))
  return all.map((r) => trimEnd(r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i])))).join('  ').trimEnd())
}

function trimEnd(cells: string[]): string[] {
  const out = [...cells]
  while (out.length > 0 && out[out.length - 1] === '') out.pop()
  return out
}

/** The review queue as rows (`review list`, and `review` without a terminal). */
export function queueRows(items: QueueItem[]): string[][] {
  return items.map((i) => {
    const marks = [i.kind !== 'write' ? i.kind : '', i.tainted ? 'tainted' : '', i.vote?.dissent ? 'dissent' : '', ...i.flags].filter(Boolean)
    return [i.id, i.operation, `${i.scope}/${i.path}`, i.author, i.origin, marks.length ? `[${marks.join(', ')}]` : '']
  })
}
export const QUEUE_HEADER = ['ID', 'OP', 'MEMORY', 'AUTHOR', 'ORIGIN', 'MARKS']
