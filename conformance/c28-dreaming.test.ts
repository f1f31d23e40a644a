/**
 * C28 — R28: deletions are reviewed changes, and the dream job proposes, never writes.
 *
 * 1. Deletes (`engram forget`, and the merges dreaming proposes): one reviewed change whose
 *    digest covers every file it removes; an entry edited after it was shown (another path
 *    added) is refused by digest; a path outside the proposal's scope cannot be named; an
 *    agent cannot delete by writing an empty body, nor forget in a scope it does not own.
 */
import {describe, expect, it, vi, beforeAll} from 'vitest'

import {Store, curate, newStore, startSession, write} from './harness.js'

vi.setConfig({testTimeout: 300_000, hookTimeout: 300_000})

describe('C28 — deletes are one reviewed change (R28)', () => {
  let store: Store
  let acme: string
  let globex: string
  beforeAll(() => {
    store = newStore()
    acme = startSession(store, 'tenant:acme', {agent: 'agent-a'})
    globex = startSession(store, 'tenant:globex', {agent: 'agent-b'})
    curate(store, acme, 'tenant:acme', 'billing.md', 'Acme renews in March.\n')
    curate(store, acme, 'tenant:acme', 'contact.md', 'Acme contact is Dana.\n')
    curate(store, globex, 'tenant:globex', 'plan.md', 'Globex is on the Gold plan.\n')
  })

  it('an agent proposes a deletion in its scope; review shows the removed text; accept removes file and manifest entry in one commit; restore undoes it', () => {
    const f = store.run(['forget', 'billing.md', '--scope', 'tenant:acme', '--reason', 'wrong: renewal moved', '--json'], {session: acme})
    expect(f.code, f.stderr).toBe(0)
    expect(f.json).toMatchObject({status: 'pending', scope: 'tenant:acme', path: 'billing.md'})
    const shown = store.run(['review', 'show', f.json.proposal])
    expect(shown.stdout).toContain('-Acme renews in March.')
    expect(shown.stdout).toContain('deletes the file')
    const j = store.ok(['review', 'show', f.json.proposal])
    expect(j).toMatchObject({operation: 'delete', kind: 'forget', recheck: []})
    const before = store.commitCount()
    store.ok(['review', 'accept', f.json.proposal, '--digest', j.digest])
    expect(store.commitCount()).toBe(before + 1)
    const changed = store.git('show', '--name-status', '--format=', 'HEAD').trim().split('\n').sort()
    expect(changed).toEqual([`D\t.engram/proposals/${f.json.proposal}.md`, 'D\ttenant/acme/billing.md', 'M\t.engram/manifests/tenant_acme.json'].sort())
    expect(store.read('.engram/manifests/tenant_acme.json')).not.toContain('billing.md')
    expect(store.ok(['verify']).items).toEqual([])
    // history keeps the deleted version, restore brings it back signed
    expect(store.git('show', 'HEAD~1:tenant/acme/billing.md')).toContain('Acme renews in March.')
    store.ok(['restore', 'billing.md', '--scope', 'tenant:acme', '--to', 'HEAD~1'])
    expect(store.ok(['read', 'billing.md', '--scope', 'tenant:acme']).body).toContain('Acme renews in March.')
  })

  it('a delete entry edited after it was shown (another path added) is refused by digest, nothing changed', () => {
    const f = store.ok(['forget', 'contact.md', '--scope', 'tenant:acme', '--reason', 'stale'], {session: acme})
    const digest = store.ok(['review', 'show', f.proposal]).digest
    const file = `.engram/proposals/${f.proposal}.md`
    const blob = store.git('hash-object', store.path('tenant/acme/billing.md')).trim()
    store.write(file, store.read(file).replace('\nauthor:', `\nremoves: [{"path":"billing.md","base":"${blob}"}]\nauthor:`))
    const state = store.state()
    const r = store.run(['review', 'accept', f.proposal, '--digest', digest, '--json'])
    expect(r.code).toBe(6)
    expect(store.state()).toBe(state)
    expect(store.read('tenant/acme/billing.md')).toContain('Acme')
    store.git('checkout', '--', file)
  })

  it('a delete naming a file of another scope cannot be made: the path is scope-relative and ".." is refused', () => {
    const f = store.ok(['forget', 'contact.md', '--scope', 'tenant:acme', '--reason', 'again'], {session: acme})
    const file = `.engram/proposals/${f.proposal}.md`
    const blob = store.git('hash-object', store.path('tenant/globex/plan.md')).trim()
    store.write(file, store.read(file).replace('\nauthor:', `\nremoves: [{"path":"../globex/plan.md","base":"${blob}"}]\nauthor:`))
    const shown = store.ok(['review', 'show', f.proposal])
    expect(JSON.stringify(shown.recheck)).toContain('leaves its scope folder')
    const state = store.state()
    const r = store.run(['review', 'accept', f.proposal, '--digest', shown.digest, '--json'])
    expect([2, 3]).toContain(r.code)
    expect(store.state()).toBe(state)
    expect(store.read('tenant/globex/plan.md')).toContain('Gold')
    // and forget itself: another tenant's path through "..", or another tenant's scope
    for (const args of [['../globex/plan.md', '--scope', 'tenant:acme'], ['plan.md', '--scope', 'tenant:globex'], ['plan.md', '--scope', 'org']]) {
      const x = store.run(['forget', ...args, '--reason', 'x', '--json'], {session: acme})
      expect([2, 3], x.stdout).toContain(x.code)
    }
    expect(store.read('tenant/globex/plan.md')).toContain('Gold')
    store.git('checkout', '--', file)
  })

  it('an agent cannot delete by writing an empty body, nor with --now', () => {
    const state = store.state()
    expect(write(store, acme, 'tenant:acme', 'contact.md', '').code).toBe(2)
    const now = store.run(['forget', 'contact.md', '--scope', 'tenant:acme', '--reason', 'x', '--now', '--json'], {session: acme})
    expect(now.code).toBe(3)
    expect(store.state()).toBe(state)
  })

  it('the owner proposes a signed deletion, or deletes at once with --now (signed manifest, committed)', () => {
    const f = store.ok(['forget', 'plan.md', '--scope', 'tenant:globex', '--reason', 'customer left'])
    expect(store.run(['review', 'show', f.proposal]).stdout).toMatch(/signed by owner key/)
    store.ok(['review', 'reject', f.proposal, '--reason', 'keep it'])
    const r = store.ok(['forget', 'plan.md', '--scope', 'tenant:globex', '--reason', 'customer left', '--now'])
    expect(r.status).toBe('deleted')
    expect(store.git('status', '--porcelain')).toBe('')
    expect(store.git('log', '-1', '--format=%B')).toContain('Engram-Operation: forget')
    expect(store.ok(['verify']).items).toEqual([])
  })
})
