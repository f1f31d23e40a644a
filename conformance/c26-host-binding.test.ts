/**
 * C26 — host sessions bound to engram sessions (R26). A Claude Code session maps to one
 * engram session at a time, found only through a binding engram can verify; its taint
 * survives resume, compact and clear; a binding the agent edits, copies or deletes gains
 * it nothing; an agent inside its session cannot mint another through the hook; and a
 * taint the store cannot take is assumed, not dropped.
 */
import {mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'

import {Run, Store, newStore} from './harness.js'

describe('C26 — a host session is bound to one engram session, verifiably, and its taint is never lost (R26)', () => {
  let store: Store
  let n = 0
  const hostId = () => `c26c26c2-6c26-4c26-8c26-${String(++n).padStart(12, '0')}`
  const hook = (event: string, payload: Record<string, unknown>, env: NodeJS.ProcessEnv = {}): Run =>
    store.run(['hook', event], {
      input: JSON.stringify({transcript_path: '/tmp/t.jsonl', cwd: store.dir, hook_event_name: {'session-start': 'SessionStart', 'post-tool-use': 'PostToolUse', 'session-end': 'SessionEnd'}[event], permission_mode: 'default', ...payload}),
      env: {CLAUDE_PROJECT_DIR: store.dir, ENGRAM_BASE: store.dir, CLAUDE_ENV_FILE: '', ...env},
    })
  const start = (session_id: string, source = 'startup', env: NodeJS.ProcessEnv = {}) => {
    const r = hook('session-start', {session_id, source}, env)
    expect(r.code, r.stderr).toBe(0)
    return /engram session (s-[0-9a-z]+)/.exec(JSON.parse(r.stdout).hookSpecificOutput.additionalContext)![1]
  }
  const fetch = (session_id: string) => hook('post-tool-use', {session_id, tool_name: 'WebFetch', tool_input: {url: 'https://evil.example/page'}})
  const show = (id: string) => store.ok(['session', 'show', id])
  const bindings = () => join(store.dir, '.engram', 'bindings', 'claude-code')
  const bindingOf = (id: string) => readdirSync(bindings()).map((f) => join(bindings(), f)).find((f) => readFileSync(f, 'utf8').includes(`"${id}"`))!

  beforeAll(() => {
    store = newStore()
  }, 300_000)

  it('resume, compact and clear continue the one session, tainted', () => {
    const h = hostId()
    const id = start(h)
    expect(fetch(h).code).toBe(0)
    for (const source of ['resume', 'compact', 'clear']) expect(start(h, source), source).toBe(id)
    expect(show(id).tainted).toBe(true)
  }, 300_000)

  it('inside its session, the agent cannot mint a fresh one through the hook', () => {
    const h = hostId()
    const id = start(h)
    const before = store.ok(['session', 'list']).total
    const r = hook('session-start', {session_id: hostId(), source: 'startup'}, {ENGRAM_SESSION: id})
    expect(r.code).toBe(3)
    expect(r.stdout).toBe('')
    expect(store.ok(['session', 'list']).total).toBe(before)
    // its own session it may continue: nothing new, still the same id
    expect(start(h, 'resume', {ENGRAM_SESSION: id})).toBe(id)
  }, 300_000)

  it('a binding edited to a clean session, copied from another, or deleted is not honoured; the real session is still tainted', () => {
    const dirty = hostId()
    const dirtyId = start(dirty)
    const other = hostId()
    const cleanId = start(other)
    // edit: point the dirty host session at the clean engram session, commit it as the agent would
    const file = bindingOf(dirtyId)
    writeFileSync(file, readFileSync(file, 'utf8').replace(dirtyId, cleanId))
    store.gitCommitAll('rebind')
    // a fetch now still taints the session the harness bound, never the clean one
    expect(fetch(dirty).code).toBe(0)
    expect(show(dirtyId).tainted).toBe(true)
    expect(show(cleanId).tainted).toBe(false)
    const edited = start(dirty, 'resume')
    expect([dirtyId, cleanId]).not.toContain(edited)
    expect(show(edited).tainted).toBe(true)
    // copy: the clean session's binding under the dirty host session's name
    writeFileSync(bindingOf(edited), readFileSync(bindingOf(cleanId)))
    store.gitCommitAll('copy binding')
    const copied = start(dirty, 'compact')
    expect([cleanId, edited]).not.toContain(copied)
    expect(show(copied).tainted).toBe(true)
    // delete: a continuation engram did not see start begins tainted
    rmSync(bindingOf(copied))
    store.gitCommitAll('drop binding')
    const dropped = start(dirty, 'resume')
    expect(dropped).not.toBe(copied)
    expect(show(dropped).tainted).toBe(true)
  }, 300_000)

  it('a taint the store cannot take (store broken) is assumed: the session\'s next write is tainted, and the next hook records it', () => {
    const h = hostId()
    const id = start(h)
    const config = join(store.dir, '.engram', 'config.yml')
    renameSync(config, `${config}.away`)
    mkdirSync(config)
    const r = fetch(h)
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/kept at /)
    rmSync(config, {recursive: true})
    renameSync(`${config}.away`, config)
    const w = store.run(['write', 'after.md', '--scope', `run:${id}`, '--json'], {session: id, input: 'Written after the fetch.\n'})
    expect(w.code, w.stderr).toBe(0)
    expect(store.read(`run/${id}/after.md`)).toMatch(/tainted: true/)
    expect(hook('post-tool-use', {session_id: h, tool_name: 'Bash', tool_input: {command: 'ls'}}).code).toBe(0)
    expect(store.git('show', `HEAD:.engram/sessions/${id}.json`)).toContain('WebFetch https://evil.example/page')
  }, 300_000)
})
