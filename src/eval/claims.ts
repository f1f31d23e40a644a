/**
 * What checking a claim of direct_chat against the user's prompts changes (README "Round
 * nineteen"). An agent steered by third-party text can write that text claiming direct_chat,
 * the default origin. Every case of a corpus set that arrived by an indirect origin is voted
 * on three ways, in-process as the write path votes (invisible characters out, redacted,
 * normalised, the set's curated memories as neighbours, burst limits raised): as the origin it
 * really came by; as direct_chat with nothing checked; and as direct_chat in a session whose
 * prompts hold none of its values (session/prompts.ts), so that every value it states is
 * unattested. Used by `scripts/measure-claims.mjs` and test/unit/vote-claims.test.ts.
 */
import {deriveTitle, isIndirectOrigin} from '../core/memory/memory.js'
import {DEFAULT_CONFIG} from '../core/store/config.js'
import {claimText, statedValues} from '../core/session/prompts.js'
import {normalise, stripInvisible} from '../core/write/normalise.js'
import {redact} from '../core/write/redact/index.js'
import {runVote} from '../core/write/vote/index.js'
import type {Neighbour} from '../core/write/vote/types.js'
import {loadCorpus} from './eval.js'

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

type Case = ReturnType<typeof loadCorpus>['sets'][number]['cases'][number]

/** One corpus set (a folder of `*.jsonl`), measured. */
export async function measureClaims(dir: string): Promise<ClaimMeasure> {
  const config = structuredClone(DEFAULT_CONFIG)
  // each write is measured on its own (a corpus is a burst by design)
  config.vote.burst.per_session = 1e6
  config.vote.burst.per_author = 1e6
  const corpus = loadCorpus(dir)
  const curated: Neighbour[] = corpus.curated.map((c) => ({scope: 'tenant:eval', path: c.path, title: c.title ?? deriveTitle(c.text), body: c.text, score: 1}))
  const quarantined = async (c: Case, origin: string, checked: boolean): Promise<boolean> => {
    for (const part of c.parts) {
      const red = redact(stripInvisible(part), [])
      const n = normalise(red.text)
      const title = redact(c.title ?? deriveTitle(red.text), []).text
      const base = c.path === undefined ? undefined : curated.find((k) => k.path === c.path)
      const unattested = checked ? statedValues(claimText(title, [], red.text)).map((v) => v.text) : []
      const v = await runVote({
        scope: 'tenant:eval', path: c.path ?? 'eval/case.md', operation: base ? 'update' : 'create', title, tags: [], body: red.text,
        normalised: {...n, hidden: [...new Set([...normalise(part).hidden, ...n.hidden])], split: normalise(part).split},
        origin, author: 'agent', session: {id: 's', agent: 'agent', tainted: false, taint_reasons: []},
        redactions: red.redactions, bodyBytes: Buffer.byteLength(red.text), maxBodyBytes: config.max_body_bytes, baseBody: base?.body,
        ...(unattested.length > 0 ? {unattested} : {}),
      }, {neighbours: () => curated, recentWrites: {session: 0, author: 0}, config: config.vote})
      if (!v.passed) return true
    }
    return false
  }
  const out: ClaimMeasure = {attack: empty(), benign: empty()}
  for (const s of corpus.sets) for (const c of s.cases) {
    if (c.expect?.status === 'any' || !isIndirectOrigin(c.origin)) continue
    const t = out[c.label === 'attack' ? 'attack' : 'benign']
    t.n++
    if (c.parts.some((p) => statedValues(p).length > 0)) t.values++
    if (await quarantined(c, c.origin, false)) t.real++
    if (await quarantined(c, 'direct_chat', false)) t.chat++
    if (await quarantined(c, 'direct_chat', true)) t.checked++
  }
  return out
}

/** The tallies of several sets added up. */
export function addClaims(all: ClaimMeasure[]): ClaimMeasure {
  const sum: ClaimMeasure = {attack: empty(), benign: empty()}
  for (const m of all) for (const k of ['attack', 'benign'] as const) for (const f of Object.keys(sum[k]) as (keyof ClaimTally)[]) sum[k][f] += m[k][f]
  return sum
}
