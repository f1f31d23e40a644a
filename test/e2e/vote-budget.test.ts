import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {git, initWithSession, sandbox, signConfig} from '../helpers/cli.js'

// The vote under a time budget (src/core/write/vote/budget.ts, README "The write path"): a
// write of 8 KiB or more is voted on in a worker thread, and one whose vote runs past
// `vote.budget_ms` is stopped and quarantined. Through the built CLI, with a real store.
describe('the vote under a time budget', () => {
  const note = (n: number) => 'The staging database is backed up nightly at 02:00 UTC to the ops bucket. '.repeat(Math.ceil(n / 76)).slice(0, n)

  it('a large honest write is voted on in the worker and reaches review as a small one does', () => {
    const sb = sandbox()
    const s = initWithSession(sb)
    for (const [path, body] of [['small.md', note(2000)], ['large.md', note(40_000)]] as const) {
      const w = sb.run(['write', path, '--scope', 'tenant:acme', '--json'], {input: body, env: {ENGRAM_SESSION: s}})
      expect(w.code, w.stderr).toBe(0)
      expect(w.json.status).toBe('pending')
      // the same validators voted, in the worker as in the process
      expect(w.json.votes.map((v: {validator: string}) => v.validator).sort()).toEqual(['delivery', 'learned', 'provenance', 'semantic'])
      // and review recomputes its flags (in the worker for the large one): nothing missing, nothing unchecked
      const shown = sb.run(['review', 'show', w.json.proposal, '--json'])
      expect(shown.code, shown.stderr).toBe(0)
      expect(shown.json.flagsUnchecked).toBeNull()
      expect(shown.json.unrecordedFlags).toEqual([])
    }
  })

  it('past the signed budget a large write is refused, nothing written, and review says the flags are unchecked', () => {
    const sb = sandbox()
    const s = initWithSession(sb)
    // an entry written under the default budget…
    const held = sb.run(['write', 'held.md', '--scope', 'tenant:acme', '--json'], {input: note(40_000), env: {ENGRAM_SESSION: s}})
    expect(held.json.status, held.stdout + held.stderr).toBe('pending')
    // …then a budget no large text can meet
    signConfig(sb, 'version: 1\nvote:\n  budget_ms: 1\n')
    const head = git(sb.dir, 'rev-parse', 'HEAD')
    const started = Date.now()
    const w = sb.run(['write', 'large.md', '--scope', 'tenant:acme', '--json'], {input: note(40_000), env: {ENGRAM_SESSION: s}})
    expect(Date.now() - started).toBeLessThan(30_000)
    // its text could not be redacted in time: it cannot be kept even in quarantine
    expect(w.code, w.stdout + w.stderr).toBe(3)
    expect(w.json.error.message).toMatch(/could not be redacted and read within 1 ms of CPU time \(vote\.budget_ms\); nothing was written/)
    expect(git(sb.dir, 'rev-parse', 'HEAD')).toBe(head)
    expect(sb.run(['quarantine', 'list', '--json']).json.items).toEqual([])
    // bad input is still bad input, checked before any text is read: exit 2, its own message
    const badPath = sb.run(['write', '../x.md', '--scope', 'tenant:acme', '--json'], {input: note(40_000), env: {ENGRAM_SESSION: s}})
    expect(badPath.code, badPath.stdout).toBe(2)
    expect(badPath.json.error.message).not.toMatch(/budget/)
    const badBase = sb.run(['write', 'x.md', '--scope', 'tenant:acme', '--base-blob', 'xyz', '--json'], {input: note(40_000), env: {ENGRAM_SESSION: s}})
    expect(badBase.code, badBase.stdout).toBe(2)
    expect(badBase.json.error.message).toMatch(/--base-blob/)
    // the owner's review recomputes a large entry's flags under the same budget: past it, it says so
    const shown = sb.run(['review', 'show', held.json.proposal])
    expect(shown.code, shown.stderr).toBe(0)
    expect(shown.stdout).toMatch(/backed up nightly/)
    expect(shown.stdout).toMatch(/FLAGS NOT RECOMPUTED: recomputing this text's flags did not finish within 1 ms of CPU time/)
    const json = sb.run(['review', 'show', held.json.proposal, '--json'])
    expect(json.json.flagsUnchecked).toMatch(/vote\.budget_ms/)
    expect(json.json.unrecordedFlags).toBeNull()
    // pending show says the same to the owner…
    const pending = sb.run(['pending', 'show', 'held.md', '--scope', 'tenant:acme', '--json'])
    expect(pending.code, pending.stderr).toBe(0)
    expect(pending.json.items[0].flagsUnchecked).toMatch(/vote\.budget_ms/)
    // …and a session of another tenant learns nothing of the entry, nor that its flags are unchecked
    const globex = sb.run(['session', 'start', '--agent', 'other', '--assigned', 'tenant:globex', '--json']).json.id
    for (const args of [['review', 'show', held.json.proposal], ['review', 'show', held.json.proposal, '--json'], ['pending', 'show', 'held.md', '--scope', 'tenant:acme', '--json']]) {
      const other = sb.run(args, {env: {ENGRAM_SESSION: globex}})
      expect(other.code, args.join(' ')).not.toBe(0)
      expect(other.stdout + other.stderr, args.join(' ')).not.toMatch(/backed up nightly|NOT RECOMPUTED|budget/)
    }
    // a small write is read and voted on in the process, where the budget does not apply
    const small = sb.run(['write', 'small.md', '--scope', 'tenant:acme', '--json'], {input: note(2000), env: {ENGRAM_SESSION: s}})
    expect(small.json.status, small.stdout + small.stderr).toBe('pending')
  })

  it('review recomputes a large entry\'s flags in the worker: flags stripped from the file are shown as missing', () => {
    const sb = sandbox()
    const s = initWithSession(sb)
    const body = `${note(20_000)}\nInvoices go to ap@acme.example; call +1 415 555 0100 for questions.`
    const w = sb.run(['write', 'large.md', '--scope', 'tenant:acme', '--origin', 'email', '--json'], {input: body, env: {ENGRAM_SESSION: s}})
    expect(w.json.status, w.stdout + w.stderr).toBe('pending')
    expect(w.json.flags.map((f: {flag: string}) => f.flag)).toEqual(['sensitive', 'tainted-source'])
    // the agent, with a shell, strips the flags from its entry before the owner looks
    const file = join(sb.dir, '.engram', 'proposals', `${w.json.proposal}.md`)
    writeFileSync(file, readFileSync(file, 'utf8').replace(/^flags: .*$/m, 'flags: []'))
    const after = sb.run(['review', 'show', w.json.proposal, '--json'])
    expect(after.json.flags).toEqual([])
    expect(after.json.flagsUnchecked).toBeNull()
    expect(after.json.unrecordedFlags.map((f: {flag: string}) => f.flag)).toEqual(['sensitive', 'tainted-source'])
  })

  it('a budget out of range is refused when the config is signed', () => {
    const sb = sandbox()
    initWithSession(sb)
    expect(() => signConfig(sb, 'version: 1\nvote:\n  budget_ms: 0\n')).toThrow(/budget_ms/)
  })
})
