import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {DEFAULT_CONFIG} from '../../src/core/store/config.js'
import {DEFAULT_WEIGHTS} from '../../src/core/write/vote/learned.js'
import {normalise, stripInvisible} from '../../src/core/write/normalise.js'
import {candidateView} from '../../src/core/write/plan.js'
import type {Neighbour, VoteContext, WriteCandidate} from '../../src/core/write/vote/index.js'

/** A write candidate as the write path builds it: direct chat, untainted session, no redactions. */
export function makeCandidate(body: string, over: Partial<WriteCandidate> = {}): WriteCandidate {
  return {
    scope: 'project:atlas',
    path: 'notes/n.md',
    operation: 'create',
    title: '',
    tags: [],
    body,
    normalised: {text: body, hidden: [], decoded: []},
    origin: 'direct_chat',
    author: 'agent-a',
    session: {id: 's-test0001', agent: 'agent-a', tainted: false, taint_reasons: []},
    redactions: {},
    bodyBytes: Buffer.byteLength(body),
    maxBodyBytes: 256 * 1024,
    ...over,
  }
}

/** A vote context with the default config, fixed neighbours and no recent writes. */
export function makeContext(over: Partial<VoteContext> & {near?: Neighbour[]; weights?: string} = {}): VoteContext {
  const {near = [], weights, ...rest} = over
  const config = structuredClone(DEFAULT_CONFIG.vote)
  // the learned validator reads this weights file (weightsWith) instead of the shipped one
  if (weights !== undefined) config.learned = {weights}
  return {neighbours: () => near, recentWrites: {session: 0, author: 0}, config, ...rest}
}

/** The candidate the write path builds from raw text: invisible characters dropped, the raw text's readings kept. */
export function fromRaw(raw: string, origin: WriteCandidate['origin']): WriteCandidate {
  const body = stripInvisible(raw)
  return makeCandidate(body, {origin, normalised: candidateView(normalise(raw), body, [])})
}

/**
 * The shipped weights file with its thresholds edited (`edit` may delete one, as a file of an
 * earlier round lacks it, or set one out of range), written to a file of its own: its path.
 */
export function weightsWith(edit: (thresholds: Record<string, unknown>) => void): string {
  const file = JSON.parse(readFileSync(DEFAULT_WEIGHTS, 'utf8')) as {thresholds: Record<string, unknown>}
  edit(file.thresholds)
  const path = join(mkdtempSync(join(tmpdir(), 'engram-weights-')), 'weights.json')
  writeFileSync(path, JSON.stringify(file))
  return path
}

/**
 * The shipped weights with round twenty-six's bars (docs/vote-rounds.md "Round twenty-seven"): an objection from chat at 0.8, a
 * veto of a long chat message and of long third-party text at 0.85; `edit` changes more.
 */
export function roundTwentySixBars(edit: (thresholds: Record<string, unknown>) => void = () => {}): string {
  return weightsWith((t) => {
    t.direct = 0.8
    t.direct_long = 0.85
    t.indirect_long = 0.85
    edit(t)
  })
}
