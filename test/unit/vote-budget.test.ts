import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'
import {inWorker, overBudget, runVoteWithin} from '../../src/core/write/vote/budget.js'
import {runVote} from '../../src/core/write/vote/index.js'
import {normalise} from '../../src/core/write/normalise.js'
import {makeCandidate, makeContext} from './vote-helpers.js'

// The vote under a time budget (src/core/write/vote/budget.ts). The e2e test
// (test/e2e/vote-budget.test.ts) runs it through the CLI; these pin the mechanism.
const slow = fileURLToPath(new URL('../fixtures/slow-worker.mjs', import.meta.url))

describe('a worker under a time budget', () => {
  it('is stopped in the middle of a regular expression that would run for ages', async () => {
    const started = Date.now()
    // 60 a's and a b: 2^60 ways to split the run; it would not finish in this lifetime
    const run = await inWorker(slow, {length: 60}, 300)
    expect(run).toEqual({finished: false})
    expect(Date.now() - started).toBeLessThan(10_000)
  })

  it('returns the answer of a worker that finishes in time', async () => {
    expect(await inWorker(slow, {answer: 42}, 10_000)).toEqual({finished: true, value: {answer: 42}})
  })

  it('throws what a failing worker throws', async () => {
    await expect(inWorker(fileURLToPath(new URL('../fixtures/no-such-worker.mjs', import.meta.url)), {}, 10_000)).rejects.toThrow()
  })
})

describe('runVoteWithin', () => {
  const text = 'The staging database is backed up nightly at 02:00 UTC to the ops bucket. '.repeat(200)
  const near = [{scope: 'tenant:t', path: 'ops/backup.md', title: 'Backups', body: 'The staging database is backed up nightly at 01:00 UTC to the ops bucket.', score: 1}]

  it('votes in the worker as in the process (the worker runs the built dist/)', async () => {
    const c = makeCandidate(text, {origin: 'webpage', normalised: normalise(text)})
    const ctx = makeContext({neighbours: () => near})
    const here = await runVote(c, ctx)
    const there = await runVoteWithin(c, ctx, 60_000, 1024)
    expect(there).toEqual(here)
  })

  it('hands a failed neighbour lookup to the worker as the process would see it', async () => {
    const c = makeCandidate(text, {origin: 'webpage', normalised: normalise(text)})
    const ctx = makeContext({neighbours: () => { throw new Error('index unreadable') }})
    const there = await runVoteWithin(c, ctx, 60_000, 1024)
    expect(there).toEqual(await runVote(c, ctx))
    expect(JSON.stringify(there.votes)).toMatch(/index unreadable/)
  })

  it('quarantines a write whose vote overran, with a reason that names the budget', async () => {
    const c = makeCandidate(text, {origin: 'webpage', normalised: normalise(text)})
    const r = await runVoteWithin(c, makeContext(), 1, 1024)
    expect(r).toEqual(overBudget(c, 1))
    expect(r.passed).toBe(false)
    expect(r.votes[0]).toMatchObject({validator: 'budget', verdict: 'reject', confidence: 1})
  })
})
