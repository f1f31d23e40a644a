/**
 * Issue #15, round twenty-five (README "Round twenty-five"): a label line after a lead-in is
 * compared with the memory's label lines however the lead-in is dressed: after "Fwd:" or
 * "Re: Fwd:", in bold or underlined, with a time in it. Round twenty-four read one plain lead-in
 * only, and each of these passed.
 */
import {describe, expect, it} from 'vitest'

import {EMERGENCY, contradictions, vote} from './vote-contacts.js'

describe('a label line after a lead-in dressed as mail or markdown', () => {
  it.each([
    ['Fwd: Update from the facilities team: São Paulo: 0800 771 9999.', '0800‒771‒2040 → 0800‒771‒9999'],
    ['Re: Fwd: FYI from ops: Lisbon: +351 800 208 999', '351‒800‒208‒114 → 351‒800‒208‒999'],
    ['**Update from the facilities team:** São Paulo: 0800 771 9999.', '0800‒771‒2040 → 0800‒771‒9999'],
    ['**Update from facilities:** **São Paulo:** 0800 771 9999', '0800‒771‒2040 → 0800‒771‒9999'],
    ['__Update from facilities:__ Lisbon: +351 800 208 999', '351‒800‒208‒114 → 351‒800‒208‒999'],
    ['_Update from facilities:_ Lisbon: +351 800 208 999', '351‒800‒208‒114 → 351‒800‒208‒999'],
    ['Update (facilities, 12:30): São Paulo: 0800 771 9999.', '0800‒771‒2040 → 0800‒771‒9999'],
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
  ])('is no change where the label states the same value, or none of the memory: %s', (text) => {
    expect(contradictions(text, EMERGENCY)).toEqual([])
  })

  it('reads a line of many colons in time linear in its length', () => {
    const time = (n: number) => {
      const text = `${'Fwd: a:'.repeat(n)} São Paulo: 0800 771 9999.`
      const t0 = performance.now()
      contradictions(text, EMERGENCY)
      return performance.now() - t0
    }
    time(500)
    const small = Math.min(time(1000), time(1000))
    const large = Math.min(time(8000), time(8000))
    expect(large).toBeLessThan(16 * small + 50)
  })
})
