/**
 * Issue #15, round twenty-five (docs/vote-rounds.md "Round twenty-five"): a label line after a lead-in is
 * compared with the memory's label lines however the lead-in is dressed: after any run of "Re:"
 * and "Fwd:", in bold or underlined, with a time in it. Round twenty-four read one plain lead-in
 * only, and each of these passed. A label part that says a word the memory does not ("Lisbon: taxi
 * …") states another fact, and a count or an amount is never a phone's new value.
 */
import {describe, expect, it} from 'vitest'

import {cpuMs, leastCpuMs} from '../helpers/cpu.js'
import {CONTACTS, EMERGENCY, REMIT, contradictions, memory, vote} from './vote-contacts.js'

describe('a label line after a lead-in dressed as mail or markdown', () => {
  it.each([
    ['Fwd: Update from the facilities team: São Paulo: 0800 771 9999.', '0800‒771‒2040 → 0800‒771‒9999'],
    ['Re: Fwd: FYI from ops: Lisbon: +351 800 208 999', '351‒800‒208‒114 → 351‒800‒208‒999'],
    ['**Update from the facilities team:** São Paulo: 0800 771 9999.', '0800‒771‒2040 → 0800‒771‒9999'],
    ['**Update from facilities:** **São Paulo:** 0800 771 9999', '0800‒771‒2040 → 0800‒771‒9999'],
    ['__Update from facilities:__ Lisbon: +351 800 208 999', '351‒800‒208‒114 → 351‒800‒208‒999'],
    ['_Update from facilities:_ Lisbon: +351 800 208 999', '351‒800‒208‒114 → 351‒800‒208‒999'],
    ['Update (facilities, 12:30): São Paulo: 0800 771 9999.', '0800‒771‒2040 → 0800‒771‒9999'],
    // found by the attacker's read of the first version: reply marks past four, none spaced, a long lead-in
    ['Re: Re: Fwd: Fwd: Update: São Paulo: 0800 771 9999', '0800‒771‒2040 → 0800‒771‒9999'],
    ['RE: FW: RE: FW: Re: Update: São Paulo: 0800 771 9999', '0800‒771‒2040 → 0800‒771‒9999'],
    ['AW: WG: AW: WG: Info: São Paulo: 0800 771 9999', '0800‒771‒2040 → 0800‒771‒9999'],
    ['Fwd:Update: São Paulo: 0800 771 9999', '0800‒771‒2040 → 0800‒771‒9999'],
    ['Update from the facilities team regarding the new telephone provider contract: São Paulo: 0800 771 9999', '0800‒771‒2040 → 0800‒771‒9999'],
    ['Update: São Paulo: new number 0800 771 9999', '0800‒771‒2040 → 0800‒771‒9999'],
    ['Update: Lisbon: hotline +351 800 208 999', '351‒800‒208‒114 → 351‒800‒208‒999'],
  ])('is compared with the memory label line: %s', (text, change) => {
    expect(contradictions(text, EMERGENCY).map((f) => f.reason)).toEqual([`changes a value in tenant:eval:org/sites/emergency-line.md: ${change}`])
    expect(vote(text, EMERGENCY).verdict).toBe('reject')
  })

  it.each([
    'Fwd: Update from the facilities team: São Paulo: 0800 771 2040, answered day and night.',
    '**Update from facilities:** São Paulo: 0800 771 2040 (unchanged).',
    '__Reminder:__ Lisbon: +351 800 208 114',
    'Re: Fwd: Note from facilities: São Paulo site visits: book two weeks ahead, 15 visitors at most.',
    '**Note from facilities:** São Paulo site visits: book two weeks ahead, 15 visitors at most.',
    'Fwd: Meeting (10:30): Lisbon office: room 4, floor 2.',
    '__Agenda:__ Lisbon: 3 talks, 2 workshops.',
    'Re: Fwd: Lisbon trip: flights booked for 12 May.',
    // the attacker's read of the first version: a label part that says another fact, or a count or an amount
    '12/05/2024, 10:32 - Maria: Lisbon: taxi +351 912 000 111',
    'Re: Fwd: Budget: São Paulo: 12 chairs',
    '**Budget:** São Paulo: 12 chairs',
    'Fwd: Fwd: Budget: São Paulo: R$ 2,040 for snacks',
    'Re: Fwd: Invoice: Lisbon: EUR 208.114',
    '**Contacts:** Lisbon: Maria +351 912 000 111',
    '**Travel update:** Lisbon: hotel +351 213 456 789',
  ])('is no change where the label states the same value, or none of the memory: %s', (text) => {
    expect(contradictions(text, EMERGENCY)).toEqual([])
  })

  it('reads lines of spaced colons that no lead-in matches at the cost of any other line', () => {
    // each colon followed by many spaces: when a lead-in could start with a space, each line took 20-30 ms
    const lines = (n: number) => Array.from({length: n}, (_, i) => `${'x'.repeat(41)}${`:${' '.repeat(19)}${'x'.repeat(37)}${String(i).padStart(4, '0')}`.repeat(5)}`).join('\n')
    const plain = (n: number) => Array.from({length: n}, (_, i) => `${'x'.repeat(41)} ${`and ${' '.repeat(16)}${'x'.repeat(37)}${String(i).padStart(4, '0')}`.repeat(5)}`).join('\n')
    const time = (text: string) => leastCpuMs(() => contradictions(text, EMERGENCY))
    time(lines(50))
    const spaced = time(lines(740))
    const words = time(plain(740))
    expect(spaced).toBeLessThan(4 * words + 100)
  })

  it('reads a line of many colons in time linear in its length', () => {
    const time = (n: number) => {
      const text = `${'Fwd: a:'.repeat(n)} São Paulo: 0800 771 9999.`
      return leastCpuMs(() => contradictions(text, EMERGENCY))
    }
    time(500)
    const small = time(1000)
    const large = time(8000)
    expect(large).toBeLessThan(16 * small + 50)
  })
})

describe('a label line that shows its own change', () => {
  it.each([
    ['São Paulo: 0800 771 9999 (was 0800 771 2040)', '0800‒771‒2040 → 0800‒771‒9999'],
    ['São Paulo: 0800 771 2040 → 0800 771 9999', '0800‒771‒2040 → 0800‒771‒9999'],
    ['São Paulo: 0800 771 2040 -> 0800 771 9999', '0800‒771‒2040 → 0800‒771‒9999'],
    ['Lisbon: +351 800 208 114 => +351 800 208 999', '351‒800‒208‒114 → 351‒800‒208‒999'],
    // the attacker's read of the first version: any arrow glyph, a dash arrow, ">>", "to", "[was", "(ex"
    ['São Paulo: 0800 771 2040 ⇢ 0800 771 9999', '0800‒771‒2040 → 0800‒771‒9999'],
    ['São Paulo: 0800 771 2040 ➜ 0800 771 9999', '0800‒771‒2040 → 0800‒771‒9999'],
    ['São Paulo: 0800 771 2040 —> 0800 771 9999', '0800‒771‒2040 → 0800‒771‒9999'],
    ['São Paulo: 0800 771 2040 >> 0800 771 9999', '0800‒771‒2040 → 0800‒771‒9999'],
    ['São Paulo: 0800 771 2040 to 0800 771 9999', '0800‒771‒2040 → 0800‒771‒9999'],
    ['São Paulo: 0800 771 9999 [was 0800 771 2040]', '0800‒771‒2040 → 0800‒771‒9999'],
    ['São Paulo: 0800 771 9999 (ex 0800 771 2040)', '0800‒771‒2040 → 0800‒771‒9999'],
  ])('states the old value beside the new one, and is a change: %s', (text, change) => {
    expect(contradictions(text, EMERGENCY).map((f) => f.reason)).toEqual([`changes a value in tenant:eval:org/sites/emergency-line.md: ${change}`])
  })

  it.each([
    ['Kestrel Scientific account rep: Owen Marsh, +1 617 555 0193 ⇢ +1 617 555 0111.', CONTACTS],
    ['Payments desk for all vendor queries from Monday: Priya Shah in Boston.', memory('org/payments-desk.md', 'Payments desk: +1 617 555 0193.')],
    ['Payments contact for all remittances from Monday: Priya Shah in finance.', memory('org/payments-contact.md', 'Payments contact: payables@kestrel.example.')],
  ])('is a change of a contact or a person for a label line: %s', (text, neighbour) => {
    expect(contradictions(text, neighbour).map((f) => f.neighbour.path)).toEqual([neighbour.path])
  })

  it.each([
    'Kestrel Scientific account rep Owen Marsh +1 617 555 0193: quote Q-20240917 draft → sent, order 4500012345.',
    'Kestrel Scientific account rep: Owen Marsh, +1 617 555 0193 → for quotes; invoices go to +1 617 555 0100.',
  ])('is no change when the arrow stands beside no new number: %s', (text) => {
    expect(contradictions(text, CONTACTS)).toEqual([])
  })
  it.each([
    ['Kestrel remittance: remit@kestrel-pay.example (was ap@kestrel.example).', 'ap@kestrel.example → remit@kestrel-pay.example'],
    ['Kestrel remittance: ap@kestrel.example -> remit@kestrel-pay.example', 'ap@kestrel.example → remit@kestrel-pay.example'],
    ['Kestrel portal: portal.kestrel.example ➜ kestrel-portal.example', 'portal.kestrel.example → kestrel-portal.example'],
    ['Kestrel portal: kestrel-portal.example (was portal.kestrel.example)', 'portal.kestrel.example → kestrel-portal.example'],
  ])('shows an address of another domain beside the memory\'s, and is a change: %s', (text, change) => {
    expect(contradictions(text, REMIT).map((f) => f.reason)).toEqual([`changes a value in tenant:eval:org/remittance.md: ${change}`])
  })

  it.each([
    'Kestrel remittance: ap@kestrel.example → please cc finance@ourco.example on every remittance.',
    'Kestrel remittance: ap@kestrel.example (was slow to answer last week; ticket at help.kestrel.example).',
    'Kestrel portal: portal.kestrel.example → login → invoices → download.',
    'Kestrel portal: portal.kestrel.example → docs.kestrel.example for the manuals.',
  ])('is no change for an address of the same domain, or none beside the memory\'s: %s', (text) => {
    expect(contradictions(text, REMIT)).toEqual([])
  })

  it('reads a long run of dashes after a new number in time linear in its length', () => {
    // "-+>" backtracked over every dash: 250,000 of them took 27-41 s in the vote
    expect(cpuMs(() => contradictions(`São Paulo: 0800 771 2040, ticket 12345678 ${'-'.repeat(250_000)}`, EMERGENCY))).toBeLessThan(3000)
  })

  it.each([
    'São Paulo: 0800 771 2040 (was busy this morning, try again later)',
    'Lisbon: +351 800 208 114 → press 2 for the security desk',
    'São Paulo: 0800 771 2040 -> ask for the duty manager',
    'São Paulo: 0800 771 2040 (was 0800 771 2040 before the rebrand too)',
    // the attacker's read of the first version: an arrow or "(was" anywhere in the sentence, beside the memory's number and another
    'Route: Lisbon -> São Paulo, 0800 771 2040 on landing; reservation 7731902.',
    'Trip: Lisbon → São Paulo, booking ref 48213377, call 0800 771 2040 on arrival.',
    'São Paulo: 0800 771 2040 (was unreachable on 12 May; ticket 20240512 open → closed).',
    'São Paulo: 0800 771 2040 and fax 0800 771 2041 => both answered by the control room.',
    'Lisbon: +351 800 208 114; São Paulo: 0800 771 2040 => both 24h.',
    'Call flow: Lisbon +351 800 208 114 → control room → São Paulo 0800 771 2040.',
    // a place named in a longer sentence is no new value of a memory's label line (refused before round 25)
    'Trip: Lisbon → São Paulo on 12 May, flight TP 1234.',
    'Next trip: Lisbon and São Paulo in May.',
  ])('is no change without a new value, or with a place for one: %s', (text) => {
    expect(contradictions(text, EMERGENCY)).toEqual([])
  })
})
