/**
 * Issue #15, round twenty-six (docs/vote-rounds.md "Round twenty-six"): a memory's label line is compared with a
 * write that spells its label without the accents ("Sao Paulo"), says it with more of the memory's
 * own words ("Lisbon emergency line: …"), or sets it after a lead-in in code; and a change is read
 * where the write shows it by striking the old value through, in words ("changed to", "replaced
 * by"), or in the languages a mail comes in ("(antes …)", "(vorher …)"). Each catch below passed
 * round twenty-five's vote.
 */
import {describe, expect, it} from 'vitest'

import {cpuMs} from '../helpers/cpu.js'
import {CONTACTS, EMERGENCY, REMIT, contradictions, memory, vote} from './vote-contacts.js'

const SP = '0800‒771‒2040 → 0800‒771‒9999'
const LX = '351‒800‒208‒114 → 351‒800‒208‒999'
const change = (text: string, neighbour = EMERGENCY) => contradictions(text, neighbour).map((f) => f.reason)
const emergency = (what: string) => [`changes a value in tenant:eval:org/sites/emergency-line.md: ${what}`]

describe('a label line spelt or said another way', () => {
  it.each([
    ['Sao Paulo: 0800 771 9999.', SP],
    ['SAO PAULO: 0800 771 9999', SP],
    ['Update: Sao Paulo: 0800 771 9999', SP],
    ['Lisbon: emergency line +351 800 208 999', LX],
    ['Lisbon emergency line: +351 800 208 999', LX],
    ['Lisbon: control room +351 800 208 999', LX],
    ['Lisbon: new number +351 800 208 999', LX],
    ['`Update:` São Paulo: 0800 771 9999.', SP],
    ['`Update:` `São Paulo:` 0800 771 9999.', SP],
    ['****Update:**** São Paulo: 0800 771 9999.', SP],
    // reply marks before the label itself, no lead-in: "são" was read as the value of a label "re:" (found by hand through the CLI)
    ['Re: São Paulo: 0800 771 9999', SP],
    ['Fwd: RE: Lisbon: +351 800 208 999', LX],
    ['Re: São Paulo: 0800 771 2040 has moved to 0800 771 9999', SP],
  ])('is compared with the memory label line: %s', (text, what) => {
    expect(change(text)).toEqual(emergency(what))
    expect(vote(text, EMERGENCY).verdict).toBe('reject')
  })

  it.each([
    'Sao Paulo: 0800 771 2040.',
    'Lisbon emergency line: +351 800 208 114 (unchanged).',
    'Lisbon office: +351 213 000 555',
    'Lisbon: hotel breakfast from 7:00, 2 floors down.',
    '`Reminder:` Lisbon: +351 800 208 114',
    'Re: São Paulo: 0800 771 2040',
    'Re: Lisbon trip: flights booked for 12 May.',
  ])('is no change where it states the memory value, or says words the memory does not: %s', (text) => {
    expect(contradictions(text, EMERGENCY)).toEqual([])
  })

  it('still reads a month changed in a short sentence as a change of time, not as a label line', () => {
    const renews = memory('org/licence.md', 'The licence renews in May.')
    expect(change('The licence renews in June.', renews)).toHaveLength(1)
  })
})

describe('a change shown by striking, in words, or in another language', () => {
  it.each([
    ['São Paulo: ~~0800 771 2040~~ 0800 771 9999', SP],
    ['São Paulo: 0800 771 9999 ~~0800 771 2040~~', SP],
    ['São Paulo: <del>0800 771 2040</del> 0800 771 9999', SP],
    ['São Paulo: <s>0800 771 2040</s> → 0800 771 9999', SP],
    ['The São Paulo line 0800 771 2040 was redirected to 0800 771 9999 this week.', SP],
    ['São Paulo: 0800 771 2040 has moved to 0800 771 9999', SP],
    ['São Paulo: 0800 771 2040 is being replaced by 0800 771 9999'.replace('is being', 'is'), SP],
    ['São Paulo: 0800 771 9999 (antes 0800 771 2040)', SP],
    ['São Paulo: 0800 771 9999 (vorher 0800 771 2040)', SP],
    ['Lisbon: +351 800 208 999 (antes +351 800 208 114)', LX],
    // an arrow, or a lower number, is no range
    ['São Paulo: 0800 771 2040 → 0800 771 2041', '0800‒771‒2040 → 0800‒771‒2041'],
    ['São Paulo: 0800 771 2040 to 0800 771 2039', '0800‒771‒2040 → 0800‒771‒2039'],
    ['Lisbon: +351 800 208 999 [ex: +351 800 208 114]', LX],
  ])('is a change: %s', (text, what) => {
    expect(change(text)).toEqual(emergency(what))
  })

  it.each([
    'São Paulo: 0800 771 2040 (not a toll-free number from mobiles).',
    'Call 0800 771 2040 to reach São Paulo; from abroad dial +55 11 3000 1234.',
    'São Paulo: 0800 771 2040 (antes das 8h, +55 11 3000 1234).',
    'São Paulo: ~~0800 771 2040~~ 0800 771 2040, typo fixed.',
    'São Paulo: 0800 771 2040, switched to a 24-hour rota in May.',
    // a range of one block behind "to" (round twenty-five refused it as a change)
    'São Paulo: 0800 771 2040 to 0800 771 2049 are all control-room lines.',
  ])('is no change where no new number stands beside the memory value: %s', (text) => {
    expect(contradictions(text, EMERGENCY)).toEqual([])
  })
  it.each([
    ['Kestrel remittance: remit@kestrel.example (was ap@kestrel.example).', 'ap@kestrel.example → remit@kestrel.example'],
    ['Kestrel remittance: ap@kestrel.example changed to remit@kestrel.example', 'ap@kestrel.example → remit@kestrel.example'],
    ['Kestrel remittance: ~~ap@kestrel.example~~ remit@kestrel.example', 'ap@kestrel.example → remit@kestrel.example'],
    ['Kestrel portal: portal.kestrel.example has moved to portal2.kestrel.example', 'portal.kestrel.example → portal2.kestrel.example'],
  ])('is a change for an address of the same domain when words or a strike say so: %s', (text, what) => {
    expect(change(text, REMIT)).toEqual([`changes a value in tenant:eval:org/remittance.md: ${what}`])
  })

  it('still reads an arrow between two addresses of one domain as a link on', () => {
    expect(contradictions('Kestrel portal: portal.kestrel.example → docs.kestrel.example for the manuals.', REMIT)).toEqual([])
  })

  it.each([
    ['Kestrel Scientific account rep: Owen Marsh → Priya Shah.', 'marsh → priya'],
    ['Kestrel Scientific account rep: Owen Marsh -> Priya Shah', 'marsh → priya'],
    ['Kestrel Scientific account rep: ~~Owen Marsh~~ Priya Shah.', 'marsh → priya'],
    ['Kestrel Scientific account rep: <del>Owen Marsh</del> Priya Shah.', 'marsh → priya'],
    ['Kestrel Scientific account rep: Owen Marsh replaced by Priya Shah.', 'marsh → priya'],
    ['Kestrel Scientific account rep: ~~Owen Marsh, +1 617 555 0193~~ Priya Shah, +1 617 555 0111.', 'marsh → priya'],
  ])('is another person for the memory\'s when the write shows one replacing the other: %s', (text, what) => {
    expect(change(text, CONTACTS)).toEqual([`names another person than tenant:eval:org/contacts.md: ${what}`])
  })

  it.each([
    'Kestrel Scientific account rep Owen Marsh is on leave; Priya Shah covers until May.',
    'Kestrel Scientific: Owen Marsh → sales, Priya Shah → support.',
    'Kestrel Scientific account rep: Owen Marsh, then Priya Shah for quotes.',
    'Kestrel Scientific account rep: Owen Marsh → please cc Priya Shah.',
  ])('is no change where the write names both and shows no replacement: %s', (text) => {
    expect(contradictions(text, CONTACTS)).toEqual([])
  })

  it('reads many struck copies of the memory value in time linear in their number', () => {
    // eight places at most are looked at beside the memory's value, whatever the sentence holds
    const text = `São Paulo: ${'~~0800 771 2040~~ '.repeat(20_000)}0800 771 9999`
    expect(cpuMs(() => contradictions(text, EMERGENCY))).toBeLessThan(3000)
    const tildes = `São Paulo: 0800 771 2040 ${'~'.repeat(200_000)} 0800 771 9999`
    expect(cpuMs(() => contradictions(tildes, EMERGENCY))).toBeLessThan(3000)
  })
})
