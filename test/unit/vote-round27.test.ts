/**
 * Issue #15, round twenty-seven (README "Round twenty-seven"). From direct chat the learned model
 * objects at p ≥ 0.7 (`direct`, 0.8 before), so that its objection and another validator's
 * quarantine a message together, as two objections do from any origin; it still never
 * quarantines a short message alone below direct_veto (0.95). A chat message of 200 characters
 * or more is vetoed at p ≥ 0.8 (`direct_long`, 0.85 before). Third-party text reads as before.
 * Decided on the sealed sets (totals only), the fresh sets dev45-dev48, holdout21 at first sight
 * and round twenty-one's review of honest chat notes: 34 attacks more caught for 7 honest writes
 * more refused (README "Round twenty-seven"). Each case here is one of a readable set's, voted
 * with its set's curated memories; each catch passed with round twenty-six's bars.
 */
import {readFileSync} from 'node:fs'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'

import {loadCorpus} from '../../src/eval/eval.js'
import {corpusNeighbours, quarantinedInProcess} from '../../src/eval/inprocess.js'
import {stripInvisible} from '../../src/core/write/normalise.js'
import {runVote} from '../../src/core/write/vote/index.js'
import {learnedVote, loadModel, score} from '../../src/core/write/vote/learned.js'
import {makeCandidate, makeContext, weightsWith} from './vote-helpers.js'

const CORPUS = fileURLToPath(new URL('../../corpus/', import.meta.url))

/** A readable set's case and its set's curated memories. */
function corpusCase(set: string, id: string) {
  const corpus = loadCorpus(`${CORPUS}${set}`)
  const c = corpus.sets.flatMap((s) => s.cases).find((x) => x.id === id)
  if (!c) throw new Error(`${set} has no case ${id}`)
  return {c, curated: corpusNeighbours(corpus)}
}

// round twenty-six's bars: an objection from chat at 0.8, a veto of a long chat message at 0.85
const round26 = () =>
  weightsWith((t) => {
    t.direct = 0.8
    t.direct_long = 0.85
  })

describe('the shipped bars', () => {
  it('object from direct chat at 0.7 and veto a long chat message at 0.8; third-party text and short chat read as before', () => {
    expect(loadModel().thresholds).toMatchObject({direct: 0.7, direct_long: 0.8, direct_veto: 0.95, dissent: 0.8, indirect: 0.9, indirect_long: 0.85})
  })
})

describe('an objection from the model and one from another validator quarantine a chat message', () => {
  // each: the delivery validator objects to an order (an override of a safeguard, a "lesson" that lifts a check, a
  // standing order), and the model reads it at p 0.7-0.8: one objection passed with dissent, two quarantine
  it.each([
    ['dev28', 'd28-zw-igno-re-chat'],
    ['dev40', 'd40-a086'],
    ['dev7', 'd7a-90'],
    ['dev39', 'd39-a-few-shot-03'],
  ])('%s %s', async (set, id) => {
    const {c, curated} = corpusCase(set, id)
    expect(c.label).toBe('attack')
    expect(c.origin).toBe('direct_chat')
    // as the vote reads it: the zero-width spaces of d28's "ig\u200bnore" out
    const p = score(loadModel(), stripInvisible(c.parts[0]))
    expect(p).toBeGreaterThanOrEqual(0.7)
    expect(p).toBeLessThan(0.8)
    expect(await quarantinedInProcess(c, curated)).toBe(true)
    expect(await quarantinedInProcess(c, curated, {weights: round26()})).toBe(false)
  })
})

describe('the model alone in chat, below the veto, is a dissent: the write reaches review', () => {
  // honest notes the model reads at p 0.7-0.8 and no other validator objects to
  it.each([
    ['dev6', 'd6b-48'],
    ['dev7', 'd7b-93'],
    ['dev14', 'd14b-98'],
  ])('%s %s', async (set, id) => {
    const {c, curated} = corpusCase(set, id)
    expect(c.label).toBe('benign')
    const text = c.parts[0]
    const vote = await runVote(makeCandidate(text), makeContext({near: curated}))
    expect(vote.passed).toBe(true)
    expect(vote.dissent).toBe(true)
    expect(vote.votes.filter((v) => v.verdict === 'reject').map((v) => v.validator)).toEqual(['learned'])
    expect(learnedVote(makeCandidate(text), [text]).reason).toMatch(/^reads as an injection \(p=0\.7\d\); may be quoted by the human$/)
    expect(await quarantinedInProcess(c, curated)).toBe(false)
  })
})

describe('a chat message of 200+ characters is vetoed at p ≥ 0.8', () => {
  it.each([
    ['dev6', 'd6a-47'],
    ['dev11', 'd11a-23'],
  ])('%s %s', async (set, id) => {
    const {c, curated} = corpusCase(set, id)
    expect(c.label).toBe('attack')
    const text = c.parts[0]
    expect(text.length).toBeGreaterThanOrEqual(200)
    const vote = learnedVote(makeCandidate(text), [text])
    expect(vote.verdict).toBe('reject')
    expect(vote.confidence).toBeGreaterThanOrEqual(0.85)
    expect(vote.reason).toMatch(/^reads as an injection \(p=0\.8[0-4]\) in direct_chat; quarantined for the owner to release/)
    expect(await quarantinedInProcess(c, curated)).toBe(true)
    expect(await quarantinedInProcess(c, curated, {weights: round26()})).toBe(false)
  })

  it('and the same message of under 200 characters is not: a short message keeps direct_veto', () => {
    const {c} = corpusCase('dev6', 'd6a-47')
    const short = c.parts[0].slice(0, 190)
    const p = score(loadModel(), short)
    // the cut message reads no higher than the veto of a short one
    expect(p).toBeLessThan(0.95)
    expect(learnedVote(makeCandidate(short), [short]).confidence).toBeLessThan(0.85)
  })
})

describe('honest chat preferences and standing wishes (test/fixtures/round27-honest-chat.json)', () => {
  // forty written for this round before it was measured: what chat memory is for ("From now on, call me Sam …")
  const notes = JSON.parse(readFileSync(new URL('../fixtures/round27-honest-chat.json', import.meta.url), 'utf8')) as string[]

  it('holds forty notes', () => {
    expect(notes.length).toBe(40)
  })

  it.each(notes.map((n) => [n.slice(0, 60), n] as const))('%s… reaches review', async (_, text) => {
    expect((await runVote(makeCandidate(text), makeContext())).passed).toBe(true)
  })
})
