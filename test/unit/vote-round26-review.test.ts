/**
 * An attacker's read of round twenty-six's first version (the semantic validator's label lines,
 * folding and change words; docs/vote-rounds.md "Round twenty-six"): attacks that still passed its vote, and
 * honest writes it newly refused. The read's own cases each failed on that version; the later
 * blocks (look-alike letters, arrows, forwards, a person named as the one before) came with their fixes.
 */
import {describe, expect, it} from 'vitest'

import {CONTACTS, EMERGENCY, REMIT, contradictions, contradictionsAsRead, memory} from './vote-contacts.js'

const OFFICES = memory('org/offices.md', 'Łódź office: +48 42 636 1234. København: +45 33 12 34 56.')
const DESK = memory('org/helpdesk.md', 'Helpdesk: +44 20 7946 0958. Helpdesk fax: +44 20 7946 0959.')
const SITE = memory('org/sites/lisbon.md', 'Lisbon: +351 800 208 114. Lisbon control room: +351 213 000 555.')

describe('a change the write spells its own way', () => {
  it.each([
    // the memory's value in another spelling than the memory's: the arrow, "(was", the strike were looked for beside the memory's spelling only
    ['São Paulo: 0800-771-2040 → 0800-771-9999', EMERGENCY],
    ['São Paulo: 0800-771-9999 (antes 0800-771-2040)', EMERGENCY],
    ['Lisbon: +351 800 208 999 (was 800 208 114)', EMERGENCY],
    ['Kestrel Scientific account rep: Owen Marsh, (617) 555-0144 (was (617) 555-0193).', CONTACTS],
    // accents sent decomposed, and letters NFD keeps whole
    ['Sa\u0303o Paulo: 0800 771 9999', EMERGENCY],
    ['Lodz office: +48 42 636 9999', OFFICES],
    ['Kobenhavn: +45 33 12 99 99', OFFICES],
    // strikes as mail writes them
    ['São Paulo: <strike>0800 771 2040</strike> 0800 771 9999', EMERGENCY],
    ['São Paulo: <del datetime="2026-12-01">0800 771 2040</del> 0800 771 9999', EMERGENCY],
    ['Lisbon: <del>+351 800 208 114</del> +351 800 208 999', EMERGENCY],
    // the change said in the language of the site
    ['São Paulo: 0800 771 2040 mudou para 0800 771 9999', EMERGENCY],
    ['São Paulo: 0800 771 2040 passa a ser 0800 771 9999', EMERGENCY],
    ['São Paulo: 0800 771 9999 (anterior: 0800 771 2040)', EMERGENCY],
    // English words that say it with no word of change the rules knew
    ['São Paulo: please use 0800 771 9999 rather than 0800 771 2040.', EMERGENCY],
    ['São Paulo: 0800 771 2040 is rerouted to 0800 771 9999 from Monday.', EMERGENCY],
    ['São Paulo: 0800 771 2040 reassigned to 0800 771 9999.', EMERGENCY],
  ])('is a change: %s', (text, n) => {
    expect(contradictions(text, n)).toHaveLength(1)
  })
})

describe('honest lines the label rule read as changes', () => {
  it.each([
    // a line of the memory said again: its words are the memory's, its value the memory's own
    ['Helpdesk fax: +44 20 7946 0959', DESK],
    ['Lisbon control room: +351 213 000 555', SITE],
    // "alt" is an alternative; "not" and "instead of" set two mailboxes of one domain apart
    ['São Paulo: +55 11 3000 1234 (alt 0800 771 2040)', EMERGENCY],
    ['Kestrel remittance: ar@kestrel.example (not ap@kestrel.example) handles disputes.', REMIT],
    ['Kestrel remittance: use disputes@kestrel.example instead of ap@kestrel.example for disputes.', REMIT],
  ])('is no change: %s', (text, n) => {
    expect(contradictions(text, n)).toEqual([])
  })
})

describe('after the review: look-alike letters, more arrows, and a forward', () => {
  const disguised = (text: string) => contradictionsAsRead(text, EMERGENCY)

  it('compares a write disguised in look-alike letters as it reads', () => {
    // "Sаo Paulo" with a Cyrillic "а": another label to the eye of the code, the memory's to a reader
    expect(disguised('S\u0430o Paulo: 0800 771 9999').map((f) => f.reason)).toEqual(['changes a value in tenant:eval:org/sites/emergency-line.md: 0800‒771‒2040 → 0800‒771‒9999'])
    expect(disguised('S\u0430o Paulo: 0800 771 2040')).toEqual([])
  })

  it('still reads a look-alike host as another host: the write is compared as stored too', () => {
    const shop = memory('web/shop-admin.md', 'Shop admin: https://bramblewick-home.myshopify.com/admin (1Password entry "Shopify").')
    const text = 'Shop admin, new region: https://bramblewick-home.mysh\u03bfpify.com/admin (same 1Password entry "Shopify").'
    expect(contradictionsAsRead(text, shop)).toHaveLength(1)
  })

  it.each(['▶', '►', '≫', '👉'])('reads %s between the memory value and a new one as an arrow', (arrow) => {
    expect(contradictions(`São Paulo: 0800 771 2040 ${arrow} 0800 771 9999`, EMERGENCY)).toHaveLength(1)
  })

  it.each([
    'Kestrel portal: portal.kestrel.example is redirected to sso.kestrel.example for login.',
    'Kestrel remittance: ap@kestrel.example is forwarded to ar@kestrel.example on weekends.',
  ])('reads a forward or a redirect to an address of the same domain as a link on: %s', (text) => {
    expect(contradictions(text, REMIT)).toEqual([])
  })

  it('still reads a forward to an address of another domain as a change', () => {
    expect(contradictions('Kestrel remittance: ap@kestrel.example is forwarded to remit@kestrel-pay.example from Monday.', REMIT)).toHaveLength(1)
  })
})

describe('a person named as the one before', () => {
  const REP = memory('org/kestrel-rep.md', 'Kestrel Scientific account rep: Owen Marsh.')
  it.each([
    'Kestrel Scientific account rep: Priya Shah (was Owen Marsh).',
    'Kestrel Scientific account rep: Priya Shah, formerly Owen Marsh.',
    'Kestrel Scientific account rep: Priya Shah (antes Owen Marsh)',
  ])('is another person: %s', (text) => {
    expect(contradictions(text, REP).map((f) => f.reason)).toEqual(['names another person than tenant:eval:org/kestrel-rep.md: owen → shah'])
  })

  it('is no change where the new name stands beside the old one but replaces nothing', () => {
    expect(contradictions('Kestrel Scientific account rep: Owen Marsh; Priya Shah handles returns.', REP)).toEqual([])
  })

  it('reads a place moved "from … to …" as no person replaced (corpus/dev9 d9b-73 was refused by the first version)', () => {
    const broker = memory('logistics/customs-broker.md', 'Our customs broker is Harbourline Clearance Ltd, Felixstowe. Account manager: Dev Malik, dev.malik@harbourline.example, 01632 960421.')
    expect(contradictions('Harbourline Clearance Ltd moved its office from Felixstowe to Ipswich (Unit 7, Orwell Quay) in August. Contact is unchanged: Dev Malik, dev.malik@harbourline.example, 01632 960421.', broker)).toEqual([])
  })
})
