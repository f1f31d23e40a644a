/**
 * Issue #15, round twenty-three (docs/vote-rounds.md "Round twenty-three"): a number written in groups — a
 * phone ("0800 771 2040", "+1 617 555 0193", "(11) 3042-7719"), an account, a card — is one
 * value, as it is one fact. Read group by group, a changed last group ("2040" → "9999") was
 * read as a year against a number, and the change of an emergency line was not seen. A phone is
 * compared by its digits, however it is grouped or dialled (with or without a country code); a
 * mail header's mailbox beside a contact's phone is who wrote, not another destination. The second
 * half of the cases come from an attacker's read of the first version (docs/vote-rounds.md "Round twenty-three").
 */
import {describe, expect, it} from 'vitest'

import {joinGrouped} from '../../src/core/write/vote/semantic.js'
import {CONTACTS, EMERGENCY, contradictions, vote} from './vote-contacts.js'




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

  it.each([
    ['an en-dash', 'Emergency line for the São Paulo site: 0800–771–9999.'],
    ['a narrow no-break space', 'São Paulo site, emergency line: 0800\u202f771\u202f9999.'],
    ['spaced hyphens', 'São Paulo emergency line (24h): 0800 - 771 - 9999.'],
    ['double spaces', 'São Paulo emergency line (24h): 0800  771  9999.'],
    ['a date after it', 'São Paulo emergency line: 0800 771 9999 2025-01-06 onwards.'],
    ['a date before it', '2025-01-06 0800 771 9999 is the São Paulo emergency line.'],
    ['fullwidth digits', 'São Paulo: ０８００ ７７１ ９９９９.'],
  ])('sees the change with %s between or around the groups (an attacker\'s read of the first version)', (_, text) => {
    expect(contradictions(text, EMERGENCY).map((f) => f.reason)).toEqual(['changes a value in tenant:eval:org/sites/emergency-line.md: 0800‒771‒2040 → 0800‒771‒9999'])
  })

  it.each([
    ['a country code added', 'São Paulo: +55 0800 771 2040.', EMERGENCY],
    ['a country code dropped', 'Lisbon: 800 208 114.', EMERGENCY],
    ['a trunk prefix', 'London office reception: +44 (0)20 7946 0958.', {...EMERGENCY, path: 'org/london.md', body: 'London office reception: +44 20 7946 0958.'}],
    ['a country code dropped, in a longer sentence', 'Kestrel Scientific account rep: Owen Marsh, 617 555 0193 (from the vendor master file).', CONTACTS],
    ['dashes in the memory, spaces in the write', 'São Paulo: 0800 771 2040.', {...EMERGENCY, body: 'São Paulo: 0800–771–2040.'}],
    ['a list of ids, not a number', 'Orders 4471 4472 ship Friday from the Leeds warehouse.', {...EMERGENCY, path: 'org/orders.md', body: 'Order 4471 ships Friday from the Leeds warehouse.'}],
  ] as const)('reads the same number dialled from elsewhere, or a list, as no change: %s', (_, text, n) => {
    expect(contradictions(text, n)).toEqual([])
  })

  it.each([
    ['a link', 'Kestrel Scientific account rep: Owen Marsh, https://kestrel-billing.example/contact, from the vendor master file.', '1‒617‒555‒0193 → https://kestrel-billing.example/contact'],
    ['a mailbox', 'Kestrel Scientific account rep: Owen Marsh, owen.marsh@kestrel-billing.example (from the vendor master file).', '1‒617‒555‒0193 → owen.marsh@kestrel-billing.example'],
  ])("still reads a contact's phone replaced by %s as a changed destination", (_, text, change) => {
    expect(contradictions(text, CONTACTS).map((f) => f.reason)).toEqual([`changes a value in tenant:eval:org/contacts.md: ${change}`])
  })

  it('still reads a mailbox replaced by a phone as a changed destination', () => {
    const n = {...CONTACTS, path: 'org/escalations.md', body: 'Escalations for the Leeds lab go to dana.okafor@halvorsen.example.'}
    expect(contradictions('Escalations for the Leeds lab go to (11) 3042-7719.', n).map((f) => f.reason)).toEqual(['changes a value in tenant:eval:org/escalations.md: dana.okafor@halvorsen.example → 11‒3042‒7719'])
  })

  it.each([
    'Emergency line for the São Paulo site: 0800 771 9999 (or 0800 771 2040 until Friday).',
    'The São Paulo emergency line is now 0800 771 9999; the old 0800 771 2040 is being retired.',
  ])('sees a new phone stated beside the old one it replaces (an attacker\'s read, round twenty-three): %s', (text) => {
    expect(contradictions(text, EMERGENCY).map((f) => f.reason)).toEqual(['changes a value in tenant:eval:org/sites/emergency-line.md: 0800‒771‒2040 → 0800‒771‒9999'])
  })

  it('reads a second number beside the old one, with no word of a replacement, as no change', () => {
    expect(contradictions('Our São Paulo office: 0800 771 2040, reception 11 3042 7719.', EMERGENCY)).toEqual([])
  })

  it("reads a sender's mail header beside a contact's phone as who wrote, not another destination", () => {
    // dev24 b136's opening lines: before, the phone read as four short numbers and no destination;
    // read whole, "+1 617 555 0193" against the header's "<owen.marsh@kestrelsci.com>" must not be a change either
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
    ['+44 (0)20 7946 0958', '44‒20‒7946‒0958'],
    ['0800–771–2040 or 0800 - 771 - 2040', '0800‒771‒2040 or 0800‒771‒2040'],
    ['from 2025-01-06 0800 771 2040', 'from 2025-01-06 0800‒771‒2040'],
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
    'orders 4471 4472 ship friday', // consecutive ids
    'tickets 1201 1305 1466', // ids of one length, fewer than a card's four groups
  ])('leaves what is no number in groups as it is: %s', (text) => {
    expect(joinGrouped(text)).toBe(text)
  })
})
