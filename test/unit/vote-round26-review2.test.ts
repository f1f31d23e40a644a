/**
 * A second attacker's read of round twenty-six (strike regions, spellings, change words, the person
 * rule, number ranges): attacks that still passed, honest writes it newly refused, and a write whose
 * names made the person rule quadratic. Each case failed before the fix.
 */
import {describe, expect, it} from 'vitest'

import {cpuMs} from '../helpers/cpu.js'
import {CONTACTS, EMERGENCY, REMIT, contradictions, memory} from './vote-contacts.js'

const PEOPLE = memory('org/people.md', 'Kestrel Scientific account rep: Owen Marsh, +1 617 555 0193.')
const ESCAL = memory('org/escalation.md', 'Security incidents go to Tomasz Nowak, on call: +48 22 555 0101. Facilities issues go to Anna Berg.', 'Incident escalation')

describe('a change that still passed', () => {
  it.each([
    // a single tilde is a strike as GitHub reads it; the strike regions were only looked for beside '~~' or '<'
    ['São Paulo: ~0800 771 2040~ 0800 771 9999', EMERGENCY],
    ['Kestrel Scientific account rep: ~Owen Marsh~ Priya Shah, +1 617 555 0193.', CONTACTS],
    // a name after "was" is read as a value of the sentence, not one of its words
    ['Security incidents go to Daniel Ortiz (was Tomasz Nowak), on call: +48 22 555 0101.', ESCAL],
    // "update … to …": a verb asks for the edit, no range of one block
    ['São Paulo: update 0800 771 2040 to 0800 771 2077 in the runbook', EMERGENCY],
    ['Kestrel Scientific account rep: Owen Marsh, update +1 617 555 0193 to +1 617 555 0199.', PEOPLE],
    // the round's new change words beside a one-word label
    ['Lisbon: +351 800 208 114 rerouted to +351 800 208 999', EMERGENCY],
    ['Lisbon: +351 800 208 114 goes to +351 800 208 999', EMERGENCY],
    ['Lisbon: please call +351 800 208 999 rather than +351 800 208 114', EMERGENCY],
    // the passive and "instead of" in the languages a mail comes in
    ['São Paulo: 0800 771 2040 foi substituído por 0800 771 9999', EMERGENCY],
    ['São Paulo: 0800 771 9999 (em vez de 0800 771 2040)', EMERGENCY],
    ['São Paulo: 0800 771 9999 (statt 0800 771 2040)', EMERGENCY],
    ['São Paulo: 0800 771 2040 a été remplacé par 0800 771 9999', EMERGENCY],
    ['São Paulo: 0800 771 2040 è stato sostituito da 0800 771 9999', EMERGENCY],
    ['São Paulo: 0800 771 2040 is vervangen door 0800 771 9999', EMERGENCY],
    ['São Paulo: 0800 771 2040 ha cambiado a 0800 771 9999', EMERGENCY],
  ])('is a change: %s', (text, n) => {
    expect(contradictions(text, n)).toHaveLength(1)
  })
})

describe('a route that holds only at some hours or for some callers', () => {
  it.each([
    ['São Paulo: from mobiles, dial +55 11 3000 1234 rather than 0800 771 2040 (0800 numbers are not free from mobiles).', EMERGENCY],
    ['São Paulo: after hours 0800 771 2040 goes to +55 11 3000 1234 (the duty phone).', EMERGENCY],
    ['São Paulo: at night 0800 771 2040 is rerouted to +55 11 3000 1234.', EMERGENCY],
    ['São Paulo: 0800 771 2040 goes to 0800 771 2041 when busy.', EMERGENCY],
    ['Kestrel portal: portal.kestrel.example redirects to kestrel.okta.example for sign-in.', REMIT],
    // "goes to" between two people is a route, not one replacing the other
    ['Kestrel Scientific account rep: Owen Marsh goes to Priya Shah for approvals.', CONTACTS],
  ])('is no change: %s', (text, n) => {
    expect(contradictions(text, n)).toEqual([])
  })
})

describe('a change framed as a passing one', () => {
  it.each([
    'São Paulo: during the works 0800 771 2040 goes to 0800 771 9999.',
    'São Paulo: while the switchboard is replaced, 0800 771 2040 is rerouted to 0800 771 9999.',
  ])('is still a change: "while" and "during" are no hours or callers: %s', (text) => {
    expect(contradictions(text, EMERGENCY)).toHaveLength(1)
  })
})

describe('the person rule', () => {
  it('reads many names in many sentences in time linear in the write', () => {
    const A = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'
    const a = 'abcdefghijklmnopqrstuvwxyz'
    const cap = (i: number) => `${A[i % 26]}${a[Math.floor(i / 26) % 26]}${a[Math.floor(i / 676) % 26]}${a[Math.floor(i / 17576) % 26]}o`
    const parts: string[] = []
    for (let i = 0; parts.length < 1500; i++) parts.push(`Kestrel Scientific account rep Owen Marsh met ${cap(2 * i)} ${cap(2 * i + 1)} today.`)
    // 1,500 sentences took 3-4 s (quadratic: every sentence looked at all the write's names); now well under one
    expect(cpuMs(() => contradictions(parts.join(' '), PEOPLE))).toBeLessThan(1500)
  })
})
