/**
 * `engram dream` end to end with the deterministic engine: the transcripts recorded in
 * test/fixtures/transcripts (malformed lines skipped and counted, an old session outside
 * the period), idempotence (again: nothing new; rejected: not again until new evidence),
 * a merge accepted as one change and undone by restore, old run: scratchpads cleared,
 * --dry-run, --branch, and bad input.
 */
import {execFileSync, spawnSync} from 'node:child_process'
import {closeSync, copyFileSync, existsSync, openSync, rmSync, writeFileSync, writeSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {beforeAll, describe, expect, it, vi} from 'vitest'

import {runInTerminal} from '../helpers/pty.js'
import {BIN, Store, configure, curate, newStore, startSession, tempDir, transcriptsWith, trustDreamer, write} from '../../conformance/harness.js'

vi.setConfig({testTimeout: 300_000, hookTimeout: 300_000})

const DREAM = (dir: string, extra: string[] = []) => ['dream', '--scope', 'tenant:acme', '--transcripts', dir, '--since', '2026-11-01', '--key', 'nightly', ...extra]

describe('engram dream (deterministic engine)', () => {
  let store: Store
  let dir: string
  let session: string
  beforeAll(() => {
    store = newStore()
    session = startSession(store, 'tenant:acme', {agent: 'agent-a'})
    curate(store, session, 'tenant:acme', 'support.md', 'Acme support hours are weekdays from nine to five, London time.\n')
    curate(store, session, 'tenant:acme', 'support-hours.md', 'Acme support hours are weekdays from nine to five, London time, holidays excepted.\n')
    trustDreamer(store)
    dir = transcriptsWith('ghp_aZ7notARealTokenButShapedLikeOne0000')
  })

  it('--dry-run reads, counts and writes nothing; an old session is outside the period', () => {
    const state = store.state()
    const r = store.ok(DREAM(dir, ['--dry-run']))
    expect(store.state()).toBe(state)
    expect(r).toMatchObject({dry_run: true, transcripts: 3, sessions_read: 2, lines_skipped: 2})
    expect(r.items.every((i: any) => i.status === 'would-propose')).toBe(true)
    expect(JSON.stringify(r.items)).not.toMatch(/quarterly/) // session-old.jsonl is from August
    expect(r.proposals.promote).toBeGreaterThanOrEqual(3)
    expect(r.proposals.merge).toBe(1)
    // the summary for people
    const text = store.run(DREAM(dir, ['--dry-run']))
    expect(text.stderr).toMatch(/read 2 session\(s\): 3 transcript\(s\), 0 run note\(s\), \d+ line\(s\), 2 skipped/)
    expect(text.stderr).toMatch(/would propose: promote \d+, merge 1/)
  })

  it('proposes once: dreaming again adds nothing; a rejected proposal returns only with new evidence', () => {
    const first = store.ok(DREAM(dir))
    expect(first.pending).toBeGreaterThan(0)
    const count = store.commitCount()
    const again = store.ok(DREAM(dir))
    expect(again.pending + again.quarantined).toBe(0)
    expect(again.skipped.duplicate).toBe(first.pending + first.quarantined)
    expect(store.commitCount()).toBe(count)
    const invoices = first.items.find((i: any) => /invoices-are-due/.test(i.path))
    store.ok(['review', 'reject', invoices.proposal, '--reason', 'not a fact we keep', '--key', 'owner'])
    const third = store.ok(DREAM(dir))
    expect(third.items.find((i: any) => i.path === invoices.path).status).toBe('decided')
    // a third session says it too: new evidence, proposed again
    writeFileSync(join(dir, 'session-c.jsonl'), `${JSON.stringify({type: 'assistant', sessionId: 'd1e2f3a4-0000-4000-8000-00000000000c', uuid: 'c1', timestamp: '2026-11-28T10:00:00.000Z', message: {role: 'assistant', content: [{type: 'text', text: 'Acme invoices are due on the 15th of each month.'}]}})}\n`)
    const fourth = store.ok(DREAM(dir))
    expect(fourth.items.find((i: any) => i.path === invoices.path).status).toBe('pending')
  })

  it('a merge is one reviewed change: review shows the deleted file, accept keeps one and deletes the other, restore undoes it', () => {
    const merge = store.ok(['review', 'list']).items.find((i: any) => i.path === 'support.md')
    expect(merge).toBeTruthy()
    const shown = store.run(['review', 'show', merge.id]).stdout
    expect(shown).toContain('also deletes tenant:acme/support-hours.md')
    expect(shown).toContain('-Acme support hours are weekdays from nine to five, London time, holidays excepted.')
    const j = store.ok(['review', 'show', merge.id])
    expect(j.removes.map((r: any) => r.path)).toEqual(['support-hours.md'])
    store.ok(['review', 'accept', merge.id, '--digest', j.digest, '--key', 'owner'])
    const changed = store.git('show', '--name-status', '--format=', 'HEAD').trim().split('\n').sort()
    expect(changed).toEqual(['D\t.engram/proposals/' + merge.id + '.md', 'D\ttenant/acme/support-hours.md', 'M\t.engram/manifests/tenant_acme.json', 'M\ttenant/acme/support.md'].sort())
    expect(store.read('tenant/acme/support.md')).toContain('holidays excepted')
    expect(store.ok(['verify']).items).toEqual([])
    store.ok(['restore', 'support-hours.md', '--scope', 'tenant:acme', '--to', 'HEAD~1', '--key', 'owner'])
    expect(store.ok(['read', 'support-hours.md', '--scope', 'tenant:acme']).body).toContain('holidays excepted')
  })

  it('run: scratchpads past the retention period are proposed for clearing, and accept removes them', () => {
    const old = startSession(store, 'tenant:acme', {agent: 'agent-old'})
    expect(write(store, old, `run:${old}`, 'scratch.md', 'Working notes for the Acme migration, step one.\n').code).toBe(0)
    expect(write(store, old, `run:${old}`, 'more.md', 'Working notes for the Acme migration, step two.\n').code).toBe(0)
    // both commits made 40 days ago (the retention period is 30 days)
    const when = new Date(Date.now() - 40 * 86_400_000).toISOString()
    execFileSync('git', ['filter-branch', '-f', '--env-filter', `export GIT_COMMITTER_DATE="${when}"`, 'HEAD~2..HEAD'], {cwd: store.dir, env: {...store.env, FILTER_BRANCH_SQUELCH_WARNING: '1'}, stdio: 'ignore'})
    const r = store.ok(DREAM(dir))
    const clear = r.items.find((i: any) => i.kind === 'clear')
    expect(clear).toMatchObject({scope: `run:${old}`, status: 'pending', removes: ['scratch.md']})
    const j = store.ok(['review', 'show', clear.proposal])
    expect(j.signer).toMatchObject({ok: true, role: 'dreamer'})
    store.ok(['review', 'accept', clear.proposal, '--digest', j.digest, '--key', 'owner'])
    expect(store.git('ls-files', `run/${old}`).trim()).toBe('')
  })

  it('--branch commits the proposals on dream/<date> and leaves the current branch as it was', () => {
    const fresh = tempDir('engram-transcripts-')
    for (const f of ['session-a.jsonl', 'session-b.jsonl']) copyFileSync(join(dir, f), join(fresh, f))
    writeFileSync(join(fresh, 'session-d.jsonl'), ['e1', 'e2'].map((s, i) => JSON.stringify({type: 'user', sessionId: `b${i}e2f3a4-0000-4000-8000-00000000000d`, uuid: s, timestamp: '2026-11-29T10:00:00.000Z', message: {role: 'user', content: 'Acme wants every invoice sent to billing at acme dot example.'}})).join('\n'))
    const head = store.git('rev-parse', 'HEAD').trim()
    const branch = store.git('symbolic-ref', '--short', 'HEAD').trim()
    const r = store.ok(DREAM(fresh, ['--branch']))
    const name = `dream/${new Date().toISOString().slice(0, 10)}`
    expect(r.branch).toBe(name)
    expect(r.pending).toBe(1)
    expect(store.git('rev-parse', 'HEAD').trim()).toBe(head)
    expect(store.git('symbolic-ref', '--short', 'HEAD').trim()).toBe(branch)
    expect(store.git('log', '--format=%s', `${branch}..${name}`)).toMatch(/invoice sent to billing|Propose/)
    // the same day again: refused, nothing changed
    const again = store.run([...DREAM(fresh, ['--branch']), '--json'])
    expect(again.code).toBe(5)
    // the owner merges the branch and reviews
    store.git('merge', '-q', '--ff-only', name)
    expect(store.ok(['review', 'list']).items.some((i: any) => /acme-wants-every-invoice/.test(i.path))).toBe(true)
  })

  it('templates/dreaming/dream.sh, run as the timer runs it: dreams on dream/<date> and pushes the branch', () => {
    const day = new Date().toISOString().slice(0, 10)
    store.git('branch', '-D', `dream/${day}`) // made by the test above
    const remote = tempDir('engram-remote-')
    execFileSync('git', ['init', '-q', '--bare', remote])
    store.git('remote', 'add', 'review', remote)
    const script = fileURLToPath(new URL('../../templates/dreaming/dream.sh', import.meta.url))
    const r = spawnSync('sh', [script], {
      cwd: tempDir(), encoding: 'utf8',
      env: {...store.env, ENGRAM: `${process.execPath} ${BIN}`, ENGRAM_BASE: store.dir, DREAM_SCOPE: 'tenant:acme', DREAM_TRANSCRIPTS: dir, DREAM_SINCE: '2026-11-01', DREAM_PUSH: 'review', ENGRAM_SESSION: 'set-by-accident'},
    })
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toContain(`pushed dream/${day} to review`)
    expect(execFileSync('git', ['branch', '--list'], {cwd: remote, encoding: 'utf8'})).toContain(`dream/${day}`)
    expect(store.git('symbolic-ref', '--short', 'HEAD').trim()).not.toMatch(/^dream\//)
  })

  it('plain-markdown transcripts: a paragraph is an observation, one under an outside tool heading is tainted; sessions contradicting a curated memory make a note naming both', () => {
    const md = tempDir('engram-transcripts-md-')
    for (const name of ['monday-call', 'tuesday-call']) {
      writeFileSync(join(md, `${name}.md`), `# Call with Acme\n\nAcme support hours are weekdays from 9 to 6, London time.\n\n## tool: WebFetch https://acme.example/status\n\nThe Acme status page lists a maintenance window every Sunday night.\n`)
    }
    const r = store.ok(['dream', '--scope', 'tenant:acme', '--transcripts', md, '--since', '2026-11-01', '--dry-run'])
    expect(r).toMatchObject({transcripts: 2, sessions_read: 2})
    const contradiction = r.items.find((i: any) => i.kind === 'contradiction')
    expect(contradiction.evidence[0].source).toMatch(/^curated tenant:acme\/support(?:-hours)?\.md$/)
    expect(contradiction.evidence.slice(1).map((e: any) => e.session).sort()).toEqual(['monday-call', 'tuesday-call'])
    const window = r.items.find((i: any) => i.kind === 'promote' && /maintenance-window|status-page/.test(i.path))
    expect(window.tainted).toBe(true)
  })

  it('a 1 GiB transcript is streamed: its line without an end is skipped and counted, the lines around it read, in bounded memory', () => {
    const big = tempDir('engram-transcripts-big-')
    const file = join(big, 'huge.jsonl')
    const say = (sid: string, ts: string) => `${JSON.stringify({type: 'user', sessionId: sid, uuid: sid, timestamp: ts, message: {role: 'user', content: 'Acme ships every parcel from the Leeds warehouse.'}})}\n`
    // one session's line, then a sparse hole of NUL bytes to 1 GiB (no disk used, no line break), then another session's line
    writeFileSync(file, say('big-a', '2026-11-20T10:00:00.000Z'))
    const fd = openSync(file, 'r+')
    const tail = Buffer.from(`\n${say('big-b', '2026-11-21T10:00:00.000Z')}`)
    writeSync(fd, tail, 0, tail.length, 2 ** 30)
    closeSync(fd)
    // on a terminal (the progress line shows), with a heap of 256 MiB: reading the file (or its long line) whole would crash
    const time = existsSync('/usr/bin/time') ? ['/usr/bin/time', '-v'] : []
    const started = Date.now()
    const r = runInTerminal([...time, process.execPath, BIN, 'dream', '--scope', 'tenant:acme', '--transcripts', big, '--since', '2026-11-01', '--dry-run'], {
      cwd: store.dir, env: {...store.env, NODE_OPTIONS: '--max-old-space-size=256'}, timeoutSeconds: 120,
    })
    const seconds = (Date.now() - started) / 1000
    rmSync(big, {recursive: true, force: true})
    expect(r.code, r.output).toBe(0)
    expect(r.output).toMatch(/dreaming: 1\/1 transcripts, 1024\/1024 MiB/)
    expect(r.output).toMatch(/read 2 session\(s\): 1 transcript\(s\), 0 run note\(s\), 3 line\(s\), 1 skipped \(1 longer than 16 MiB\)/)
    // the fact both sessions said, one before the hole and one after it
    expect(r.output).toMatch(/would-propose\tpromote\ttenant:acme\/dream\/acme-ships-every-parcel/)
    const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(r.output)
    if (rss) expect(Number(rss[1]) / 1024, 'max RSS in MiB').toBeLessThan(300)
    const cpu = ['User', 'System'].map((k) => new RegExp(`${k} time \\(seconds\\): ([\\d.]+)`).exec(r.output)?.[1] ?? '?')
    console.log(`1 GiB transcript: ${seconds.toFixed(1)} s wall, ${cpu[0]} s user + ${cpu[1]} s system, max RSS ${rss ? `${(Number(rss[1]) / 1024).toFixed(0)} MiB` : 'not measured'}`)
  })

  it('bad input: each refused with one message, nothing changed', () => {
    const state = store.state()
    const cases: [string[], number, Record<string, string>?][] = [
      [['dream', '--scope', 'tenant:acme', '--since', 'last tuesday', '--dry-run'], 2],
      [['dream', '--scope', 'tenant:acme', '--transcripts', join(dir, 'missing.jsonl'), '--dry-run'], 2],
      [['dream', '--scope', `run:${session}`, '--dry-run'], 2],
      [['dream', '--scope', 'org', '--dry-run'], 3],
      [['dream', '--scope', 'tenant:acme', '--key', 'owner'], 3],
      [['dream', '--scope', 'tenant:acme', '--dry-run'], 3, {ENGRAM_SESSION: session}],
    ]
    for (const [args, code, env] of cases) {
      const r = store.run([...args, '--json'], {env})
      expect(r.code, `${args.join(' ')}: ${r.stdout}${r.stderr}`).toBe(code)
      expect(r.json.error.message).toBeTruthy()
      expect(r.stderr).not.toMatch(/\n\s+at /)
    }
    expect(store.state()).toBe(state)
  })
})

describe('engram dream --llm-command (model engine)', () => {
  let store: Store
  let dir: string
  const secret = 'ghp_aZ7modelAnswerTokenShapedLikeOne1111'
  const model = (name: string) => `"${process.execPath}" "${fileURLToPath(new URL(`../fixtures/models/${name}.mjs`, import.meta.url))}"`
  beforeAll(() => {
    store = newStore()
    const s = startSession(store, 'tenant:acme', {agent: 'agent-a'})
    curate(store, s, 'tenant:acme', 'plan.md', 'Acme is on the Gold plan.\n')
    trustDreamer(store)
    dir = transcriptsWith('ghp_aZ7notARealTokenButShapedLikeOne0000')
  })

  it('a command that hangs, exits 1 or answers garbage is reported and nothing is written', () => {
    const state = store.state()
    const cases: [string, string[], RegExp][] = [
      ['hang', ['--llm-timeout', '2'], /did not answer within 2 s/],
      ['fail', [], /exited 1: model overloaded/],
      ['garbage', [], /not a JSON list of proposals \(not JSON\)/],
    ]
    for (const [name, extra, message] of cases) {
      const started = Date.now()
      const r = store.run([...DREAM(dir, ['--llm-command', model(name), ...extra]), '--json'])
      expect(r.code, r.stdout).toBe(3)
      expect(r.json.error.message).toMatch(message)
      expect(Date.now() - started).toBeLessThan(30_000)
      expect(store.state()).toBe(state)
    }
    expect(store.run(DREAM(dir, ['--llm-command', model('hang'), '--llm-timeout', '0', '--dry-run', '--json'])).code).toBe(2)
  })

  it('a proposal whose text runs past the signed time budget is refused alone; the run goes on', () => {
    const other = newStore()
    startSession(other, 'tenant:acme', {agent: 'agent-a'})
    // no large text can be redacted and read within 1 ms of CPU time (README "The write path")
    configure(other, 'version: 1\nvote:\n  budget_ms: 1\n')
    trustDreamer(other)
    const r = other.run([...DREAM(dir, ['--llm-command', model('large')]), '--json'])
    expect(r.code, r.stderr).toBe(0)
    const by = (p: string) => r.json.items.find((i: any) => i.path === p)
    expect(by('dream/a-small.md').status).toBe('pending')
    expect(by('dream/b-large.md')).toMatchObject({status: 'refused', refusal: expect.stringMatching(/could not be redacted and read within 1 ms of CPU time/)})
    expect(by('dream/c-small.md').status).toBe('pending')
    expect(r.json.skipped.refused).toBe(1)
    expect(other.allObjects().includes('Acme keeps a runbook')).toBe(false)
    const text = other.run(DREAM(dir, ['--llm-command', model('large')]))
    expect(text.stderr).toMatch(/1 refused/)
    expect(text.stderr).toMatch(/tenant:acme\/dream\/b-large\.md refused: The write's text could not be redacted/)
  })

  it('hostile proposals are refused one by one with a reason; the rest go through the vote, evidence and taint from the document', () => {
    const r = store.run([...DREAM(dir, ['--llm-command', model('hostile')]), '--json'], {env: {SECRET: secret}})
    expect(r.code, r.stderr).toBe(0)
    const reasons = r.json.rejected.map((x: any) => `${x.index}: ${x.reason}`).join('\n')
    expect(reasons).toMatch(/^1: for scope tenant:globex, not tenant:acme \(out of scope\)$/m)
    expect(reasons).toMatch(/^2: for org/m)
    expect(reasons).toMatch(/^6: without evidence$/m)
    expect(reasons).toMatch(/^7: evidence e99999 is not an observation/m)
    expect(reasons).toMatch(/^8: bad path/m)
    expect(reasons).toMatch(/^9: malformed: path/m)
    const items = r.json.items
    expect(items.map((i: any) => i.path).sort()).toEqual(['dream/invoices.md', 'dream/order.md', 'dream/token.md', 'dream/web.md'])
    for (const i of items) expect(i.scope).toBe('tenant:acme')
    const by = (p: string) => items.find((i: any) => i.path === p)
    expect(by('dream/invoices.md').status).toBe('pending')
    expect(by('dream/invoices.md').evidence.map((e: any) => e.session).sort()).toEqual(['6f1c2a9e-1d3b-4c5a-9e7f-0a1b2c3d4e5f', '8b2d3f0a-2e4c-4d6b-8f90-1b2c3d4e5f60'])
    expect(by('dream/order.md').status === 'quarantined' || by('dream/order.md').flags.length > 0).toBe(true)
    expect(by('dream/web.md').tainted).toBe(true)
    expect(by('dream/token.md').flags).toContain('secret-redacted')
    expect(store.allObjects().includes(secret)).toBe(false)
    expect(r.stdout + r.stderr).not.toContain(secret)
    const shown = store.ok(['review', 'show', by('dream/invoices.md').proposal])
    expect(shown.signer).toMatchObject({ok: true, role: 'dreamer'})
  })
})
