import {describe, expect, it} from 'vitest'

import {curate, newStore, startSession, write} from './harness.js'

/**
 * STANDARD §5: every list command prints one JSON envelope, `{items, total, …}`, and
 * `verify` keeps it when it fails (adding `error`) and prints its verdict on stdout.
 * Breaks: a list under a key of its own, a `total` that counts the cut list, a failing
 * verify whose problems move into `error.data`, an "ok" only on stderr.
 */
describe('S5 — one JSON envelope for every list (STANDARD §5)', () => {
  it('list, history, queues, sessions, keys and verify: items and total; --limit cuts items only; verify fails in the same shape', () => {
    const store = newStore()
    const s = startSession(store, 'tenant:acme')
    curate(store, s, 'tenant:acme', 'terms.md', 'Acme pays net 30.\n')
    write(store, s, 'tenant:acme', 'a.md', 'Acme closes its books on Fridays.\n')
    write(store, s, 'tenant:acme', 'b.md', 'Acme ships from Rotterdam.\n')
    for (const args of [['list'], ['history', 'terms.md', '--scope', 'tenant:acme'], ['review', 'list'], ['pending', 'list'], ['quarantine', 'list'],
      ['pending', 'show', 'a.md', '--scope', 'tenant:acme'], ['session', 'list'], ['keys', 'list'], ['verify'], ['review', 'list', '--decided'], ['doctor', '--no-verify']]) {
      const r = store.ok(args)
      expect(Object.keys(r).slice(0, 2), args.join(' ')).toEqual(['items', 'total'])
      expect(Array.isArray(r.items), args.join(' ')).toBe(true)
      expect(r.total, args.join(' ')).toBe(r.items.length)
    }
    const cut = store.ok(['review', 'list', '--limit', '1'])
    expect(cut.items).toHaveLength(1)
    expect(cut.total).toBe(2)
    const passed = store.run(['verify'])
    expect(passed.stdout).toMatch(/^ok: 1 curated file\(s\) verified$/m)
    store.write('tenant/acme/terms.md', store.read('tenant/acme/terms.md').replace('net 30', 'net 90'))
    const failed = store.run(['verify', '--json'])
    expect(failed.code).toBe(7)
    expect(Object.keys(failed.json)).toEqual(['items', 'total', 'checked', 'error'])
    expect(failed.json.items.map((p: {kind: string}) => p.kind)).toEqual(['bad-signature'])
    expect(failed.json.error).toMatchObject({code: 'verification', exitCode: 7})
  })
})
