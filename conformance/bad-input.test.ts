/**
 * R17: bad input gets a clear error and its exit code, and changes nothing — not a commit,
 * not a file, not an index.
 */
import {beforeAll, describe, expect, it} from 'vitest'

import {Store, newStore, startSession, write} from './harness.js'

describe('C17 — bad input changes nothing (R17)', () => {
  let store: Store
  let s: string
  let proposal: string
  beforeAll(() => {
    store = newStore()
    s = startSession(store, 'tenant:acme')
    proposal = write(store, s, 'tenant:acme', 'queued.md', 'A queued fact.\n').json.proposal
  })

  // [name, args (RUN is the session's run: scope), stdin, as the agent?, exit code]
  const cases: [string, string[], string | Buffer, boolean, number][] = [
    ['unknown scope kind', ['write', 'a.md', '--scope', 'team:x'], 'x', true, 2],
    ['upper-case scope', ['write', 'a.md', '--scope', 'tenant:ACME'], 'x', true, 2],
    ['scope with a slash', ['write', 'a.md', '--scope', 'tenant:acme/../globex'], 'x', true, 2],
    ['path traversal', ['write', '../x.md', '--scope', 'RUN'], 'x', true, 2],
    ['absolute path', ['write', '/etc/x.md', '--scope', 'RUN'], 'x', true, 2],
    ['traversal in the middle', ['write', 'a/../../b.md', '--scope', 'RUN'], 'x', true, 2],
    ['not markdown', ['write', 'a.sh', '--scope', 'RUN'], 'x', true, 2],
    ['NUL in the path', ['write', 'a\u0001b.md', '--scope', 'RUN'], 'x', true, 2],
    ['path over 255 bytes', ['write', `${'é'.repeat(130)}.md`, '--scope', 'RUN'], 'x', true, 2],
    ['empty body', ['write', 'a.md', '--scope', 'RUN'], ' \n\t\n', true, 2],
    ['binary body', ['write', 'a.md', '--scope', 'RUN'], Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 1, 2]), true, 2],
    ['invalid UTF-8', ['write', 'a.md', '--scope', 'RUN'], Buffer.from([0x41, 0xc3, 0x28, 0x41]), true, 2],
    ['body over the limit', ['write', 'a.md', '--scope', 'RUN'], 'y'.repeat(256 * 1024 + 1), true, 2],
    ['unknown origin', ['write', 'a.md', '--scope', 'RUN', '--origin', 'telepathy'], 'x', true, 2],
    ['malformed base blob', ['write', 'a.md', '--scope', 'RUN', '--base-blob', 'HEAD'], 'x', true, 2],
    ['unknown flag', ['write', 'a.md', '--scope', 'RUN', '--frobnicate'], 'x', true, 2],
    ['foreign session id', ['write', 'a.md', '--scope', 'tenant:acme', '--session', 's-zzzzzzzz'], 'x', false, 4],
    ['session id as a path', ['write', 'a.md', '--scope', 'tenant:acme', '--session', '../../etc/passwd'], 'x', false, 2],
    ['assigned scope that is a run:', ['session', 'start', '--agent', 'x', '--assigned', 'run:s-abc'], '', false, 2],
    ['agent name with a newline', ['session', 'start', '--agent', 'a\nEngram-Author: owner', '--assigned', 'tenant:acme'], '', false, 2],
    ['accept with a non-hex digest', ['review', 'accept', 'PROPOSAL', '--digest', 'g'.repeat(64)], '', false, 2],
    ['accept of an unknown id', ['review', 'accept', 'zzzzzzzz', '--digest', 'a'.repeat(64)], '', false, 4],
    ['reject with an empty reason', ['review', 'reject', 'PROPOSAL', '--reason', ' '], '', false, 2],
    ['restore to a git option', ['restore', 'queued.md', '--scope', 'tenant:acme', '--to', '--all'], '', false, 2],
    ['restore of a run: scratchpad', ['restore', 'a.md', '--scope', 'RUN', '--to', 'HEAD'], '', false, 2],
    ['forget without a reason', ['forget', 'queued.md', '--scope', 'tenant:acme', '--reason', ' '], '', true, 2],
    ['forget through ..', ['forget', '../globex/x.md', '--scope', 'tenant:acme', '--reason', 'x'], '', true, 2],
    ['forget of a missing memory', ['forget', 'nothing-here.md', '--scope', 'tenant:acme', '--reason', 'x'], '', true, 4],
    ['forget in a run: scratchpad', ['forget', 'a.md', '--scope', 'RUN', '--reason', 'x'], '', true, 2],
    ['dream over an unknown period', ['dream', '--scope', 'tenant:acme', '--since', 'soon', '--dry-run'], '', false, 2],
    ['dream of a missing transcript', ['dream', '--scope', 'tenant:acme', '--transcripts', '/nonexistent/t.jsonl', '--dry-run'], '', false, 2],
    ['dream inside a session', ['dream', '--scope', 'tenant:acme', '--dry-run'], '', true, 3],
    ['second init', ['init'], '', false, 3],
  ]

  it.each(cases)('%s', (_name, args, input, asAgent, code) => {
    const before = store.state()
    const full = args.map((a) => (a === 'RUN' ? `run:${s}` : a === 'PROPOSAL' ? proposal : a))
    const r = store.run([...full, '--json'], {input, session: asAgent ? s : undefined})
    expect(r.code).toBe(code)
    expect(r.json?.error?.code, r.stdout).toBeTruthy()
    expect(r.json.error.message).toBeTruthy()
    expect(r.stderr).not.toMatch(/\n\s+at .*:\d+:\d+/)
    expect(store.state()).toBe(before)
  })

  it('a malformed config.yml is refused by `config sign` with exit 2 and changes nothing; until signed it is not in force', () => {
    const st = newStore()
    const a = startSession(st, 'tenant:acme')
    st.write('.engram/config.yml', 'vote: [unclosed\n')
    st.gitCommitAll('break the config')
    const before = st.state()
    for (const args of [['config', 'sign', '--json'], ['config', 'sign', '--digest', '0'.repeat(64), '--json']]) {
      const r = st.run(args)
      expect(r.code, args.join(' ')).toBe(2)
      expect(r.json.error.message).toMatch(/config/)
      expect(r.stderr).not.toMatch(/\n\s+at .*:\d+:\d+/)
      expect(st.state()).toBe(before)
    }
    // a write goes on under the signed config, and says the broken one is not in force
    const w = st.run(['write', 'a.md', '--scope', `run:${a}`, '--json'], {session: a, input: 'x'})
    expect(w.code).toBe(0)
    expect(w.stderr).toMatch(/config\.yml is not in force/)
  })
})
