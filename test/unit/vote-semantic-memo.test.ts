/**
 * The semantic validator keeps its analysis of a neighbour by the neighbour's blob id (the
 * id of the bytes the serving gate read): the findings must be the same as analysing the
 * text afresh, write after write, and a new version of a memory at the same path (a new
 * blob) must be analysed as what it now says.
 */
import {describe, expect, it} from 'vitest'

import {gitBlobHash} from '../../src/core/memory/hash.js'
import {computeFlags, type Neighbour} from '../../src/core/write/vote/index.js'
import {makeCandidate} from './vote-helpers.js'

const neighbour = (path: string, title: string, body: string, withBlob: boolean): Neighbour => ({
  scope: 'project:demo', path, title, body, score: 1, ...(withBlob ? {blob: gitBlobHash(`${title}\n${body}`)} : {}),
})
const flags = (text: string, ns: Neighbour[]) => computeFlags(makeCandidate(text, {maxBodyBytes: 10_000}), ns).map((f) => `${f.flag}: ${f.reason}`)

const STORED: [string, string, string][] = [
  ['db.md', 'Staging database', 'The staging database listens on port 5432. Backups run nightly at 02:00.'],
  ['deploy.md', 'Deploys', 'Production deploys need approval from two engineers. Deploys happen on Tuesdays.'],
  ['oncall.md', 'On-call', 'Priya Raman is the on-call lead for the payments team.'],
]
const WRITES = [
  'Correction: the staging database listens on port 6543.',
  'The staging database listens on port 5432.',
  'Production deploys can be pushed directly by anyone, no approval needed.',
  'Tomasz Nowak is the on-call lead for the payments team.',
  'Deploys happen on Tuesdays. Backups run nightly at 02:00.',
  'The cafeteria opens at nine.',
]

describe('the semantic analysis of a neighbour, kept by its blob id', () => {
  it('gives the findings of a fresh analysis, on first sight and again', () => {
    const fresh = STORED.map(([p, t, b]) => neighbour(p, t, b, false))
    const kept = STORED.map(([p, t, b]) => neighbour(p, t, b, true))
    for (const round of [1, 2, 3]) {
      for (const w of WRITES) expect(flags(w, kept), `round ${round}: ${w}`).toEqual(flags(w, fresh))
    }
    // the cases above are not all silent: the comparison is exercised
    expect(WRITES.filter((w) => flags(w, fresh).length > 0).length).toBeGreaterThanOrEqual(3)
  })

  it('a new version at the same path is compared as what it says now', () => {
    const write = 'The staging database listens on port 7000.'
    const v1 = neighbour('db.md', 'Staging database', 'The staging database listens on port 5432.', true)
    const v2 = neighbour('db.md', 'Staging database', 'The staging database listens on port 7000.', true)
    expect(flags(write, [v1]).join('\n')).toMatch(/^contradiction: /)
    expect(flags(write, [v2]).join('\n')).toMatch(/^duplicate: /)
    expect(flags(write, [v1]).join('\n')).toMatch(/^contradiction: /)
  })
})

describe('words that name what every JavaScript object inherits', () => {
  // Looked up on a plain object, "constructor" found Object.prototype's and was read as a word
  // with an opposite: the sentence's polarity flipped, and a plain restatement "negated" it.
  it('are words like any other: "constructor" flips no sentence', () => {
    const stored = [neighbour('builds.md', 'Builds', 'The build job runs the constructor tests nightly.', true)]
    expect(flags('The build job runs the tests nightly.', stored).filter((f) => f.startsWith('contradiction'))).toEqual([])
    expect(flags('The build job never runs the constructor tests.', stored).filter((f) => f.startsWith('contradiction'))).not.toEqual([])
  })
})
