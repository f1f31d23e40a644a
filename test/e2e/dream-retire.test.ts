/**
 * Memories that go out of date, end to end: `engram write --expires` (a date or a time to
 * live, validated, shown at review, covered by the digest, kept through accept), and the
 * dream job's retire proposals for a memory past its expiry or — with the signed policy's
 * `dream.retire_unconfirmed_days` — not confirmed for that long (neither accepted again nor
 * said again by a session). Time passing is the CLI run with a later clock
 * (test/fixtures/later-clock.mjs); everything else is real.
 */
import {mkdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath, pathToFileURL} from 'node:url'
import {beforeAll, describe, expect, it, vi} from 'vitest'

import {Store, curate, newStore, reviewedDigest, startSession, tempDir, trustDreamer, write} from '../../conformance/harness.js'

vi.setConfig({testTimeout: 300_000, hookTimeout: 300_000})

const DAY = 86_400_000
const day = (offset: number) => new Date(Date.now() + offset * DAY).toISOString().slice(0, 10)
const CLOCK = pathToFileURL(fileURLToPath(new URL('../fixtures/later-clock.mjs', import.meta.url))).href
/** the environment of a CLI run `days` days from now */
const later = (days: number) => ({NODE_OPTIONS: `--import=${CLOCK}`, LATER_CLOCK_DAYS: String(days)})

describe('memories that expire or go unconfirmed are proposed for retirement', () => {
  let store: Store
  let session: string
  const expiry = day(200)
  beforeAll(() => {
    store = newStore()
    session = startSession(store, 'tenant:acme', {agent: 'agent-a'})
    curate(store, session, 'tenant:acme', 'notes.md', 'Acme deploys to production on Tuesday mornings only.\n')
    curate(store, session, 'tenant:acme', 'legacy.md', 'Acme keeps its old invoices in the basement archive room.\n')
    trustDreamer(store)
  })

  it('write --expires: a bad or past date exits 2 and writes nothing; a good one is shown at review and kept through accept', () => {
    const state = store.state()
    // (the unit tests of the plan try more shapes: test/unit/write-plan.test.ts)
    for (const bad of ['2027-02-30', day(0)]) {
      const r = write(store, session, 'tenant:acme', 'sale.md', 'The Acme spring sale gives twenty percent off.\n', ['--expires', bad])
      expect(r.code, `${bad}: ${r.stdout}${r.stderr}`).toBe(2)
      expect(r.json.error.message).toMatch(/--expires/)
      expect(r.stderr).not.toMatch(/\n\s+at /)
    }
    expect(store.state()).toBe(state)

    const w = write(store, session, 'tenant:acme', 'sale.md', 'The Acme spring sale gives twenty percent off.\n', ['--expires', expiry])
    expect(w.json).toMatchObject({status: 'pending'})
    const shown = store.run(['review', 'show', w.json.proposal]).stdout
    expect(shown).toContain(`expires: "${expiry}"`)
    const digest = /digest ([0-9a-f]{64})/.exec(shown)![1]
    // (an expiry edited after review is refused by the digest: conformance/c28-dreaming.test.ts)
    store.ok(['review', 'accept', w.json.proposal, '--digest', digest, '--key', 'owner'])
    expect(store.read('tenant/acme/sale.md')).toContain(`expires: "${expiry}"`)
  })

  it('dream retires what expired; with dream.retire_unconfirmed_days, also what no accept or session confirmed for that long; each once', () => {
    // 230 days on: sale.md has expired; the unconfirmed period is not set, so nothing else is retired
    const first = store.ok(['dream', '--scope', 'tenant:acme', '--since', day(200), '--key', 'nightly'], {env: later(230)})
    const retired = first.items.filter((i: any) => i.kind === 'retire')
    expect(retired.map((i: any) => [i.path, i.status, i.reason])).toEqual([['sale.md', 'pending', `expired on ${expiry}`]])
    expect(retired[0].evidence[0].source).toBe(`curated tenant:acme/sale.md expires ${expiry}`)

    store.write('.engram/config.yml', `${store.read('.engram/config.yml')}dream:\n  retire_unconfirmed_days: 180\n`)
    store.ok(['config', 'sign', '--key', 'owner', '--digest', store.ok(['config', 'sign']).digest])
    // a session of the period says notes.md again: that confirms it; nothing says legacy.md
    const dir = tempDir('engram-transcripts-')
    mkdirSync(join(dir, 'p'))
    writeFileSync(join(dir, 'p', 'recent.jsonl'), `${JSON.stringify({type: 'assistant', sessionId: 'a0000000-0000-4000-8000-000000000001', uuid: 'u1', timestamp: new Date(Date.now() + 229 * DAY).toISOString(), message: {role: 'assistant', content: [{type: 'text', text: 'Noted. Acme deploys to production on Tuesday mornings only.'}]}})}\n`)
    const dream = ['dream', '--scope', 'tenant:acme', '--transcripts', dir, '--since', day(200), '--key', 'nightly']
    const second = store.ok(dream, {env: later(230)})
    const byPath = Object.fromEntries(second.items.filter((i: any) => i.kind === 'retire').map((i: any) => [i.path, i]))
    expect(Object.keys(byPath).sort()).toEqual(['legacy.md', 'sale.md'])
    expect(byPath['sale.md'].status).toBe('duplicate') // already queued
    expect(byPath['legacy.md']).toMatchObject({status: 'pending', reason: expect.stringMatching(/^not confirmed for 230 days \(since \d{4}-\d{2}-\d{2}; dream.retire_unconfirmed_days is 180\)$/)})
    expect(byPath['legacy.md'].evidence[0].source).toMatch(/^curated tenant:acme\/legacy\.md last confirmed \S+ \(its last accepted version, commit [0-9a-f]{7,}\)$/)
    const shown = store.run(['review', 'show', byPath['legacy.md'].proposal]).stdout
    expect(shown).toMatch(/signed by dreamer key nightly/)
    expect(shown).toMatch(/evidence: .*last confirmed .*its last accepted version/)
    expect(shown).toContain('deletes the file')

    // rejected ("keep it"): not proposed again, a day later, for the same confirmation
    store.ok(['review', 'reject', byPath['legacy.md'].proposal, '--reason', 'still true', '--key', 'owner'])
    expect(store.ok(dream, {env: later(231)}).items.find((i: any) => i.path === 'legacy.md').status).toBe('decided')

    // accept the expired one's retirement: the file is gone (with the manifest re-signed, as every delete: C28)
    const sale = retired[0].proposal
    store.ok(['review', 'accept', sale, '--digest', reviewedDigest(store, sale), '--key', 'owner'])
    expect(store.git('ls-files', 'tenant/acme/sale.md').trim()).toBe('')
    expect(store.git('show', '--name-status', '--format=', 'HEAD')).toMatch(/M\t\.engram\/manifests\/tenant_acme\.json/)
  })
})
