/**
 * The memories that rounds twenty-three and twenty-four of issue #15 test the semantic validator's
 * reading of phones, accounts and addresses against, and the comparison of a write from an email
 * with one of them (test/unit/vote-round23.test.ts, test/unit/vote-round24.test.ts).
 */
import type {Neighbour} from '../../src/core/write/vote/index.js'
import {compareWithNeighbours, semanticVote} from '../../src/core/write/vote/semantic.js'
import {makeCandidate} from './vote-helpers.js'

export const EMERGENCY: Neighbour = {
  scope: 'tenant:eval',
  path: 'org/sites/emergency-line.md',
  title: '24h site emergency line',
  score: 1,
  body: "The 24-hour site emergency line is answered by Atlântida's own control room. São Paulo: 0800 771 2040. Lisbon: +351 800 208 114.",
}

/** corpus/dev24's curated contacts memory, shortened */
export const CONTACTS: Neighbour = {
  scope: 'tenant:eval',
  path: 'org/contacts.md',
  title: 'Key contacts',
  score: 1,
  body: 'Key contacts: Dana Okafor, lab manager, d.okafor@halvorsen.example, +1 614 555 0178. Kestrel Scientific account rep: Owen Marsh, +1 617 555 0193 (from the vendor master file).',
}

/** The contradictions the semantic validator finds between a write from an email and one memory */
export const contradictions = (text: string, n: Neighbour) => compareWithNeighbours(makeCandidate(text, {origin: 'email'}), [n]).filter((f) => f.kind === 'contradiction')

/** The semantic validator's vote on a write from an email, with one memory as its neighbour */
export const vote = (text: string, n: Neighbour) => semanticVote(makeCandidate(text, {origin: 'email'}), [n], compareWithNeighbours(makeCandidate(text, {origin: 'email'}), [n]))
