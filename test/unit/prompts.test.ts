/**
 * What the user typed (src/core/session/prompts.ts): the values a text states, the record the
 * UserPromptSubmit hook keeps of them in the private folder (real files), and the plan of a
 * write claiming direct_chat against it (README "Claude Code hooks", STANDARD.md R26).
 */
import {chmodSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {DEFAULT_CONFIG} from '../../src/core/store/config.js'
import {privateDir, sessionSecret} from '../../src/core/store/private.js'
import {claimText, promptRecord, recordPrompt, statedValues, unattestedValues} from '../../src/core/session/prompts.js'
import type {SessionRecord} from '../../src/core/session/sessions.js'
import {planWrite} from '../../src/core/write/plan.js'
import {deliveryVote} from '../../src/core/write/vote/delivery.js'
import {semanticVote} from '../../src/core/write/vote/semantic.js'
import {flagsFrom} from '../../src/core/write/vote/flags.js'

const keys = (t: string, asPrompt = false) => statedValues(t, asPrompt).map((v) => v.key)

describe('statedValues: the values a fact is made of', () => {
  it('reads hosts of links, bare hosts, mailboxes, IP addresses, IBANs, wallets and long numbers', () => {
    expect(keys('See https://Staging.Acme.example:8443/health?x=1 now')).toEqual(['host:staging.acme.example'])
    expect(keys('send it to www.acme-payments.com.')).toEqual(['host:acme-payments.com'])
    expect(keys('Mail AP@Acme.example please')).toEqual(['mail:ap@acme.example'])
    expect(keys('Mail ap@acme.example please', true)).toEqual(['mail:ap@acme.example', 'host:acme.example'])
    expect(keys('db at 10.0.12.7:5432')).toEqual(['ip:10.0.12.7'])
    expect(keys('IBAN DE89 3704 0044 0532 0130 00 from now on')).toEqual(['iban:DE89370400440532013000'])
    expect(keys(`wallet 0x${'aB'.repeat(20)}`)).toEqual([`wallet:0x${'ab'.repeat(20)}`])
    expect(keys('account 4471-9920-13 and phone +44 20 7946 0958')).toEqual(['number:1992013', 'number:9460958'])
  })

  it('compares a number by its last seven digits: a country code, a leading zero or its dashes do not count', () => {
    expect(keys('+44 20 7946 0958')).toEqual(keys('020 7946 0958'))
    expect(keys('4471-9920-13')).toEqual(keys('44719920 13'))
    expect(keys('12345678')).not.toEqual(keys('12345679'))
  })

  it('reads no file name, version, date, year, short number, amount or name as a value', () => {
    for (const t of [
      'the config is in settings.json and README.md; run.sh calls main.py and lib.rs',
      'bumped to version 1.24.3 on 2026-12-04 (also 04-12-2026, 20261204)',
      'the budget is $5,000 for 2027; port 8080; 42 users; PR #12345',
      'Alice Smith owns the Payments team',
      'e.g. this, i.e. that',
      'commit 9d203c8a and sha 1a2b3c4d5e6f',
    ]) expect(statedValues(t), t).toEqual([])
  })

  it('reads a host once, however many forms it takes', () => {
    expect(keys('https://acme.example/a and acme.example and http://www.acme.example/b')).toEqual(['host:acme.example'])
  })

  it('shows each value as the text writes it', () => {
    expect(statedValues('Invoices go to billing@acme-payments.example, account 8812-3345-77.').map((v) => v.text)).toEqual(['billing@acme-payments.example', '8812-3345-77'])
  })

  it('a title that is the body\'s clipped first line is not read twice, nor its cut last word', () => {
    const body = 'Staging server is https://staging.acme.example/health; invoices to ap@acme.example\n'
    const clipped = 'Staging server is https://staging.acme.example/health; invoices to ap@acme.ex…'
    expect(statedValues(claimText(clipped, [], body)).map((v) => v.text)).toEqual(['https://staging.acme.example', 'ap@acme.example'])
    expect(keys(claimText('Pay acme-payments.com', ['billing'], 'body'))).toEqual(['host:acme-payments.com'])
  })

  it('is linear on text built to stall it', () => {
    for (const t of ['1-'.repeat(50_000), 'a.'.repeat(50_000), `${'a'.repeat(60)}@`.repeat(3000), 'https://'.repeat(20_000), '1.1.1.'.repeat(20_000)]) {
      const t0 = performance.now()
      statedValues(t)
      expect(performance.now() - t0, t.slice(0, 12)).toBeLessThan(2000)
    }
  })
})

describe('the record of what the user typed (private folder, real files)', () => {
  const root = '/srv/store-of-prompts-test'
  sessionSecret(true)

  it('keeps MACs of the values only: no prompt and no value in the file, 0600 in 0700 folders', () => {
    const n = recordPrompt(root, 's-rec00001', 'our staging host is staging.acme.example; invoices to ap@acme.example, account 4471-9920-13')
    expect(n).toBe(4)
    const dir = join(privateDir(), 'prompts')
    const [storeDir] = readdirSync(dir)
    const file = join(dir, storeDir, 's-rec00001.json')
    const text = readFileSync(file, 'utf8')
    for (const v of ['staging', 'acme', '4471', '9920', 'invoices']) expect(text).not.toContain(v)
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(statSync(join(dir, storeDir)).mode & 0o777).toBe(0o700)
    const r = promptRecord(root, 's-rec00001')
    expect(r.found).toBe(true)
    expect(r.prompts).toBe(1)
    expect(unattestedValues('Staging: https://staging.acme.example/x, ap@acme.example, acct 44719920 13', r)).toEqual([])
    expect(unattestedValues('Invoices now go to billing@acme-payments.example, account 8812-3345-77', r)).toEqual(['billing@acme-payments.example', '8812-3345-77'])
  })

  it('grows prompt by prompt, and another session\'s record attests nothing here', () => {
    recordPrompt(root, 's-rec00002', 'first: nothing of note')
    expect(unattestedValues('use vault.acme.example', promptRecord(root, 's-rec00002'))).toEqual(['vault.acme.example'])
    recordPrompt(root, 's-rec00002', 'second: the vault is vault.acme.example')
    expect(promptRecord(root, 's-rec00002').prompts).toBe(2)
    expect(unattestedValues('use vault.acme.example', promptRecord(root, 's-rec00002'))).toEqual([])
    // copied to another session's name: the MACs are bound to the session they were made for
    const dir = join(privateDir(), 'prompts', readdirSync(join(privateDir(), 'prompts'))[0])
    writeFileSync(join(dir, 's-rec00003.json'), readFileSync(join(dir, 's-rec00002.json'), 'utf8').replace('s-rec00002', 's-rec00003'), {mode: 0o600})
    expect(unattestedValues('use vault.acme.example', promptRecord(root, 's-rec00003'))).toEqual(['vault.acme.example'])
  })

  it('a missing, malformed, other-readable or foreign record attests nothing (fail closed)', () => {
    expect(promptRecord(root, 's-none0001')).toMatchObject({found: false, prompts: 0})
    expect(promptRecord(root, 's-none0001').has('host:acme.example')).toBe(false)
    recordPrompt(root, 's-rec00004', 'vault.acme.example')
    const dir = join(privateDir(), 'prompts', readdirSync(join(privateDir(), 'prompts'))[0])
    const file = join(dir, 's-rec00004.json')
    const good = readFileSync(file, 'utf8')
    writeFileSync(file, good.slice(0, 40), {mode: 0o600})
    expect(promptRecord(root, 's-rec00004').found).toBe(false)
    writeFileSync(file, good)
    chmodSync(file, 0o644)
    expect(promptRecord(root, 's-rec00004').found).toBe(false)
    // a record of made-up MACs: no value reads as typed without the session secret's MAC
    writeFileSync(file, JSON.stringify({store: root, session: 's-rec00004', prompts: 1, values: ['0'.repeat(64)]}))
    chmodSync(file, 0o600)
    expect(unattestedValues('vault.acme.example', promptRecord(root, 's-rec00004'))).toEqual(['vault.acme.example'])
  })

  it('a value typed in any surroundings is found when a write states it in others (property)', () => {
    mkdirSync(privateDir(), {recursive: true})
    const label = fc.stringMatching(/^[a-z][a-z0-9-]{0,10}[a-z0-9]$/)
    const value = fc.oneof(
      fc.tuple(label, label, fc.constantFrom('com', 'io', 'example', 'internal')).map(([a, b, t]) => `${a}.${b}.${t}`),
      fc.tuple(label, label, fc.constantFrom('com', 'org')).map(([u, d, t]) => `${u}@${d}.${t}`),
      fc.array(fc.integer({min: 10, max: 9999}), {minLength: 2, maxLength: 4}).map((g) => g.join('-')).filter((v) => v.replace(/\D/g, '').length >= 6 && !/^\d{4}-\d{2}-\d{2}$|^\d{2}-\d{2}-\d{4}$/.test(v)),
    )
    const words = fc.constantFrom('Please note', 'remember that', 'FYI:', 'the new one is', '—', '(', 'and')
    let i = 0
    fc.assert(fc.property(value, words, words, (v, a, b) => {
      const s = `s-prop${String(++i).padStart(4, '0')}`
      recordPrompt(root, s, `${a} ${v} ${b}.`)
      return unattestedValues(`${b} ${v}, ${a}`, promptRecord(root, s)).length === 0
    }), {numRuns: 150})
  })
})

describe('planWrite: a claim of direct_chat against what the user typed', () => {
  const session = (over: Partial<SessionRecord> = {}): SessionRecord => ({
    id: 's-plan0001', agent: 'claude-code', assigned: 'project:alpha', reads: [], tainted: false, taint_reasons: [],
    created: '2026-01-01T00:00:00.000Z', updated: '2026-01-01T00:00:00.000Z', proof: 'x', prompts: 'recorded', ...over,
  })
  const typed = (...keys: string[]) => ({found: true, prompts: 1, has: (k: string) => keys.includes(k)})
  const view = (prompts?: ReturnType<typeof typed>) => ({config: DEFAULT_CONFIG, read: () => undefined, ...(prompts ? {prompts} : {})})
  const write = {scope: 'project:alpha', path: 'billing.md', content: 'Invoices now go to billing@acme-payments.example, account 8812-3345-77.\n'}

  it('a value no prompt holds makes the write tainted, names the values, and is third-party text to the vote', () => {
    const plan = planWrite(session(), write, view(typed('mail:ap@acme.example')))
    expect(plan.tainted).toBe(true)
    expect(plan.taintReasons).toEqual(['origin: direct_chat, but the user typed none of "billing@acme-payments.example", "8812-3345-77" in this session'])
    expect(plan.candidate!.unattested).toEqual(['billing@acme-payments.example', '8812-3345-77'])
    expect(flagsFrom(plan.candidate!, {hits: [], findings: []}).find((f) => f.flag === 'tainted-source')?.reason).toContain('typed none of')
    const delivery = deliveryVote(plan.candidate!, {recentWrites: {session: 0, author: 0}, config: DEFAULT_CONFIG.vote}, [])
    expect(delivery.reason).toContain('direct_chat the user did not type (third-party text)')
    // a contradiction of stored memory from such a write is vetoed, as from third-party text
    const finding = {kind: 'contradiction' as const, neighbour: {scope: 'project:alpha', path: 'ap.md', title: 'AP', body: 'x', score: 1}, reason: 'changes the account of ap.md'}
    expect(semanticVote(plan.candidate!, [], [finding])).toMatchObject({verdict: 'reject', confidence: 0.9})
    expect(semanticVote(planWrite(session(), write, view(typed('mail:billing@acme-payments.example', 'number:2334577'))).candidate!, [], [finding])).toMatchObject({verdict: 'reject', confidence: 0.7})
  })

  it('every value typed: the write is as it was (not tainted, no reason, no flag)', () => {
    const plan = planWrite(session(), write, view(typed('mail:billing@acme-payments.example', 'number:2334577')))
    expect(plan.tainted).toBe(false)
    expect(plan.taintReasons).toEqual([])
    expect(plan.candidate!.unattested).toBeUndefined()
  })

  it('fails closed: a recording session with no record given has typed nothing', () => {
    expect(planWrite(session(), write, view()).tainted).toBe(true)
  })

  it('is not asked of a session whose prompts are not recorded, of another origin, or of the session\'s own run: scope text it did not claim', () => {
    const {prompts: _p, ...plain} = session()
    expect(planWrite(plain, write, view()).tainted).toBe(false)
    const email = planWrite(session(), {...write, origin: 'email'}, view())
    expect(email.taintReasons).toEqual(['origin: email'])
    expect(email.candidate!.unattested).toBeUndefined()
    // a run: write claiming direct_chat is checked too: it is marked, never refused
    const run = planWrite(session(), {...write, scope: 'run:s-plan0001'}, view())
    expect(run.route).toBe('direct')
    expect(run.tainted).toBe(true)
  })

  it('reads the title and tags as well as the body', () => {
    const plan = planWrite(session(), {...write, content: 'see the title\n', title: 'Pay acme-payments.com', tags: ['evil.example']}, view())
    expect(plan.candidate!.unattested).toEqual(['acme-payments.com', 'evil.example'])
  })
})
