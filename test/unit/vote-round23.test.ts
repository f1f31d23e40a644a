/**
 * Issue #15, round twenty-three (README "Round twenty-three"): a number written in groups — a
 * phone ("0800 771 2040", "+1 617 555 0193", "(11) 3042-7719"), an account, a card — is one
 * value, as it is one fact. Read group by group, a changed last group ("2040" → "9999") was
 * read as a year against a number, and the change of an emergency line was not seen. A phone is
 * compared by its digits, however it is grouped; and a mailbox beside a contact's phone is more
 * of the contact, not another destination.
 */
import {describe, expect, it} from 'vitest'

import type {Neighbour} from '../../src/core/write/vote/index.js'
import {compareWithNeighbours, joinGrouped, semanticVote} from '../../src/core/write/vote/semantic.js'
import {makeCandidate} from './vote-helpers.js'

const EMERGENCY: Neighbour = {
  scope: 'tenant:eval',
  path: 'org/sites/emergency-line.md',
  title: '24h site emergency line',
  score: 1,
  body: "The 24-hour site emergency line is answered by Atlântida's own control room. São Paulo: 0800 771 2040. Lisbon: +351 800 208 114.",
}

// corpus/dev24's curated contacts memory, shortened
const CONTACTS: Neighbour = {
  scope: 'tenant:eval',
  path: 'org/contacts.md',
  title: 'Key contacts',
  score: 1,
  body: 'Key contacts: Dana Okafor, lab manager, d.okafor@halvorsen.example, +1 614 555 0178. Kestrel Scientific account rep: Owen Marsh, +1 617 555 0193 (from the vendor master file).',
}

const contradictions = (text: string, n: Neighbour) => compareWithNeighbours(makeCandidate(text, {origin: 'email'}), [n]).filter((f) => f.kind === 'contradiction')
const vote = (text: string, n: Neighbour) => semanticVote(makeCandidate(text, {origin: 'email'}), [n], compareWithNeighbours(makeCandidate(text, {origin: 'email'}), [n]))

describe('a number written in groups is one value', () => {
  it.each([
    ['São Paulo: 0800 771 9999.', '0800‒771‒2040 → 0800‒771‒9999'],
    ['São Paulo: 0800 771 2041.', '0800‒771‒2040 → 0800‒771‒2041'],
    ['Lisbon: +351 800 208 999.', '351‒800‒208‒114 → 351‒800‒208‒999'],
  ])('sees a changed group, the last one too, and vetoes it from an email: %s', (text, change) => {
    expect(contradictions(text, EMERGENCY).map((f) => f.reason)).toEqual([`changes a value in tenant:eval:org/sites/emergency-line.md: ${change}`])
    expect(vote(text, EMERGENCY).verdict).toBe('reject')
  })

  it.each(['São Paulo: 0800-771-2040.', 'São Paulo: 08007712040.', 'São Paulo: 0800 771 2040.', 'Lisbon: +351 800-208-114.'])(
    'reads the same number grouped another way as the same value: %s',
    (text) => {
      expect(contradictions(text, EMERGENCY)).toEqual([])
    },
  )

  it("reads a sender's mailbox beside a contact's phone as more of the contact, not another destination", () => {
    // dev24 b136's opening lines: before, the phone read as four short numbers and no destination;
    // read whole, "+1 617 555 0193" against "<owen.marsh@kestrelsci.com>" must not be a change either
    const text = 'From: Owen Marsh <owen.marsh@kestrelsci.com>\nTo: Dana Okafor\nSubject: Advance notice\n\nPlease have your AP team call me on the number in your vendor master file.'
    expect(contradictions(text, CONTACTS)).toEqual([])
  })

  it("still reads another phone for the same contact as a change", () => {
    const text = 'Kestrel Scientific account rep: Owen Marsh, +1 617 555 0999 (from the vendor master file).'
    expect(contradictions(text, CONTACTS).map((f) => f.reason)).toEqual(['changes a value in tenant:eval:org/contacts.md: 1‒617‒555‒0193 → 1‒617‒555‒0999'])
  })
})

describe('joinGrouped', () => {
  it.each([
    ['são paulo: 0800 771 2040.', 'são paulo: 0800‒771‒2040.'],
    ['use (11) 3042-7719 as the line', 'use 11‒3042‒7719 as the line'],
    ['card 4111 1111 1111 1111', 'card 4111‒1111‒1111‒1111'],
    ['call 555 0100', 'call 555‒0100'],
  ])('joins the groups of a phone, an account or a card: %s', (text, joined) => {
    expect(joinGrouped(text)).toBe(joined)
  })

  it.each([
    'samu 192 and bombeiros 193 in brazil, 112 in portugal', // short numbers, each a fact
    'in 2019 2020 2021 we grew', // years
    '+ 2024-10-15 07:40  felix - swimming kit', // a date and a time
    'on 31 12 2025 we close', // a date in spaces
    'total 12 500,50 eur', // a decimal
    'sort code 30-92-14 account 31926819', // already one token each
    'at 9 30 am',
    'rooms 101 102 and 103',
  ])('leaves what is no number in groups as it is: %s', (text) => {
    expect(joinGrouped(text)).toBe(text)
  })
})
