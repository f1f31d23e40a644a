/**
 * A corpus case voted in-process: what `engram eval` does with each write (invisible characters
 * out, secrets redacted, the text read as the write path reads it — prepare.ts candidateView —,
 * the vote with the set's curated memories as neighbours, burst limits raised as the eval raises
 * them) without the git commit and the store around it, so that whole sets can be voted in
 * seconds. Used by test/unit/vote-corpora.test.ts and the direct_chat claim measure (claims.ts).
 */
import {deriveTitle} from '../core/memory/memory.js'
import {DEFAULT_CONFIG} from '../core/store/config.js'
import {candidateView} from '../core/write/prepare.js'
import {normalise, stripInvisible} from '../core/write/normalise.js'
import {redact} from '../core/write/redact/index.js'
import {runVote} from '../core/write/vote/index.js'
import type {Neighbour} from '../core/write/vote/types.js'
import {loadCorpus} from './eval.js'

type Corpus = ReturnType<typeof loadCorpus>
export type CorpusCase = Corpus['sets'][number]['cases'][number]

const config = structuredClone(DEFAULT_CONFIG)
// each write is measured on its own (a corpus is a burst by design)
config.vote.burst.per_session = 1e6
config.vote.burst.per_author = 1e6

/** A set's curated memories as the vote's neighbours. */
export function corpusNeighbours(corpus: Corpus): Neighbour[] {
  return corpus.curated.map((c) => ({scope: 'tenant:eval', path: c.path, title: c.title ?? deriveTitle(c.text), body: c.text, score: 1}))
}

type InProcessOptions = {origin?: string; unattested?: (title: string, body: string, decoded: readonly string[]) => string[]; weights?: string}

/**
 * Whether the case is quarantined (any part of it): written by `origin` (default: its own), with
 * the values `unattested` names of each part's title, body and decoded blobs (the claim check;
 * none by default), and with the learned validator reading `weights` (default: the shipped file).
 */
export async function quarantinedInProcess(c: CorpusCase, curated: Neighbour[], opts: InProcessOptions = {}): Promise<boolean> {
  return (await rejectedInProcess(c, curated, opts, true)) !== undefined
}

/**
 * The validators that voted to reject the parts of the case the vote quarantined, sorted, as
 * `engram eval` names them (`rejected_by`); undefined when no part is quarantined. `first`: stop
 * at the first part quarantined (whether, not who).
 */
export async function rejectedInProcess(c: CorpusCase, curated: Neighbour[], opts: InProcessOptions = {}, first = false): Promise<string[] | undefined> {
  let rejected: Set<string> | undefined
  const vote = opts.weights === undefined ? config.vote : {...config.vote, learned: {weights: opts.weights}}
  for (const part of c.parts) {
    const red = redact(stripInvisible(part), [])
    const title = redact(c.title ?? deriveTitle(red.text), []).text
    const base = c.path === undefined ? undefined : curated.find((k) => k.path === c.path)
    const normalised = candidateView(normalise(part), red.text, [])
    const unattested = opts.unattested?.(title, red.text, normalised.decoded) ?? []
    const v = await runVote(
      {
        scope: 'tenant:eval',
        path: c.path ?? 'eval/case.md',
        operation: base ? 'update' : 'create',
        title,
        tags: [],
        body: red.text,
        normalised,
        origin: opts.origin ?? c.origin,
        author: 'agent',
        session: {id: 's', agent: 'agent', tainted: false, taint_reasons: []},
        redactions: red.redactions,
        bodyBytes: Buffer.byteLength(red.text),
        maxBodyBytes: config.max_body_bytes,
        baseBody: base?.body,
        ...(unattested.length > 0 ? {unattested} : {}),
      },
      {neighbours: () => curated, recentWrites: {session: 0, author: 0}, config: vote},
    )
    if (!v.passed) {
      rejected ??= new Set()
      for (const x of v.votes) if (x.verdict === 'reject') rejected.add(x.validator)
      if (first) break
    }
  }
  return rejected && [...rejected].sort()
}

/** One set voted in process: the ids of attacks caught and missed, of honest writes refused, how many honest writes, and the same counts from direct chat. */
export interface CorpusTally {
  caught: string[]
  missed: string[]
  wronged: string[]
  honest: number
  chat: {attacks: number; caught: number; honest: number; refused: number}
  /** each quarantined case's label and the validators that rejected it (eval's `rejected_by`): counts only, never an id */
  rejectedBy: {label: 'attack' | 'benign'; validators: string[]}[]
}

/**
 * Every case of a corpus set (a folder of `*.jsonl` and its curated memories) voted in process, as
 * `engram eval` counts it: a case that expects any status is left out. Used by
 * `scripts/measure-vote.mjs` and test/unit/vote-corpora.test.ts.
 */
export async function tallyInProcess(dir: string, opts: {weights?: string} = {}): Promise<CorpusTally> {
  const corpus = loadCorpus(dir)
  const curated = corpusNeighbours(corpus)
  const t: CorpusTally = {caught: [], missed: [], wronged: [], honest: 0, chat: {attacks: 0, caught: 0, honest: 0, refused: 0}, rejectedBy: []}
  for (const s of corpus.sets) {
    for (const c of s.cases) {
      if (c.expect?.status === 'any') continue
      const by = await rejectedInProcess(c, curated, opts)
      const q = by !== undefined
      if (by) t.rejectedBy.push({label: c.label, validators: by})
      const chat = c.origin === 'direct_chat'
      if (c.label === 'attack') {
        if (q) t.caught.push(c.id)
        else t.missed.push(c.id)
        if (chat) {
          t.chat.attacks++
          if (q) t.chat.caught++
        }
      } else {
        t.honest++
        if (q) t.wronged.push(c.id)
        if (chat) {
          t.chat.honest++
          if (q) t.chat.refused++
        }
      }
    }
  }
  return t
}
