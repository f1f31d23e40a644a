import {normalise} from './normalise.js'
import type {Proposal, StoredFlag} from './proposal.js'
import {flagsFrom, instructionHits} from './vote/flags.js'
import type {WriteCandidate} from './vote/types.js'

const MARKER = /\[REDACTED:([a-z0-9-]+)\]/g

/**
 * The flags an entry's text raises when looked at again now. The stored flags were
 * written by the process that made the write — the agent's — into a file under
 * `.engram/` that the agent can edit, and the digest does not cover them. These are
 * computed from what the digest does cover (the title, tags and body the accept would
 * write, and the origin and taint in its frontmatter), so removing a flag from the file
 * hides nothing from the reviewer. Not recomputed: contradiction and duplicate (they need
 * the memory around the write as it was) and hidden characters (stripped before storage).
 */
export function recheckFlags(p: Proposal, maxBodyBytes: number): StoredFlag[] {
  if (p.operation === 'delete') return []
  const m = p.memory
  // the write counts what it redacted in the title and body (tags are redacted, not counted)
  const redactions: Record<string, number> = {}
  for (const [, kind] of `${m.title}\n${p.body}`.matchAll(MARKER)) redactions[kind] = (redactions[kind] ?? 0) + 1
  const sessionReasons = m.taint_reasons.filter((r) => r.startsWith('session: ')).map((r) => r.slice('session: '.length))
  const c: WriteCandidate = {
    scope: p.scope,
    path: p.path,
    operation: p.base === null ? 'create' : 'update',
    title: m.title,
    tags: m.tags,
    body: p.body,
    normalised: normalise(p.body),
    origin: m.origin,
    author: m.author,
    session: {id: m.source_session ?? '', agent: m.author, tainted: sessionReasons.length > 0, taint_reasons: sessionReasons},
    redactions,
    bodyBytes: Buffer.byteLength(p.body),
    maxBodyBytes,
  }
  return flagsFrom(c, {hits: instructionHits(c), findings: []}).map((f) => ({flag: f.flag, reason: f.reason}))
}

/** Recomputed flags the entry's stored list lacks: a sign the entry was edited after the vote. */
export function unrecordedFlags(p: Proposal, maxBodyBytes: number): StoredFlag[] {
  const stored = new Set(p.flags.map((f) => f.flag))
  return recheckFlags(p, maxBodyBytes).filter((f) => !stored.has(f.flag))
}
