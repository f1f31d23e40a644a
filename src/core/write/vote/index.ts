/**
 * Flags and the vote on a write (README "The write path", "How well the vote works"). Four built-in validators — semantic,
 * provenance, delivery, learned — each check a different property; external validators from
 * config run alongside them. The rule: a write passes when at least `pass_ratio` of the
 * validators that did not abstain accept and none rejects at or above `veto`.
 */
import type {EngramConfig} from '../../store/config.js'
import {deliveryVote} from './delivery.js'
import {externalPayload, runExternal} from './external.js'
import {flagsFrom, instructionHits, visibleText} from './flags.js'
import {readText} from './reading.js'
import {compareWithNeighbours, semanticVote} from './semantic.js'
import type {FlagHit, Neighbour, Vote, VoteContext, VoteResult, WriteCandidate} from './types.js'

export type {
  CandidateSession,
  Flag,
  FlagHit,
  Neighbour,
  NormalisedText,
  Verdict,
  Vote,
  VoteContext,
  VoteResult,
  WriteCandidate,
} from './types.js'
export {detectInstructions, type InstructionHit, type Strength} from './instruction.js'
export {ibanValid, luhnValid} from './sensitive.js'
export {forgedAuthority} from './provenance.js'
export {features, learnedVote, loadModel, score as learnedScore} from './learned.js'

/** How many neighbours the semantic validator asks for. */
const NEIGHBOUR_LIMIT = 8

// A config written as 0.6667 must still pass 2 of 3: compare ratios with a small tolerance.
const RATIO_EPSILON = 1e-3

export function computeFlags(c: WriteCandidate, neighbours: Neighbour[]): FlagHit[] {
  return flagsFrom(c, {hits: instructionHits(c), findings: compareWithNeighbours(c, neighbours)})
}

/** The rule, apart from the validators, so that it can be shown and tested on its own. */
export function decide(votes: Vote[], config: Pick<EngramConfig['vote'], 'pass_ratio' | 'veto'>): {passed: boolean; dissent: boolean; summary: string} {
  const voting = votes.filter((v) => v.verdict !== 'abstain')
  if (voting.length === 0) return {passed: false, dissent: false, summary: 'failed: every validator abstained'}
  const accepts = voting.filter((v) => v.verdict === 'accept').length
  const rejects = voting.filter((v) => v.verdict === 'reject')
  const vetoes = rejects.filter((v) => v.confidence >= config.veto)
  const tally = `${accepts}/${voting.length} accept${votes.length > voting.length ? `, ${votes.length - voting.length} abstained` : ''}`
  if (vetoes.length > 0) {
    const v = vetoes.sort((a, b) => b.confidence - a.confidence)[0]
    return {passed: false, dissent: false, summary: `failed: vetoed by ${v.validator} (${v.confidence.toFixed(2)}): ${v.reason} [${tally}]`}
  }
  if (accepts / voting.length + RATIO_EPSILON < config.pass_ratio) {
    return {passed: false, dissent: false, summary: `failed: ${tally}, below the pass ratio ${config.pass_ratio.toFixed(2)}`}
  }
  if (rejects.length > 0) {
    return {passed: true, dissent: true, summary: `passed with dissent: ${tally}; ${rejects.map((r) => `${r.validator}: ${r.reason}`).join('; ')}`}
  }
  return {passed: true, dissent: false, summary: `passed: ${tally}`}
}

/** The curated memories close to the write (none for a delete), or why the lookup failed. */
export async function lookUpNeighbours(c: WriteCandidate, ctx: VoteContext): Promise<{neighbours: Neighbour[]; lookupError?: string}> {
  if (c.operation === 'delete') return {neighbours: []}
  try {
    return {neighbours: await ctx.neighbours(visibleText(c), NEIGHBOUR_LIMIT)}
  } catch (error) {
    return {neighbours: [], lookupError: error instanceof Error ? error.message : String(error)}
  }
}

export async function runVote(c: WriteCandidate, ctx: VoteContext): Promise<VoteResult> {
  const texts = [visibleText(c), c.normalised.text, ...c.normalised.decoded]
  const weights = ctx.config.learned?.weights ?? undefined
  // the text alone is read in a long-lived process's reader thread while this one looks the
  // neighbours up (reading.ts); else, or when the reader cannot, here
  const reading = ctx.reader?.read(c, texts, weights)
  const {neighbours, lookupError} = await lookUpNeighbours(c, ctx)
  const findings = compareWithNeighbours(c, neighbours)
  const semantic = semanticVote(c, neighbours, findings, lookupError)
  const {hits, provenance, learned} = (reading && (await reading)) ?? readText(c, texts, weights)
  const flags = flagsFrom(c, {hits, findings})

  // External commands start as soon as the flags they are given are known.
  const payload = externalPayload(c, flags)
  const external = ctx.config.external.map((e) => runExternal(e, payload, ctx.cwd))

  const builtins: Vote[] = [semantic, provenance, deliveryVote(c, ctx, hits), learned]
  const votes = [...builtins, ...(await Promise.all(external))]
  const {passed, dissent, summary} = decide(votes, ctx.config)
  return {passed, dissent, votes, flags, summary}
}
