/**
 * R22: a session is proven, never claimed. A record engram did not commit is no session;
 * ENGRAM_SESSION set (even empty) is the session, which no flag switches and which never
 * becomes the owner's view or mints another; a session token of another session proves
 * nothing.
 */
import {readFileSync, writeFileSync} from 'node:fs'

import {beforeAll, describe, expect, it} from 'vitest'

import {Store, curate, newStore, startSession, uniqueWord} from './harness.js'

describe('C22 — a session is proven, never claimed (R22)', () => {
  let store: Store
  let acme: string
  let globex: string
  const word = uniqueWord('zorblat')

  beforeAll(() => {
    store = newStore()
    acme = startSession(store, 'tenant:acme', {agent: 'agent-acme'})
    globex = startSession(store, 'tenant:globex', {agent: 'agent-globex'})
    curate(store, globex, 'tenant:globex', 'plan.md', `Globex codename ${word} launches in May.\n`)
  })

  /** A record the agent writes itself: a copy of a real one under a new id, assigned to globex. */
  function plant(id: string): string {
    const rel = `.engram/sessions/${id}.json`
    const real = JSON.parse(store.read(`.engram/sessions/${acme}.json`))
    writeFileSync(store.path(rel), `${JSON.stringify({...real, id, assigned: 'tenant:globex', tainted: false, taint_reasons: []}, null, 2)}\n`)
    return rel
  }

  function refusedWithoutText(session: string | undefined, env: NodeJS.ProcessEnv = {}): void {
    for (const args of [['read', 'plan.md', '--scope', 'tenant:globex'], ['search', word], ['list'], ['context'], ['status']]) {
      const r = store.run([...args, '--json'], {session, env})
      expect(r.code, `${args.join(' ')}: ${r.stdout}${r.stderr}`).toBeGreaterThanOrEqual(2)
      expect(r.stdout + r.stderr).not.toContain(word)
    }
  }

  it('a session record that was never committed is no session', () => {
    const id = 's-planted01'
    const rel = plant(id)
    refusedWithoutText(id)
    const r = store.run(['read', 'plan.md', '--scope', 'tenant:globex', '--json'], {session: id})
    expect(r.json.error.message).toMatch(/not committed|not started by engram/)
    expect(store.git('status', '--porcelain', '--', rel)).toMatch(/^\?\?/)
  })

  it('a planted record committed with git, even carrying a real record\'s proof, is no session', () => {
    const id = 's-planted02'
    plant(id)
    store.gitCommitAll('agent commits its own session record')
    refusedWithoutText(id)
    const r = store.run(['status', '--json'], {session: id})
    expect(r.code).toBe(3)
    expect(r.json.error.message).toMatch(/not started by engram/)
  })

  it('an empty ENGRAM_SESSION is a broken session: refused, never the owner view, never a new session', () => {
    const before = store.state()
    refusedWithoutText(undefined, {ENGRAM_SESSION: ''})
    const start = store.run(['session', 'start', '--agent', 'x', '--assigned', 'tenant:globex', '--json'], {env: {ENGRAM_SESSION: ''}})
    expect(start.code).toBe(3)
    expect(start.json.error.message).toMatch(/inside an agent session/)
    const accept = store.run(['review', 'accept', 'p-0000', '--digest', '0'.repeat(16), '--json'], {env: {ENGRAM_SESSION: ''}})
    expect(accept.code).toBe(3)
    expect(store.state()).toBe(before)
    // whitespace is no id either
    expect(store.run(['status', '--json'], {env: {ENGRAM_SESSION: ' '}}).code).toBe(3)
  })

  it('no flag switches a process inside a session to another session', () => {
    const r = store.run(['read', 'plan.md', '--scope', 'tenant:globex', '--session', globex, '--json'], {session: acme})
    expect(r.code).toBe(3)
    expect(r.stdout + r.stderr).not.toContain(word)
    for (const args of [['search', word, '--session', globex], ['list', '--session', globex], ['history', 'plan.md', '--scope', 'tenant:globex', '--session', globex], ['review', 'list', '--session', globex]]) {
      const x = store.run([...args, '--json'], {session: acme})
      expect(x.code, args.join(' ')).toBe(3)
      expect(x.stdout + x.stderr).not.toContain(word)
    }
    // the same id as ENGRAM_SESSION is no switch
    expect(store.run(['list', '--session', acme, '--json'], {session: acme}).code).toBe(0)
  })

  it('a session token of another session, or a made-up one, is refused', () => {
    const token = store.ok(['session', 'start', '--agent', 'agent-t', '--assigned', 'tenant:acme']).token as string
    expect(token).toMatch(/^[0-9a-f]{64}$/)
    for (const bad of [token, 'f'.repeat(64), '']) {
      const r = store.run(['search', word, '--json'], {session: globex, env: {ENGRAM_SESSION_TOKEN: bad}})
      expect(r.code).toBe(3)
      expect(r.stdout + r.stderr).not.toContain(word)
    }
  })

  it("edits of a session's own record (a new assignment, committed with git) change nothing it may read", () => {
    const rel = `.engram/sessions/${acme}.json`
    const text = readFileSync(store.path(rel), 'utf8')
    store.write(rel, text.replace('"tenant:acme"', '"tenant:globex"'))
    store.gitCommitAll('agent reassigns itself')
    const r = store.run(['read', 'plan.md', '--scope', 'tenant:globex', '--json'], {session: acme})
    expect(r.code).toBe(3)
    expect(r.stdout + r.stderr).not.toContain(word)
  })

  it('a taint hidden behind a merge (a side branch from before it, merged taking its record) still counts', () => {
    const s = startSession(store, 'tenant:acme', {agent: 'agent-merge'})
    const rel = `.engram/sessions/${s}.json`
    const before = store.git('rev-parse', 'HEAD').trim()
    const clean = store.read(rel)
    expect(store.run(['session', 'taint', s, '--reason', 'read a web page', '--json']).code).toBe(0)
    // warm every cache engram keeps of this record
    expect(store.run(['session', 'show', s, '--json']).json.tainted).toBe(true)
    // the agent: a branch from before the taint, the untainted record on it, merged back taking that side
    const main = store.git('rev-parse', '--abbrev-ref', 'HEAD').trim()
    store.git('checkout', '-q', '-b', 'side', before)
    store.write(rel, clean.replace(/\n$/, '\n\n'))
    store.gitCommitAll('tidy the record')
    store.git('checkout', '-q', main)
    store.git('merge', '-q', '--no-ff', '--no-commit', '-s', 'ours', 'side')
    store.git('checkout', 'side', '--', rel)
    store.git('commit', '-q', '-m', 'merge side')
    expect(JSON.parse(store.read(rel)).tainted).toBe(false)
    const shown = store.run(['session', 'show', s, '--json'])
    expect(shown.json.tainted, shown.stdout).toBe(true)
    expect(shown.json.taint_reasons.join(' ')).toContain('read a web page')
  })
})
