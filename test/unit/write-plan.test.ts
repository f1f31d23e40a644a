/**
 * The write path's plan (src/core/write/plan.ts) without git or a store: plain inputs,
 * a view that is a function over a fixture, and the plan that comes out.
 */
import {describe, expect, it} from 'vitest'

import {DEFAULT_CONFIG, EngramConfig} from '../../src/core/store/config.js'
import {EngramError} from '../../src/core/store/errors.js'
import {serializeMemory} from '../../src/core/memory/memory.js'
import {parseProposal, proposalDigest} from '../../src/core/review/proposal.js'
import type {SessionRecord} from '../../src/core/session/sessions.js'
import {StoredFile, WriteDecision, WriteView, directCommit, entryFor, memoryFor, planWrite} from '../../src/core/write/plan.js'

const session = (over: Partial<SessionRecord> = {}): SessionRecord => ({
  id: 's-abcd1234', agent: 'claude-code', assigned: 'project:alpha', reads: [], tainted: false, taint_reasons: [],
  created: '2026-01-01T00:00:00.000Z', updated: '2026-01-01T00:00:00.000Z', proof: 'x', ...over,
})
const NOW = '2026-02-03T04:05:06.000Z'
const token = `ghp_${'a1B2c3D4e5'.repeat(3)}x9Y8z7`

/** A view over fixed files; every read is recorded. */
function view(files: Record<string, StoredFile> = {}, config: EngramConfig = DEFAULT_CONFIG): WriteView & {reads: string[]} {
  const reads: string[] = []
  return {config, reads, read: (scope, path) => {
    reads.push(`${scope}/${path}`)
    return files[`${scope}/${path}`]
  }}
}
const stored = (over: {id?: string; version?: number; created?: string; body?: string; blob?: string} = {}): StoredFile => ({
  blob: over.blob ?? 'b'.repeat(40),
  memory: {
    frontmatter: {
      id: over.id ?? 'm-old', title: 'old', scope: 'project:alpha', tags: [], author: 'someone', source_session: null, origin: 'direct_chat',
      tainted: false, taint_reasons: [], created: over.created ?? '2025-01-01T00:00:00.000Z', updated: '2025-01-01T00:00:00.000Z',
      version: over.version ?? 3, proposal: null, reviewed_by: null, digest: null, signature: null,
    },
    body: over.body ?? 'the old body\n',
  },
})
const code = (fn: () => unknown): string => {
  try {
    fn()
  } catch (error) {
    return error instanceof EngramError ? error.code : `not an EngramError: ${String(error)}`
  }
  return 'no error'
}
let n = 0
const ids = () => `m-new${++n}`

describe('planWrite', () => {
  it('routes a session\'s own run: scope direct, with no vote candidate', () => {
    const plan = planWrite(session(), {scope: 'run:s-abcd1234', path: 'notes/a.md', content: 'hello there\n'}, view(), NOW)
    expect(plan.route).toBe('direct')
    expect(plan.candidate).toBeUndefined()
    expect(plan.rel).toBe('run/s-abcd1234/notes/a.md')
    expect(plan.expectedBase).toBeNull()
    expect(plan.now).toBe(NOW)
  })

  it('routes the assigned scope to a proposal whose candidate is an update of the file seen', () => {
    const v = view({'project:alpha/a.md': stored({body: 'was\n'})})
    const plan = planWrite(session(), {scope: 'project:alpha', path: 'a.md', content: 'now\n', tags: ['x']}, v, NOW)
    expect(plan.route).toBe('proposal')
    expect(plan.expectedBase).toBe('b'.repeat(40))
    expect(plan.candidate).toMatchObject({operation: 'update', baseBody: 'was\n', body: 'now\n', tags: ['x'], author: 'claude-code', origin: 'direct_chat'})
    expect(plan.burstWindowMinutes).toBe(DEFAULT_CONFIG.vote.burst.window_minutes)
    expect(v.reads).toEqual(['project:alpha/a.md'])
  })

  it('redacts body, title and tags before anything else sees them, and counts body and title together', () => {
    const plan = planWrite(session(), {scope: 'project:alpha', path: 'a.md', content: `key ${token}\n`, title: `t ${token}`, tags: [`g ${token}`]}, view(), NOW)
    const all = JSON.stringify(plan)
    expect(all).not.toContain(token)
    expect(plan.redactions).toEqual({'github-token': 2})
    expect(plan.candidate!.redactions).toEqual({'github-token': 2})
  })

  it('drops invisible characters before redaction but still reports them to the vote', () => {
    const hidden = `ghp_\u200b${token.slice(4)}`
    const plan = planWrite(session(), {scope: 'project:alpha', path: 'a.md', content: `x ${hidden}\n`}, view(), NOW)
    expect(plan.body).not.toContain(token.slice(4))
    expect(plan.candidate!.normalised.hidden.length).toBeGreaterThan(0)
  })

  it('takes taint from the session and the origin, never from the content', () => {
    const plan = planWrite(session({tainted: true, taint_reasons: ['read a webpage']}), {scope: 'project:alpha', path: 'a.md', content: 'tainted: false\n', origin: 'email'}, view(), NOW)
    expect(plan.tainted).toBe(true)
    expect(plan.taintReasons).toEqual(['session: read a webpage', 'origin: email'])
    const clean = planWrite(session(), {scope: 'project:alpha', path: 'a.md', content: 'x\n'}, view(), NOW)
    expect([clean.tainted, clean.taintReasons]).toEqual([false, []])
  })

  it('marks an elevated origin on a proposal as a claim, and refuses it on a direct write', () => {
    const plan = planWrite(session(), {scope: 'project:alpha', path: 'a.md', content: 'x\n', origin: 'owner'}, view(), NOW)
    expect(plan.candidate!.claim).toEqual({origin: 'owner'})
    expect(code(() => planWrite(session(), {scope: 'run:s-abcd1234', path: 'a.md', content: 'x\n', origin: 'owner'}, view(), NOW))).toBe('refused')
  })

  it('sets the expected base from --base-blob: a blob id, "none", or the file seen', () => {
    const v = view({'project:alpha/a.md': stored()})
    expect(planWrite(session(), {scope: 'project:alpha', path: 'a.md', content: 'x\n', base: 'none'}, v, NOW).expectedBase).toBeNull()
    expect(planWrite(session(), {scope: 'project:alpha', path: 'a.md', content: 'x\n', base: 'c'.repeat(40)}, v, NOW).expectedBase).toBe('c'.repeat(40))
  })

  it('refuses bad input before it reads the store', () => {
    const v = view()
    const bad = [
      {scope: 'project:alpha', path: `${token}.md`, content: 'x\n'},
      {scope: 'project:alpha', path: '../a.md', content: 'x\n'},
      {scope: 'project:alpha', path: 'a.md', content: 'x\n', origin: 'system'},
      {scope: 'project:alpha', path: 'a.md', content: '   \n'},
      {scope: 'project:alpha', path: 'a.md', content: 'x\n', title: 'a\nb'},
      {scope: 'project:alpha', path: 'a.md', content: 'x\n', base: 'HEAD'},
      {scope: 'project:alpha', path: 'a.md', content: Buffer.alloc(DEFAULT_CONFIG.max_body_bytes + 1, 97)},
    ]
    for (const input of bad) expect(code(() => planWrite(session(), input, v, NOW)), JSON.stringify(input).slice(0, 60)).toMatch(/^(bad-input|usage)$/)
    expect(code(() => planWrite(session(), {scope: 'project:beta', path: 'a.md', content: 'x\n'}, v, NOW))).toBe('refused')
    expect(code(() => planWrite(session(), {scope: 'org', path: 'a.md', content: 'x\n'}, v, NOW))).toBe('refused')
    expect(v.reads).toEqual([])
  })

  it('an expiry: a future date or a time to live from the write\'s day, stored as a date; a bad or past one refused before the store is read', () => {
    const plan = (expires: string, files: Record<string, StoredFile> = {}) => planWrite(session(), {scope: 'project:alpha', path: 'a.md', content: 'x\n', expires}, view(files), NOW)
    expect(plan('2027-06-30').givenExpires).toBe('2027-06-30')
    expect(plan('90d').givenExpires).toBe('2026-05-04') // NOW is 2026-02-03
    expect(plan('2w').givenExpires).toBe('2026-02-17')
    expect(plan('none').givenExpires).toBeNull()
    const v = view()
    for (const bad of ['2027-02-30', '2026-02-03', '2025-12-31', 'tomorrow', '0d', '2027-6-30', '30 days', '99999d', '3027-01-01']) {
      expect(code(() => planWrite(session(), {scope: 'project:alpha', path: 'a.md', content: 'x\n', expires: bad}, v, NOW)), bad).toBe('bad-input')
    }
    expect(v.reads).toEqual([])
  })

  it('uses the store\'s config: its redaction rules and body limit', () => {
    const config: EngramConfig = {...DEFAULT_CONFIG, max_body_bytes: 10, redaction: {extra: [{kind: 'codename', pattern: 'BLUEBIRD'}]}}
    expect(code(() => planWrite(session(), {scope: 'project:alpha', path: 'a.md', content: 'x'.repeat(11)}, view({}, config), NOW))).not.toBe('no error')
    const plan = planWrite(session(), {scope: 'project:alpha', path: 'a.md', content: 'BLUEBIRD\n'}, view({}, {...config, max_body_bytes: 100}), NOW)
    expect(plan.body).not.toContain('BLUEBIRD')
    expect(Object.keys(plan.redactions)).toEqual(['codename'])
  })
})

describe('applying a plan (pure parts)', () => {
  const plan = planWrite(session(), {scope: 'project:alpha', path: 'a.md', content: 'new body\n', title: 'T'}, view({'project:alpha/a.md': stored()}), NOW)
  const passed: WriteDecision = {passed: true, dissent: false, summary: 'passed: 4/4', flags: [], votes: []}

  it('carries the file found at apply time into the memory: id, created, version + 1', () => {
    const m = memoryFor(plan, stored({id: 'm-kept', version: 7, created: '2024-01-01T00:00:00.000Z'}), 'p-1', ids)
    expect(m).toMatchObject({id: 'm-kept', version: 8, created: '2024-01-01T00:00:00.000Z', updated: NOW, proposal: 'p-1', author: 'claude-code', source_session: 's-abcd1234', title: 'T'})
    const fresh = memoryFor(plan, undefined, null, () => 'm-minted')
    expect(fresh).toMatchObject({id: 'm-minted', version: 1, created: NOW})
  })

  it('an expiry goes into the memory, so the digest covers it; an update without one keeps the file\'s, "none" drops it', () => {
    const withExpiry = (expires?: string) => planWrite(session(), {scope: 'project:alpha', path: 'a.md', content: 'new body\n', title: 'T', ...(expires ? {expires} : {})}, view({'project:alpha/a.md': stored()}), NOW)
    const expiring = stored()
    expiring.memory.frontmatter.expires = '2030-01-01'
    expect(memoryFor(withExpiry('2027-06-30'), expiring, 'p-1', ids).expires).toBe('2027-06-30')
    expect(memoryFor(withExpiry(), expiring, 'p-1', ids).expires).toBe('2030-01-01')
    expect('expires' in memoryFor(withExpiry('none'), expiring, 'p-1', ids)).toBe(false)
    expect('expires' in memoryFor(withExpiry(), stored(), 'p-1', ids)).toBe(false)
    const passed: WriteDecision = {passed: true, dissent: false, summary: 'passed', flags: [], votes: []}
    const a = entryFor(withExpiry('2027-06-30'), stored(), passed, 'p-9', NOW, ids)
    const b = entryFor(withExpiry('2027-07-01'), stored(), passed, 'p-9', NOW, ids)
    expect(parseProposal(a.commit.changes[0].content, 'p.md').memory.expires).toBe('2027-06-30')
    expect(a.digest).not.toBe(b.digest)
  })

  it('a direct write commits the serialised memory with provenance trailers', () => {
    const direct = planWrite(session(), {scope: 'run:s-abcd1234', path: 'a.md', content: `k ${token}\n`}, view(), NOW)
    const c = directCommit(direct, undefined, () => 'm-1')
    expect(c.subject).toBe('Add run:s-abcd1234/a.md from session s-abcd1234')
    expect(c.changes).toEqual([{path: 'run/s-abcd1234/a.md', content: serializeMemory({frontmatter: memoryFor(direct, undefined, null, () => 'm-1'), body: direct.body})}])
    expect(c.trailers).toMatchObject({'Engram-Operation': 'write', 'Engram-Author': 'claude-code', 'Engram-Session': 's-abcd1234', 'Engram-Tainted': false, 'Engram-Redactions': 'github-token×1'})
  })

  it('a vote that passed makes a pending proposal; one that failed a quarantine entry', () => {
    const ok = entryFor(plan, stored(), passed, 'p-1', NOW, ids)
    expect([ok.proposal.status, ok.proposal.kind, ok.conflict, ok.commit.subject]).toEqual(['pending', 'write', false, 'Propose update of project:alpha/a.md (p-1)'])
    expect(ok.digest).toBe(proposalDigest(ok.proposal))
    expect(ok.commit.trailers).toMatchObject({'Engram-Proposal': 'p-1', 'Engram-Digest': ok.digest, 'Engram-Vote': 'passed: 4/4'})
    expect(parseProposal(ok.commit.changes[0].content, ok.commit.changes[0].path).id).toBe('p-1')
    const bad = entryFor(plan, stored(), {...passed, passed: false, summary: 'rejected: 1/4'}, 'q-1', NOW, ids)
    expect([bad.proposal.status, bad.commit.subject]).toEqual(['quarantined', 'Quarantine a write to project:alpha/a.md (q-1): rejected: 1/4'])
    expect(bad.commit.changes[0].path).toMatch(/quarantine/)
  })

  it('a file that moved since the plan is a conflict against the file found, with a note', () => {
    const moved = stored({blob: 'd'.repeat(40)})
    const e = entryFor(plan, moved, passed, 'p-2', NOW, ids)
    expect([e.conflict, e.proposal.kind, e.proposal.base]).toEqual([true, 'conflict', 'd'.repeat(40)])
    expect(e.proposal.note).toBe(`conflict: written against ${'b'.repeat(40)}, but the file is now ${'d'.repeat(40)}`)
    // a direct write that lost the race is kept for review without a vote
    const direct = planWrite(session(), {scope: 'run:s-abcd1234', path: 'a.md', content: `x ${token}\n`, base: 'none'}, view(), NOW)
    const lost = entryFor(direct, moved, undefined, 'p-3', NOW, ids)
    expect([lost.conflict, lost.proposal.status, lost.proposal.vote, lost.commit.subject]).toEqual([true, 'pending', null, 'Keep a conflicting write to run:s-abcd1234/a.md as proposal p-3'])
    expect(lost.commit.trailers['Engram-Vote']).toBeUndefined()
    // the redaction is on record in the commit that keeps it, as in a direct commit
    expect(lost.commit.trailers['Engram-Redactions']).toBe('github-token×1')
    expect(lost.commit.changes[0].content).not.toContain(token)
  })

  it('dissent is carried into the memory\'s taint reasons, so the digest covers it', () => {
    const votes = [{validator: 'semantic', verdict: 'reject' as const, confidence: 0.5, reason: 'contradicts x'}, {validator: 'provenance', verdict: 'accept' as const, confidence: 0.9, reason: 'ok'}]
    const e = entryFor(plan, stored(), {...passed, dissent: true, votes}, 'p-4', NOW, ids)
    expect(e.proposal.memory.taint_reasons).toEqual(['vote dissent: semantic (0.50) contradicts x'])
    expect(e.digest).not.toBe(entryFor(plan, stored(), {...passed, votes}, 'p-4', NOW, ids).digest)
  })
})
