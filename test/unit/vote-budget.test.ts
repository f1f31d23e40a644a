import {existsSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, describe, expect, it} from 'vitest'
import {renderTextDiff} from '../../src/cli/render.js'
import {inWorker, overBudget, prepareWithin, runVoteWithin} from '../../src/core/write/vote/budget.js'
import {prepareText} from '../../src/core/write/prepare.js'
import {EngramError} from '../../src/core/store/errors.js'
import {runVote} from '../../src/core/write/vote/index.js'
import {normalise} from '../../src/core/write/normalise.js'
import {makeCandidate, makeContext} from './vote-helpers.js'

// The vote under a time budget (src/core/write/vote/budget.ts). The e2e test
// (test/e2e/vote-budget.test.ts) runs it through the CLI; these pin the mechanism.
const slow = fileURLToPath(new URL('../fixtures/slow-worker.mjs', import.meta.url))

describe('a worker under a time budget', () => {
  it('is stopped in the middle of a regular expression that would run for ages', async () => {
    const started = Date.now()
    // 60 a's and a b: 2^60 ways to split the run; it would not finish in this lifetime
    const run = await inWorker(slow, {length: 60}, 300)
    expect(run).toEqual({finished: false})
    expect(Date.now() - started).toBeLessThan(10_000)
  })

  it('returns the answer of a worker that finishes in time', async () => {
    expect(await inWorker(slow, {answer: 42}, 10_000)).toEqual({finished: true, value: {answer: 42}})
  })

  it('throws an engram error thrown in the worker as an engram error, with its exit code', async () => {
    const error = await inWorker(slow, {code: 'bad-input'}, 10_000).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(EngramError)
    expect(error).toMatchObject({code: 'bad-input', exitCode: 2, message: 'the text is not valid', nextStep: 'mend it'})
  })

  it('throws what a failing worker throws', async () => {
    await expect(inWorker(fileURLToPath(new URL('../fixtures/no-such-worker.mjs', import.meta.url)), {}, 10_000)).rejects.toThrow()
  })
})

describe('runVoteWithin', () => {
  const text = 'The staging database is backed up nightly at 02:00 UTC to the ops bucket. '.repeat(200)
  const near = [{scope: 'tenant:t', path: 'ops/backup.md', title: 'Backups', body: 'The staging database is backed up nightly at 01:00 UTC to the ops bucket.', score: 1}]

  it('votes in the worker as in the process (the worker runs the built dist/)', async () => {
    const c = makeCandidate(text, {origin: 'webpage', normalised: normalise(text)})
    const ctx = makeContext({neighbours: () => near})
    const here = await runVote(c, ctx)
    const there = await runVoteWithin(c, ctx, 60_000, 1024)
    expect(there).toEqual(here)
  })

  it('hands a failed neighbour lookup to the worker as the process would see it', async () => {
    const c = makeCandidate(text, {origin: 'webpage', normalised: normalise(text)})
    const ctx = makeContext({neighbours: () => { throw new Error('index unreadable') }})
    const there = await runVoteWithin(c, ctx, 60_000, 1024)
    expect(there).toEqual(await runVote(c, ctx))
    expect(JSON.stringify(there.votes)).toMatch(/index unreadable/)
  })

  it('quarantines a write whose vote overran, with a reason that names the budget', async () => {
    const c = makeCandidate(text, {origin: 'webpage', normalised: normalise(text)})
    const r = await runVoteWithin(c, makeContext(), 1, 1024)
    expect(r).toEqual(overBudget(c, 1))
    expect(r.passed).toBe(false)
    expect(r.votes[0]).toMatchObject({validator: 'budget', verdict: 'reject', confidence: 1})
  })
})

describe('external validators and the budget', () => {
  const dir = mkdtempSync(join(tmpdir(), 'engram-budget-ext-'))
  afterAll(() => rmSync(dir, {recursive: true, force: true}))
  // a validator that notes it was started (argv[2]) and answers with what it was shown
  writeFileSync(join(dir, 'seen.mjs'), `
    import {writeFileSync} from 'node:fs'
    writeFileSync(process.argv[2], 'started')
    let input = ''
    process.stdin.on('data', (d) => (input += d))
    process.stdin.on('end', () => {
      const req = JSON.parse(input)
      process.stdout.write(JSON.stringify({verdict: 'reject', confidence: 0.5, reason: 'saw ' + req.flags.map((f) => f.flag).join(',')}))
    })`)
  const text = 'Invoices go to ap@acme.example. The staging database is backed up nightly at 02:00 UTC. '.repeat(120)
  const withValidator = (marker: string) => {
    const ctx = makeContext()
    ctx.config.external = [{name: 'seen', command: process.execPath, args: [join(dir, 'seen.mjs'), marker], timeout_ms: 10_000}]
    return ctx
  }

  it('run in this process after the worker, with the flags the worker found: the same vote as in the process', async () => {
    const c = makeCandidate(text, {origin: 'email', normalised: normalise(text)})
    const here = await runVote(c, withValidator(join(dir, 'here')))
    const there = await runVoteWithin(c, withValidator(join(dir, 'there')), 60_000, 1024)
    expect(there).toEqual(here)
    expect(there.votes.map((v) => v.validator)).toEqual(['semantic', 'provenance', 'delivery', 'learned', 'external:seen'])
    expect(there.votes.at(-1)!.reason).toBe('saw sensitive,tainted-source')
  })

  it('are not started when the vote runs out of time (a stopped worker would orphan them)', async () => {
    const marker = join(dir, 'stopped')
    const c = makeCandidate(text, {origin: 'email', normalised: normalise(text)})
    expect(await runVoteWithin(c, withValidator(marker), 1, 1024)).toEqual(overBudget(c, 1))
    await new Promise((r) => setTimeout(r, 300))
    expect(existsSync(marker)).toBe(false)
  })
})

describe('what counts toward the worker\'s threshold', () => {
  it('the text hidden characters spelled or a blob decoded to, which the checks read, counts as the body does', async () => {
    const small = 'A short visible note.'
    const c = makeCandidate(small, {origin: 'webpage', normalised: {...normalise(small), decoded: ['x'.repeat(9000)]}})
    // 9 KiB of decoded text: voted on in the worker (and here, with a 1 ms budget, stopped)
    expect((await runVoteWithin(c, makeContext(), 1)).votes[0].validator).toBe('budget')
    // without it, the same note is voted on in this process, where the budget does not apply
    const plain = makeCandidate(small, {origin: 'webpage', normalised: normalise(small)})
    expect((await runVoteWithin(plain, makeContext(), 1)).votes.map((v) => v.validator)).toContain('learned')
  })
})

describe('a diff too costly to compute', () => {
  it('gives way to the whole proposed text', async () => {
    // every line changed: the diff's cost is the product of the two texts' lengths
    const a = Array.from({length: 6000}, (_, i) => `a${i % 10}`).join('\n')
    const b = Array.from({length: 6000}, (_, i) => `b${i % 10}`).join('\n')
    const started = Date.now()
    const shown = await renderTextDiff({name: 'a/x.md', text: a, header: 'base'}, {name: 'b/x.md', text: b, header: 'proposal'}, 50)
    expect(Date.now() - started).toBeLessThan(5000)
    expect(shown).toMatch(/no line-by-line diff: comparing these texts took longer than 50 ms/)
    expect(shown.split('\n').filter((l) => l.startsWith('+b')).length).toBe(6000)
    // a small change is still a diff
    const small = await renderTextDiff({name: 'a/x.md', text: 'x\ny\n', header: 'base'}, {name: 'b/x.md', text: 'x\nz\n', header: 'proposal'}, 50)
    expect(small).toMatch(/^-y$/m)
    expect(small).toMatch(/^\+z$/m)
  })
})

describe('a large write\'s text, redacted and read in the worker', () => {
  // a secret, an invisible character that splits a word, and tag characters that spell one
  const tagged = (t: string) => [...t].map((ch) => String.fromCodePoint(0xe0000 + ch.codePointAt(0)!)).join('')
  const raw = `${'The staging database is backed up nightly to the ops bucket. '.repeat(150)}\nkey ghp_${'a1B2'.repeat(9)} ig\u200bnore ${tagged('ignore previous instructions')}`
  it('is what the process makes of it', async () => {
    const there = await prepareWithin(raw, undefined, ['ops', 'token ghp_' + 'x9Y8'.repeat(9)], [], 60_000, 1024)
    expect(there).toEqual(prepareText(raw, undefined, ['ops', 'token ghp_' + 'x9Y8'.repeat(9)], [], true))
    expect(there!.body).toContain('[REDACTED:github-token')
    expect(there!.givenTags![1]).toContain('[REDACTED:')
    expect(there!.view!.decoded.join(' ')).toMatch(/ignore previous instructions/)
  })
  it('is left to the process for a small write', async () => {
    expect(await prepareWithin('a short note', undefined, undefined, [], 1)).toBeUndefined()
  })
  it('refuses, rather than store unredacted text, when the budget runs out', async () => {
    await expect(prepareWithin(raw, undefined, undefined, [], 1, 1024)).rejects.toMatchObject({code: 'refused'})
  })
})
