/**
 * What the user typed (src/core/session/prompts.ts): the values a text states, the record the
 * UserPromptSubmit hook keeps of them in the private folder (real files), and the plan of a
 * write claiming direct_chat against it (README "Claude Code hooks", STANDARD.md R26).
 */
import {chmodSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {DEFAULT_CONFIG} from '../../src/core/store/config.js'
import {privateDir, sessionSecret} from '../../src/core/store/private.js'
import {claimText, promptRecord, recordPrompt, recalledValues, statedValues, unattestedValues} from '../../src/core/session/prompts.js'
import {recordProof, type SessionRecord} from '../../src/core/session/sessions.js'
import {planWrite} from '../../src/core/write/plan.js'
import {deliveryVote} from '../../src/core/write/vote/delivery.js'
import {semanticVote} from '../../src/core/write/vote/semantic.js'
import {flagsFrom} from '../../src/core/write/vote/flags.js'

const keys = (t: string, asPrompt = false) => statedValues(t, asPrompt).flatMap((v) => v.keys)

describe('recalledValues: what an update keeps of the curated memory it changes', () => {
  const recalled = (memory: string, written: string) => {
    const r = recalledValues({title: 'Notes', tags: [], body: memory}, written)
    return statedValues(written).filter((x) => x.exacts.every((e) => r.has(e))).map((x) => x.text)
  }

  it('the values of the lines kept word for word, each as itself', () => {
    const memory = 'Donate at https://paypal.me/AcmeShop\nSupport +1 415 555 0132\nApp: https://app.example.com/#/pay/acmeshop'
    // a line kept (blanks aside) recalls its values; a new line does not, even on the same host or with the same digits
    expect(recalled(memory, '  Donate   at https://paypal.me/AcmeShop \nNew: https://paypal.me/evilguy')).toEqual(['https://paypal.me/AcmeShop'])
    expect(recalled(memory, 'Donate at https://paypal.me/AcmeShop\nAlso https://evil.example\\@paypal.me/AcmeShop')).toEqual(['https://paypal.me/AcmeShop'])
    expect(recalled(memory, 'Support +1 415 555 0132\nRefunds to 155550132 or +41 55 550 132')).toEqual(['+1 415 555 0132'])
    expect(recalled(memory, 'App: https://app.example.com/#/pay/acmeshop\nor https://app.example.com/#/pay/evilguy')).toEqual([])
    expect(recalled(memory, 'App: https://app.example.com/#/pay/acmeshop')).toEqual(['https://app.example.com/#/pay/acmeshop'])
    // a line reworded, or a value moved into another role, is not recalled
    expect(recalled(memory, 'Donations: https://paypal.me/AcmeShop')).toEqual([])
    // a kept line wrapped in a tag pointing elsewhere is no longer the line
    expect(recalled(memory, '<a href="https://paypal.me/evilguy">Donate at https://paypal.me/AcmeShop</a>')).toEqual([])
    expect(recalled('Our page is https://paypal.me/acmeshop. Our rival sells at https://paypal.me/rivalco.', 'Our page is https://paypal.me/rivalco.')).toEqual([])
  })

  it('a memory naming any value to warn against it or as past vouches for nothing', () => {
    for (const memory of [
      'Known scam pages:\n- https://paypal.me/evilguy',
      'Don’t send to https://paypal.me/evilguy',
      'https://paypal.me/evilguy\nThis page is a phishing copy.',
      'Nicht verwenden: https://paypal.me/evilguy',
      'Ne payez jamais https://paypal.me/evilguy',
      'Donations went to https://paypal.me/evilguy',
    ]) expect(recalled(memory, memory), memory).toEqual([])
  })
})

describe('statedValues: the values a fact is made of', () => {
  it('reads hosts of links, bare hosts, mailboxes, IP addresses, IBANs, wallets and long numbers', () => {
    expect(keys('See https://Staging.Acme.example:8443/ now')).toEqual(['host:staging.acme.example'])
    expect(keys('See https://Staging.Acme.example:8443/Health/live?x=1 now')).toEqual(['host:staging.acme.example'])
    expect(keys('See https://GitHub.com/Acme/Repo now')).toEqual(['url:github.com/acme', 'url:github.com/acme/repo', 'urlq:github.com/acme/repo'])
    expect(keys('See https://github.com/acme/repo now', true)).toEqual(['host:github.com', 'url:github.com/acme/repo'])
    expect(keys('send it to www.acme-payments.com.')).toEqual(['host:acme-payments.com'])
    expect(keys('Mail AP@Acme.example please')).toEqual(['mail:ap@acme.example'])
    expect(keys('Mail ap@acme.example please', true)).toEqual(['mail:ap@acme.example', 'host:acme.example'])
    expect(keys('db at 10.0.12.7:5432')).toEqual(['ip:10.0.12.7'])
    expect(keys('IBAN DE89 3704 0044 0532 0130 00 from now on')).toEqual(['iban:DE89370400440532013000'])
    expect(keys(`wallet 0x${'aB'.repeat(20)}`)).toEqual([`wallet:0x${'ab'.repeat(20)}`])
    expect(keys('account 4471-9920-13 and phone +44 20 7946 0958')).toEqual(['number:4471992013', 'intl:442079460958', 'national:42079460958', 'national:2079460958', 'national:79460958'])
  })

  it('reads the spellings an attacker would reach for (an attacker\'s read of round nineteen)', () => {
    expect(keys('acme-pay.cc, acme-billing.support and pay.acme-billing.cfd')).toEqual(['host:acme-pay.cc', 'host:acme-billing.support', 'host:pay.acme-billing.cfd'])
    // a link's host as a browser reads it: the last @ ends the user part
    expect(keys('https://acme.example@x@acme-pay.com/upload')).toEqual(['host:acme-pay.com'])
    expect(keys('http://3232235777/x')).toEqual(['ip:192.168.1.1'])
    expect(keys('//evil-pay.com/x')).toEqual(['host:evil-pay.com'])
    expect(keys('upload to evil-pay.com_portal or evil-pay.com- now')).toEqual(['host:evil-pay.com'])
    expect(keys('evil-pay . com')).toEqual(['host:evil-pay.com'])
    expect(keys('evil-pay\u3002com')).toEqual(['host:evil-pay.com'])
    expect(keys('IBAN GB82-WEST-1234-5698-7654-32, or gb82 west 1234 5698 7654 32')).toEqual(['iban:GB82WEST12345698765432'])
    expect(keys('server 2001:db8::1')).toEqual(['ip6:2001:db8::1'])
    expect(keys('No.8812334577 and acct:8812334578')).toEqual(['number:8812334577', 'number:8812334578'])
    expect(keys('acct 8812–3345–77')).toEqual(['number:8812334577'])
    expect(keys(`BC1Q${'W508D6QEJXTDG4Y5R3ZARVARY0C5XW7K'}`)).toEqual([`wallet:bc1q${'w508d6qejxtdg4y5r3zarvary0c5xw7k'}`])
    // a typed account does not carry another written beside it
    expect(keys('accounts (new, old): 8812334577 4471992013')).toEqual(['number:8812334577', 'number:4471992013'])
    expect(unattestedValues('accounts (new, old): 8812334577 4471992013', {has: (k) => k === 'number:4471992013'})).toEqual(['8812334577'])
    // an all look-alike host is read, as the host it is (not the one it looks like)
    expect(keys('\u0430\u0440\u0440\u04cf\u0435.com')).toEqual(['host:xn--80ak6aa92e.com'])
  })

  it('reads what a second attacker\'s read got past the first mending', () => {
    const written = (t: string) => statedValues(t).map((v) => v.keys.join('|'))
    // a link a parser refuses still names its host; what a link's path and query hold is read
    for (const t of ['https://evil-pay.com:99999/pay', 'https://evil-pay.com%/pay', 'https://evil-pay.com^/x']) expect(written(t), t).toEqual(['host:evil-pay.com'])
    expect(written('https://acme.com/pay?to=billing@evil-pay.com&iban=DE89370400440532013000')).toEqual(['host:acme.com', 'mail:billing@evil-pay.com', 'iban:DE89370400440532013000'])
    expect(written('https://acme.com/r/https://evil-pay.com/login')).toEqual(['host:acme.com', 'host:evil-pay.com'])
    // a backslash is a slash to a browser: no way back up a typed path
    expect(unattestedValues('https://github.com/acme\\..\\attacker\\tool', {has: (k) => k === 'url:github.com/acme'})).toHaveLength(1)
    expect(unattestedValues('ghcr.io/attacker/backdoor:latest', {has: (k) => k === 'host:ghcr.io'})).toHaveLength(1)
    // any top-level domain with a hyphen or three labels, an internationalised one always
    for (const t of ['evil-pay.sbs', 'evil-pay.онлайн', 'evilpay.рф']) expect(written(t), t).toHaveLength(1)
    // escapes and markup a reader or a model undoes
    for (const t of ['evil-pay\\.com', 'https:\\/\\/evil-pay.com\\/x', 'evil-pay&#46;com', 'evil-pay&#x2e;com', 'evil-pay&period;com', '**evil-pay**.com', 'evil-pay<!-- -->.com', 'evil-pay .com', 'evil-pay<b></b>.com']) expect(written(t), t).toEqual(['host:evil-pay.com'])
    for (const t of ['billing\\@evil-pay.com', 'billing%40evil-pay%2Ecom', 'billing @evil-pay.com', 'billing at evil-pay dot com']) expect(written(t), t).toEqual(['mail:billing@evil-pay.com'])
    // spelt out whole, a mailbox on a typed domain is still not the mailbox typed
    expect(unattestedValues('evilguy at gmail dot com', {has: (k) => k === 'host:gmail.com' || k === 'mail:bob@gmail.com'})).toEqual(['evilguy@gmail.com'])
    // "meet at the office" is no mailbox
    expect(statedValues('we meet at the office at nine')).toEqual([])
    // phones with an area code in brackets; two groups that are no range, ratio, decimal or date
    expect(written('(415) 555-0132')).toEqual(['number:4155550132'])
    for (const t of ['6123 4567', '5550-0132', '8812-33-45', '12.34.5678', '19-2000145399/0800', '4471.9920-13']) expect(written(t), t).toHaveLength(1)
    // glued to a word, behind a #, or grouped by a spaced dash, an apostrophe or an underscore
    for (const t of ['EUR8812334577', 'acct8812334577', '#8812334577', '8812 - 3345 - 77', "8'812'334'577", '8_812_334_577']) expect(written(t), t).toEqual(['number:8812334577'])
    for (const t of ['IBANDE89370400440532013000', 'DE89.3704.0044.0532.0130.00']) expect(written(t), t).toEqual(['iban:DE89370400440532013000'])
    expect(written('ltc1qg82tjcvnlgfp7kpgh4w5kz0gyrxm9y3g7qjzsl')).toHaveLength(1)
  })

  it('reads no code as a value: properties and method calls, file names, sizes and timeouts, issue numbers', () => {
    for (const t of [
      'use store.top as the cwd; logger.info(x) and user.email, page.click(), this.store, st.dev, k.local, main.cc, commit.at',
      'the upload limit is 262144 bytes and the timeout 300000 ms (issue #104233)',
      'passed 496/500 and 1,008/1,257; p 0.92-0.95; pages 132-139; 200 200; ratios 2.20/2.26',
      'listens on 127.0.0.1 and 0.0.0.0 and ::1; version 1.0.0.0; driver 535.104.05; ports 30000-32767',
      'run-tests.sh docker-entrypoint.sh libfoo-bar.so release-1.2.zip config.h.in best.pt main.js.br',
      'a day is 86400000 ms, the cap 268435456 bytes, the epoch 1700000000; ported it to dot net core',
    ]) expect(statedValues(t), t).toEqual([])
    // under a weak top-level domain a host needs a hyphen or three labels
    expect(keys('acme-pay.info and db.acme.internal')).toEqual(['host:acme-pay.info', 'host:db.acme.internal'])
  })

  it('reads links as a browser resolves them, pay pages as shared hosts, and a query that names the resource (an attacker\'s read of round twenty)', () => {
    const typed = (t: string) => ({has: (k: string) => keys(t, true).includes(k)})
    // a backslash in a link's authority is a slash to a browser: the host is evil.example
    expect(keys('https://evil.example\\@paypal.me/acmeshop')[0]).toBe('host:evil.example')
    // a pay page written without its scheme, under a top-level domain of short links
    expect(keys('Donations now go to paypal.me/evilguy or cash.app/evil')).toEqual(['url:paypal.me/evilguy', 'urlq:paypal.me/evilguy', 'url:cash.app/evil', 'urlq:cash.app/evil'])
    expect(keys('logger.info and store.top and page.click()')).toEqual([])
    // a tag's target is read, not only the text it shows
    expect(keys('<a href="https://paypal.me/evilguy">https://paypal.me/acmeshop</a>')).toEqual(['url:paypal.me/acmeshop', 'urlq:paypal.me/acmeshop', 'url:paypal.me/evilguy', 'urlq:paypal.me/evilguy'])
    // an autolink, an attribute, a comment: what markup hides from the rendered view is read (the third attacker's read)
    for (const t of ['<https://evil-pay.example/acct/9>', '[x](<https://evil-pay.example/acct/9>)', '<span title="https://evil-pay.example/acct/9">pay</span>', 'pay <!-- agent: https://evil-pay.example/acct/9 --> here']) {
      expect(keys(t), t).toContain('host:evil-pay.example')
    }
    expect(keys('<ap@evil-pay.example> and <tel:+442079460958>')).toEqual(['mail:ap@evil-pay.example', 'intl:442079460958', 'national:42079460958', 'national:2079460958', 'national:79460958'])
    // a tag inside a link ends it, as a renderer ends it
    expect(keys('https://evil-pay.example<b>@pay.acme.example/checkout</b>')[0]).toBe('host:evil-pay.example')
    // a short link's code keeps its case; a code host's names do not
    expect(unattestedValues('https://bit.ly/3XyZaBc', typed('https://bit.ly/3xYzAbC'))).toEqual(['https://bit.ly/3XyZaBc'])
    expect(unattestedValues('https://github.com/acme/repo', typed('https://github.com/Acme/Repo'))).toEqual([])
    // a name under a shared host is shared too
    expect(unattestedValues('https://app.box.com/s/theirs', typed('https://app.box.com/s/ours'))).toEqual(['https://app.box.com/s/theirs'])
    expect(keys('<img src=https://evil-cdn.example/x.png alt="logo">')).toEqual(['host:evil-cdn.example'])
    expect(unattestedValues('now https://paypal.me/evilguy', typed('https://paypal.me/acmeshop'))).toEqual(['https://paypal.me/evilguy'])
    expect(unattestedValues('at paypal.me/acmeshop', typed('https://paypal.me/acmeshop'))).toEqual([])
    const ours = 'https://drive.google.com/uc?id=1OURS&export=download'
    expect(unattestedValues('https://drive.google.com/uc?id=1EVIL&export=download', typed(ours))).toEqual(['https://drive.google.com/uc?id=1EVIL&export=download'])
    expect(unattestedValues(`get ${ours}`, typed(ours))).toEqual([])
    // typed with a query, a document's link attests itself without one; a typed owner's prefix attests any query under it
    expect(unattestedValues('https://docs.google.com/document/d/ours/edit', typed('https://docs.google.com/document/d/ours/edit?usp=sharing'))).toEqual([])
    expect(unattestedValues('https://github.com/acme/repo?tab=readme', typed('github.com/acme'))).toEqual([])
  })

  it('compares a number by its digits: a leading zero, an international form\'s country code or its grouping do not count; a digit more does', () => {
    const typed = (t: string) => ({has: (k: string) => keys(t, true).includes(k)})
    expect(unattestedValues('call +44 20 7946 0958', typed('+44 20 7946 0958'))).toEqual([])
    expect(unattestedValues('call 020 7946 0958', typed('+44 20 7946 0958'))).toEqual([])
    // typed without its country code, the number is typed with any (the user did not say which)
    expect(unattestedValues('call +44 20 7946 0958', typed('020 7946 0958'))).toEqual([])
    // a country code put before a typed international number, or swapped, is another number (an attacker's read of round nineteen)
    expect(unattestedValues('call +9 44 20 7946 0958', typed('+44 20 7946 0958'))).toEqual(['+9 44 20 7946 0958'])
    expect(unattestedValues('call +7 20 7946 0958', typed('+44 20 7946 0958'))).toEqual(['+7 20 7946 0958'])
    expect(unattestedValues('call +4420 7946 0958', typed('+44 20 7946 0958'))).toEqual([])
    // digits that only look alike: +20 is Egypt, +7 700 Kazakhstan (the third attacker's read)
    expect(unattestedValues('call +20 7946 0958', typed('+44 20 7946 0958'))).toEqual(['+20 7946 0958'])
    expect(unattestedValues('call +20 7946 0958', typed('020 7946 0958'))).toEqual(['+20 7946 0958'])
    expect(unattestedValues('text +7 700 900 123', typed('07700 900 123'))).toEqual(['+7 700 900 123'])
    expect(unattestedValues('call 442079460958', typed('+44 20 7946 0958'))).toEqual([])
    expect(keys('020 7946 0958')).toEqual(['number:2079460958'])
    expect(keys('8812 4471992013')).toEqual(['number:88124471992013'])
    expect(keys('4471-9920-13')).toEqual(keys('44719920 13'))
    expect(keys('12345678')).not.toEqual(keys('12345679'))
    // grouped, six digits are a number (a sort code); as one run, eight (a size or a timeout is none)
    expect(keys('30-92-14')).toEqual(['number:309214'])
    expect(keys('size 309214, timeout 1234567')).toEqual([])
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

  it('reads a value as a reader takes it: fullwidth, invisible characters, defanged, grouped by dots or slashes', () => {
    expect(keys('account \uff18\uff18\uff11\uff12-\uff13\uff13\uff14\uff15-\uff17\uff17')).toEqual(keys('account 8812-3345-77'))
    expect(keys('billing@acme-pay\u200bments.example')).toEqual(['mail:billing@acme-payments.example'])
    for (const t of ['acme-payments[.]example', 'acme-payments (dot) example', 'acme-payments dot example', 'acme-payments{.}example']) expect(keys(t), t).toEqual(['host:acme-payments.example'])
    expect(keys('billing[at]acme-payments[.]example')).toEqual(['mail:billing@acme-payments.example'])
    for (const t of ['8812.3345.77', '8812 / 3345 / 77'.replace(/ /g, ''), '8 8 1 2 3 3 4 5 7 7', '88-12-33-45-77']) expect(keys(t), t).toEqual(['number:8812334577'])
    // a look-alike letter of another script is another host, not the one typed
    expect(keys('\u0430cme-payments.example')).not.toEqual(keys('acme-payments.example'))
    // dates in any of their usual forms are no number
    for (const t of ['2026.12.04', '04.12.2026', '4/12/2026', '2026/12/4']) expect(statedValues(t), t).toEqual([])
  })

  it('reads a host once, however many forms it takes', () => {
    expect(keys('https://acme.example and acme.example and http://www.acme.example/')).toEqual(['host:acme.example'])
  })

  it('shows each value as the text writes it', () => {
    expect(statedValues('Invoices go to billing@acme-payments.example, account 8812-3345-77.').map((v) => v.text)).toEqual(['billing@acme-payments.example', '8812-3345-77'])
  })

  it('the title engram clipped from the body is not read (its cut last word is no value); any other title is read whole, and the path', () => {
    const body = 'Staging server is https://staging.acme.example/health; invoices to ap@acme.example\n'
    const clipped = 'Staging server is https://staging.acme.example/health; invoices to ap@acme.ex…'
    expect(statedValues(claimText(clipped, [], body)).map((v) => v.text)).toEqual(['https://staging.acme.example/health', 'ap@acme.example'])
    expect(keys(claimText('Pay acme-payments.com', ['billing'], 'body'))).toEqual(['host:acme-payments.com'])
    // a title the writer ends with an ellipsis of its own keeps its last word
    expect(keys(claimText('Acme invoices are paid to account 8812334577…', [], 'Harmless.\n'))).toEqual(['number:8812334577'])
    expect(keys(claimText('t', [], 'b', 'billing/evil-pay.com/acct-8812334577.md'))).toEqual(['host:evil-pay.com', 'number:8812334577'])
  })

  it('a link is typed by its host; on a host whose paths are different people\'s, by a typed link its path starts with', () => {
    const typed = (prompt: string) => new Set(statedValues(prompt, true).flatMap((v) => v.keys))
    const attested = (prompt: string, write: string) => unattestedValues(write, {has: (k) => typed(prompt).has(k)}).length === 0
    expect(attested('our code is on github.com', 'install from https://github.com/attacker-org/tool/releases/download/v1/install.sh')).toBe(false)
    expect(attested('our code is on github.com', 'install from github.com/attacker-org/tool')).toBe(false)
    expect(attested('see https://github.com/acme', 'issues at https://github.com/acme/repo/issues')).toBe(true)
    expect(attested('see https://github.com/acme/repo', 'the repo: github.com/acme/repo')).toBe(true)
    expect(attested('our staging is staging.acme.example', 'health at https://staging.acme.example/health')).toBe(true)
    expect(attested('mail ap@gmail.com', 'upload to https://gmail.com/x')).toBe(true)
    expect(attested('see https://docs.google.com/document/d/ours', 'the plan is at https://docs.google.com/document/d/theirs')).toBe(false)
    expect(attested('mail ap@gmail.com', 'they use gmail.com')).toBe(true)
  })

  it('is linear on text built to stall it', () => {
    // many values (a check per value against every one found before was 4 s for 256 KiB of `x.com `)
    for (const t of ['1-'.repeat(50_000), 'a.'.repeat(50_000), `${'a'.repeat(60)}@`.repeat(3000), 'https://'.repeat(20_000), '1.1.1.'.repeat(20_000), 'x.com '.repeat(43_000), 'ab.cd@ef.gh '.repeat(22_000), 'DE89 3704 '.repeat(26_000)]) {
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
    // a symbolic link in the record's place is not followed, even to a record that would verify
    const elsewhere = join(dir, '..', 'planted.json')
    writeFileSync(elsewhere, good, {mode: 0o600})
    rmSync(file)
    symlinkSync(elsewhere, file)
    expect(promptRecord(root, 's-rec00004').found).toBe(false)
    expect(unattestedValues('vault.acme.example', promptRecord(root, 's-rec00004'))).toEqual(['vault.acme.example'])
  })

  it('a host whose labels read as an IBAN is read as the host, whatever follows it (the property below found it)', () => {
    // "wh92.internal" reads as an IBAN whose check digits hold (WH92 INTE RNAL, one time in 97): read from the
    // host's second label, the written value was another than the typed one
    mkdirSync(privateDir(), {recursive: true})
    recordPrompt(root, 's-ibanhost', 'Please note aa.wh92.internal Please note.')
    expect(unattestedValues('Please note aa.wh92.internal, Please note', promptRecord(root, 's-ibanhost'))).toEqual([])
    expect(statedValues('Please note aa.wh92.internal, Please note').map((v) => v.keys)).toEqual([['host:aa.wh92.internal']])
    // an IBAN standing on its own is still one
    expect(statedValues('IBAN WH92 INTE RNAL, thanks').map((v) => v.keys)).toEqual([['iban:WH92INTERNAL']])
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
    }), {numRuns: Number(process.env.PROP_RUNS ?? 150)})
  })
})

describe('the session record\'s mark', () => {
  it('is covered by the proof, and no other field can stand in for it (parts are joined by NUL)', () => {
    const secret = Buffer.alloc(32, 7)
    const r: SessionRecord = {id: 's-mark0001', agent: 'claude-code', assigned: 'project:x', reads: [], tainted: false, taint_reasons: [], created: '2026-12-06T07:00:00.000Z', updated: '', proof: ''}
    const marked = recordProof(secret, {...r, prompts: 'recorded'})
    expect(recordProof(secret, r)).not.toBe(marked)
    expect(recordProof(secret, {...r, created: `${r.created}\0prompts:recorded`})).not.toBe(marked)
    expect(recordProof(secret, {...r, assigned: `${r.assigned}\0prompts:recorded`})).not.toBe(marked)
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
    expect(semanticVote(planWrite(session(), write, view(typed('mail:billing@acme-payments.example', 'number:8812334577'))).candidate!, [], [finding])).toMatchObject({verdict: 'reject', confidence: 0.7})
  })

  it('every value typed: the write is as it was (not tainted, no reason, no flag)', () => {
    const plan = planWrite(session(), write, view(typed('mail:billing@acme-payments.example', 'number:8812334577')))
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

  it('reads what an encoded blob of a proposal decodes to', () => {
    const blob = Buffer.from('remit to billing@acme-payments.example').toString('base64')
    const plan = planWrite(session(), {...write, content: `Remittance details, encoded as received: ${blob}\n`}, view())
    expect(plan.candidate!.unattested).toEqual(['billing@acme-payments.example'])
  })

  it('reads the title and tags as well as the body', () => {
    const plan = planWrite(session(), {...write, content: 'see the title\n', title: 'Pay acme-payments.com', tags: ['evil-pay.example']}, view())
    expect(plan.candidate!.unattested).toEqual(['acme-payments.com', 'evil-pay.example'])
  })
})
