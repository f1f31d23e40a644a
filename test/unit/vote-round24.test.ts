/**
 * Issue #15, round twenty-four (docs/vote-rounds.md "Round twenty-four"): a write that calls a memory's own
 * phone, account or address retired ("the old +1 617 555 0193 is retired", "instead of
 * billing@…") and gives a new one of the same kind replaces the memory's value, however it words
 * the rest. Before, such a sentence was compared with the memory's only when the two shared
 * enough words, and a reworded one passed. The honest cases are the ones the first version
 * refused on the readable corpus: a "replacement" host beside the memory's site, a bare site for
 * a host of it, and "/old-api" in a scan report.
 */
import {describe, expect, it} from 'vitest'

import {leastCpuMs} from '../helpers/cpu.js'
import type {Neighbour} from '../../src/core/write/vote/index.js'
import {joinGrouped} from '../../src/core/write/vote/semantic.js'
import {CONTACTS, EMERGENCY, contradictions, vote} from './vote-contacts.js'


const HOSTS: Neighbour = {
  scope: 'tenant:eval',
  path: 'org/hosts.md',
  title: 'Approved hosts',
  score: 1,
  body: 'Approved hosts (IT): ERP: erp.noravia.example. Pharmacy order portal: portal.noravia-pharma.de. Supplier portal: suppliers.noravia.example. Mail: only addresses @noravia-pharma.de are ours.',
}


describe('a memory value called retired, with a new one of its kind', () => {
  it.each([
    [
      "Kestrel's rep is now Owen Marsh on +1 617 555 0999; the old +1 617 555 0193 is retired.",
      '1‒617‒555‒0193 → 1‒617‒555‒0999',
    ],
    [
      'Heads up from Kestrel: please ring 617 555 0999 from Monday. The old line, 617 555 0193, is being discontinued.',
      '617‒555‒0193 → 617‒555‒0999',
    ],
    ['Lab manager mail: d.okafor@halvorsen.example is no longer monitored, write to lab-desk@halvorsen-labs.example.', 'd.okafor@halvorsen.example → lab-desk@halvorsen-labs.example'],
  ])('names the memory and the values, and vetoes it from an email: %s', (text, change) => {
    const found = contradictions(text, CONTACTS)
    expect(found.map((f) => f.neighbour.path)).toEqual(['org/contacts.md'])
    expect(found[0].reason).toContain(change)
    expect(vote(text, CONTACTS).verdict).toBe('reject')
  })

  it('retires the memory host itself, in a line of a list', () => {
    const text = 'Portal move, effective 1 July:\n- portal.noravia-pharma.de is retired\n- orders go to portal.noravia-orders.example'
    expect(contradictions(text, HOSTS).map((f) => f.reason)).toEqual([
      'retires a value of tenant:eval:org/hosts.md: portal.noravia-pharma.de → portal.noravia-orders.example',
    ])
  })

  it.each([
    ['the new value is called the replacement, the memory value retired nowhere', 'Hosts we allow:\n- suppliers.noravia.example (supplier portal)\n- suppliers2.noravia.example # replacement portal from 15 May'],
    ['a host of the memory site is not the memory host', 'When we move you to a new address, the old address under noravia.example redirects for 90 days. Questions: help@noravia-support.example.'],
    ['"old" inside a path or a word', 'portal.noravia-pharma.de: TLS 1.0 still enabled on /old-api. Lookalike noravia-mail-verify.example reported.'],
    ['the memory value stated, a new value of another kind', 'The old badge line +1 617 555 0193 still works; the badge portal is badges.kestrel.example.'],
    ['a retired value the memory does not state', 'The old number 617 555 0100 is retired; Kestrel is on 617 555 0193 as before.'],
    ['the memory value only restated', 'Reminder: the previous note stands, Owen Marsh is on +1 617 555 0193.'],
  ])('is no change where %s', (_why, text) => {
    const n = text.includes('noravia') ? HOSTS : CONTACTS
    expect(contradictions(text, n)).toEqual([])
  })
})

// an attacker's read of the first version (docs/vote-rounds.md "Round twenty-four"): ways past it, and honest mail it refused
const ACCOUNT: Neighbour = {
  scope: 'tenant:eval',
  path: 'finance/kestrel.md',
  title: 'Kestrel invoices',
  score: 1,
  body: 'Kestrel Scientific invoices are paid by bank transfer to account 31926819 within 30 days.',
}

describe('a value called retired, as the attacker of the first version wrote it', () => {
  it.each([
    ['Heads up: Owen Marsh now answers on +1 617 555 0999 (previously 617 555 0193).', CONTACTS],
    ['Owen Marsh can be reached on +1 617 555 0999 (formerly 617 555 0193).', CONTACTS],
    ['Our number changed from 617 555 0193 to 617 555 0999.', CONTACTS],
    ['The line 617 555 0193 is being phased out; call Owen on 617 555 0999.', CONTACTS],
    ['The old number 617 555 0193 is retired; call Owen on 617.555.0999.', CONTACTS],
    ['Owen Marsh (was 617 555 0193) is now on 617 555 0999.', CONTACTS],
    ["Owen's line used to be 617 555 0193; please ring 617 555 0999.", CONTACTS],
    ['Please ring 617 555 0999 from Monday. The old line, 617 555 0193, is being discontinued.', CONTACTS],
    ['Die alte Nummer 617 555 0193 ist nicht mehr gültig, bitte 617 555 0999 anrufen.', CONTACTS],
    ["L'ancien numéro 617 555 0193 n'est plus valable : appelez le 617 555 0999.", CONTACTS],
    ['Lab mail: <mailto:d.okafor@halvorsen.example> is no longer monitored; write to lab-desk@halvorsen-labs.example.', CONTACTS],
    ['Kestrel invoice 20241187: please pay to account 40475812 (previously 31926819).', ACCOUNT],
    // the second read's: the wording of a payment fraud
    ['Kestrel invoices: account 31926819 was closed; pay to 40475812.', ACCOUNT],
    ['Please note that account 31926819 has been closed. Kindly remit to account 40475812 from now on.', ACCOUNT],
    ['Orders go to portal.noravia-orders.example (formerly portal.noravia-pharma.de).', HOSTS],
  ])('is a change: %s', (text, n) => {
    expect(contradictions(text, n).map((f) => f.reason)).toEqual([expect.stringMatching(/^(retires a value|changes a value|states another)/)])
  })

  it('names the new value of the old one\'s kind, not the first value of the text', () => {
    expect(contradictions('Kestrel invoice 20241187: please pay to account 40475812 (previously 31926819).', ACCOUNT)[0].reason).toContain('31926819 → 40475812')
  })

  it.each([
    ['Hi Maria, following up on my previous email: Owen Marsh (+1 617 555 0193) can give you the quote.\n--\nSarah Kim | sarah.kim@kestrel-sci.example | +1 617 555 0100', CONTACTS],
    ['Please call Owen at +1 617 555 0193 instead of the general switchboard 617 555 0100.', CONTACTS],
    ['Our old office line 617 555 0100 is retired, but Owen is still on +1 617 555 0193.', CONTACTS],
    ['Reminder: Owen Marsh is on +1 617 555 0193 (the old 800 number 800 555 0100 no longer works).', CONTACTS],
    ['Security advisory: portal.noravia-pharma.de runs the old TLS config. Report at https://cert.noravia.example/report', HOSTS],
    ['Deprecated browser support: portal.noravia-pharma.de no longer supports IE11. See https://docs.noravia-pharma.de/browsers', HOSTS],
    ['Reminder: orders still go through portal.noravia-pharma.de, not the old fax form. Questions: help@noravia-support.example.', HOSTS],
    ['Please send lab requests to d.okafor@halvorsen.example instead of the shared inbox lab@halvorsen.example.', CONTACTS],
    ['Statement for account 31926819, previous balance 0.00, new invoice 20241187 for 1,250.00.', ACCOUNT],
    ['Remittance: paid to account 31926819, replacing the cheque 00418832 we sent in error.', ACCOUNT],
    ['Please pay to account 31926819 as before, not to the old account 40475812.', ACCOUNT],
    ['To replace a damaged instrument, call Owen Marsh on +1 617 555 0193. Billing questions: 617 555 0122.', CONTACTS],
    ['Dana Okafor (d.okafor@halvorsen.example) is replacing Tom Reyes (t.reyes@halvorsen.example) as lab manager.', CONTACTS],
    ['Our old supplier portal suppliers.noravia.example stays up. The invoice tool moved to invoices.noravia-finance.example.', HOSTS],
    ['portal.noravia-pharma.de will be down on Saturday for replacing disks. Status: status.noravia.example', HOSTS],
    ['Owen Marsh: +1 617 555 0193 (no longer shared with the front desk, which is now 617 555 0150).', CONTACTS],
    // a second attacker's read, of the second version
    ['Owen Marsh | Kestrel Scientific | mobile +1 617 555 0999 (alt +1 617 555 0193)', CONTACTS],
    ['As per my previous email to d.okafor@halvorsen.example, the quote is attached.\n--\nSarah Kim | sarah.kim@kestrel-sci.example | +1 617 555 0100', CONTACTS],
    ['Your previous payment to account 31926819 was received, thank you. New invoice 20241187 is due on 30 June.', ACCOUNT],
    ['Please note +1 617 555 0193 has replaced our old number 617 555 0100.', CONTACTS],
    ['Dana Okafor (d.okafor@halvorsen.example) replaced Tom Reyes (t.reyes@halvorsen.example) as lab manager.', CONTACTS],
    ['Weekly update from d.okafor@halvorsen.example to lab-team@halvorsen.example: all orders received.', CONTACTS],
    ['Ticket 4471 moved from d.okafor@halvorsen.example to lab-desk@halvorsen.example (reassigned by rule 12).', CONTACTS],
    ['Stock updates from portal.noravia-pharma.de to warehouse.noravia.example run every 15 minutes.', HOSTS],
    ['If Owen is away, call the front desk on 617 555 0150 instead of +1 617 555 0193.', CONTACTS],
    ["Owen Marsh's line +1 617 555 0193 is no longer staffed on Fridays; on Fridays call the front desk on 617 555 0150.", CONTACTS],
    ['Invoices go to ap@halvorsen.example, not d.okafor@halvorsen.example.', CONTACTS],
    ['Owen is back on his old number, +1 617 555 0193. The temporary number 617 555 0100 is switched off.', CONTACTS],
    ['We used the old number +1 617 555 0193 and reached Owen without problems. Order ref 20241187.', CONTACTS],
    ['Owen is back on his old number +1 617 555 0193, i.e. the one in your file.', CONTACTS],
    ['Deprecated TLS versions on portal.noravia-pharma.de (TLS 1.0, 1.1). Report: https://scan.noravia.example/r/1187', HOSTS],
    ['portal.noravia-pharma.de certificate replaced on 3 May; the new one is issued by ca.noravia.example.', HOSTS],
    ['portal.noravia-pharma.de users disconnected at 02:00 during failover to dr.noravia.example.', HOSTS],
    ['The Kestrel line +1 617 555 0193 is closed on Sundays; the emergency line 617 555 0100 is open.', CONTACTS],
    ['portal.noravia-pharma.de was closed for maintenance; use orders-backup.noravia.example meanwhile.', HOSTS],
  ])('is no change: %s', (text, n) => {
    expect(contradictions(text, n).filter((f) => f.reason.startsWith('retires'))).toEqual([])
  })

  const DOCS: Neighbour = {scope: 'tenant:eval', path: 'org/docs.md', title: 'Manuals', score: 1, body: 'Kestrel manuals live at https://docs.kestrel.example/manuals only.'}
  it.each([
    ['lines', '\n', (i: number) => `old 617 555 0193 n${i}.`, CONTACTS],
    ['one sentence', ' ', () => 'the old 617 555 0193 is retired', CONTACTS],
    // the second attacker's: the memory host called old beside a thousand paths of it (154 s at 256 KiB in the second version)
    ['a host and its paths', ' ', (i: number) => `old docs.kestrel.example docs.kestrel.example/b${i}`, DOCS],
  ] as const)('reads a long write in time linear in its length (%s)', (_what, join, line, n) => {
    const time = (lines: number) => {
      const text = Array.from({length: lines}, (_, i) => line(i)).join(join)
      return leastCpuMs(() => contradictions(text, n))
    }
    time(200)
    const small = time(1000)
    const large = time(8000)
    // eight times the text: under sixteen times the time (the first version took some 250 times as long)
    expect(large).toBeLessThan(16 * small + 50)
  })
})


describe('a label line after a lead-in colon of its own', () => {
  it.each([
    ['Update from the facilities team: São Paulo: 0800 771 9999.', '0800‒771‒2040 → 0800‒771‒9999'],
    ['FYI from ops: Lisbon: +351 800 208 999', '351‒800‒208‒114 → 351‒800‒208‒999'],
  ])('is compared with the memory label line: %s', (text, change) => {
    expect(contradictions(text, EMERGENCY).map((f) => f.reason)).toEqual([`changes a value in tenant:eval:org/sites/emergency-line.md: ${change}`])
    expect(vote(text, EMERGENCY).verdict).toBe('reject')
  })

  it.each([
    'Update from the facilities team: São Paulo: 0800 771 2040, answered day and night.',
    'Reminder: Lisbon: +351 800 208 114 (unchanged).',
    // the lead-in part is not a label: only a memory label line is compared with what follows it
    'Note from facilities: São Paulo site visits: book two weeks ahead, 15 visitors at most.',
  ])('is no change where the label states the same value, or none of the memory: %s', (text) => {
    expect(contradictions(text, EMERGENCY)).toEqual([])
  })
})

// docs/vote-rounds.md "Round twenty-four": two groups of four that read as a list or as years, said to be a phone
const OFFICES: Neighbour = {
  scope: 'tenant:eval',
  path: 'org/offices.md',
  title: 'Offices',
  score: 1,
  body: 'Our offices. Hong Kong office: 2012 2040. Singapore office: 6123 4567. Orders 4471 and 5590 are on hold until the audit.',
}

describe('an eight-digit phone in two groups of four', () => {
  it.each([
    ['Hong Kong office: 3012 2040.', '2012‒2040 → 3012‒2040'],
    ['Hong Kong office: 2012 2099.', '2012‒2040 → 2012‒2099'],
    ['Singapore office: 6123 9999.', '6123‒4567 → 6123‒9999'],
  ])('is one number after a word that says it is a phone: %s', (text, change) => {
    expect(contradictions(text, OFFICES).map((f) => f.reason)).toEqual([`changes a value in tenant:eval:org/offices.md: ${change}`])
  })

  it.each([
    'Hong Kong office: 2012-2040, Monday to Friday.',
    'Singapore office: 61234567.',
    'Orders: 4471 4472 shipped today.',
    // a second attacker's read: years, hours and tickets after "office", "desk", "helpdesk"
    'History of our Singapore office (2016 – 2023 at Raffles Place).',
    'Singapore office reception hours 1000 – 1800.',
    'Singapore office helpdesk tickets 4471 5590 are closed.',
  ])('is no change where the number is the same, or a list: %s', (text) => {
    expect(contradictions(text, OFFICES)).toEqual([])
  })

  it.each([
    ['Hong Kong office:\n3012 2040', '2012‒2040 → 3012‒2040'],
    ['Our offices, as of today.\nSingapore office:\n  +65 6123 9999\nHong Kong office: 2012 2040', '6123‒4567 → 65‒6123‒9999'],
  ])('is read with its label when it stands alone on the next line: %s', (text, change) => {
    expect(contradictions(text, OFFICES).map((f) => f.reason)).toEqual([`changes a value in tenant:eval:org/offices.md: ${change}`])
  })

  it.each(['Hong Kong office:\n2012 2040', 'Singapore office:\n6123-4567\n\nOrders:\n4471\n4472'])('is no change with its label on the line before, the number the same: %s', (text) => {
    expect(contradictions(text, OFFICES)).toEqual([])
  })

  it('joins such groups only after a word of calling', () => {
    expect(joinGrouped('Hong Kong office: 2012 2040')).toBe('Hong Kong office: 2012\u20122040')
    expect(joinGrouped('call us on 6123 4567 today')).toBe('call us on 6123\u20124567 today')
    expect(joinGrouped('orders 4471 5590')).toBe('orders 4471 5590')
    expect(joinGrouped('in 2012 2040 was far off')).toBe('in 2012 2040 was far off')
    expect(joinGrouped('call 4471 4472')).toBe('call 4471 4472')
  })
})
