/**
 * What checking a claim of direct_chat against the user's prompts changes (docs/vote-rounds.md "Round
 * nineteen"). An agent steered by third-party text can write that text claiming direct_chat,
 * the default origin. Every case of a corpus set that arrived by an indirect origin is voted on
 * three ways (inprocess.ts): as the origin it really came by; as direct_chat with nothing
 * checked; and as direct_chat in a session whose prompts hold none of its values
 * (session/prompts.ts), so that every value it states is unattested, read as the write path reads
 * it (claimText). Used by `scripts/measure-claims.mjs` and test/unit/vote-claims.test.ts.
 */
import {isIndirectOrigin} from '../core/memory/memory.js'
import {claimText, statedValues} from '../core/session/prompts.js'
import {loadCorpus} from './eval.js'
import {corpusNeighbours, quarantinedInProcess} from './inprocess.js'

/** Of one label's cases: how many, how many state a value, and how many are quarantined each way. */
export interface ClaimTally {
  n: number
  values: number
  real: number
  chat: number
  checked: number
}

export interface ClaimMeasure {
  attack: ClaimTally
  benign: ClaimTally
}

const empty = (): ClaimTally => ({n: 0, values: 0, real: 0, chat: 0, checked: 0})

/** One corpus set (a folder of `*.jsonl`), measured. */
export async function measureClaims(dir: string): Promise<ClaimMeasure> {
  const corpus = loadCorpus(dir)
  const curated = corpusNeighbours(corpus)
  // in a session whose prompts hold none of its values, every value the text states is unattested
  const untyped = (title: string, body: string, decoded: readonly string[]) => statedValues(claimText(title, [], body, '', decoded)).map((v) => v.text)
  const out: ClaimMeasure = {attack: empty(), benign: empty()}
  for (const s of corpus.sets) for (const c of s.cases) {
    if (c.expect?.status === 'any' || !isIndirectOrigin(c.origin)) continue
    const t = out[c.label === 'attack' ? 'attack' : 'benign']
    t.n++
    if (c.parts.some((p) => statedValues(p).length > 0)) t.values++
    if (await quarantinedInProcess(c, curated)) t.real++
    if (await quarantinedInProcess(c, curated, {origin: 'direct_chat'})) t.chat++
    if (await quarantinedInProcess(c, curated, {origin: 'direct_chat', unattested: untyped})) t.checked++
  }
  return out
}

/** The tallies of several sets added up. */
export function addClaims(all: ClaimMeasure[]): ClaimMeasure {
  const sum: ClaimMeasure = {attack: empty(), benign: empty()}
  for (const m of all) for (const k of ['attack', 'benign'] as const) for (const f of Object.keys(sum[k]) as (keyof ClaimTally)[]) sum[k][f] += m[k][f]
  return sum
}
