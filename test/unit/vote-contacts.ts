/**
 * The memories that rounds twenty-three and twenty-four of issue #15 test the semantic validator's
 * reading of phones, accounts and addresses against, and the comparison of a write from an email
 * with one of them (test/unit/vote-round23.test.ts to vote-round26-review2.test.ts).
 */
import {normalise} from '../../src/core/write/normalise.js'
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

/** The contradictions found when the write carries its normalised reading, as the write path makes it (look-alike letters mapped) */
export const contradictionsAsRead = (text: string, n: Neighbour) =>
  compareWithNeighbours(makeCandidate(text, {origin: 'email', normalised: normalise(text)}), [n]).filter((f) => f.kind === 'contradiction')

/** A memory of one or a few label lines in tenant:eval, titled by its first label */
export const memory = (path: string, body: string, title = body.split(':')[0]): Neighbour => ({scope: 'tenant:eval', path, title, score: 1, body})

/** A remittance mailbox and a portal of one domain (rounds twenty-five and twenty-six: addresses shown beside a replacement) */
export const REMIT = memory('org/remittance.md', 'Kestrel remittance: ap@kestrel.example. Kestrel portal: portal.kestrel.example.')
