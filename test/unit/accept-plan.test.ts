/**
 * The accept's plan (src/core/review/accept-plan.ts) without git: a real proposal (made by
 * the write path's plan), a real keyring and signed manifests, and a view over fixtures.
 */
import {describe, expect, it} from 'vitest'

import {DEFAULT_CONFIG} from '../../src/core/store/config.js'
import {EngramError} from '../../src/core/store/errors.js'
import {AcceptView, planAccept, planSignedChange} from '../../src/core/review/accept-plan.js'
import {Proposal, proposalDigest} from '../../src/core/review/proposal.js'
import type {Recheck} from '../../src/core/review/recheck.js'
import {Keyring} from '../../src/core/trust/keys.js'
import {Manifest, signManifest} from '../../src/core/trust/manifest.js'
import {generateKeyPair} from '../../src/core/trust/sign.js'
import type {SessionRecord} from '../../src/core/session/sessions.js'
import {entryFor, planWrite} from '../../src/core/write/plan.js'

const owner = generateKeyPair('alice')
const stranger = generateKeyPair('mallory')
const keyring = new Keyring({records: [], revocations: [], roots: [{keyid: owner.keyid, name: owner.name, publicKey: owner.publicKey, reason: 'root: test'}]})
const session: SessionRecord = {
  id: 's-abcd1234', agent: 'claude-code', assigned: 'project:alpha', reads: [], tainted: true, taint_reasons: ['read mail'],
  created: '2026-01-01T00:00:00.000Z', updated: '2026-01-01T00:00:00.000Z', proof: 'x',
}
const NOW = '2026-02-03T04:05:06.000Z'

function proposal(over: Partial<Proposal> = {}): Proposal {
  const plan = planWrite(session, {scope: 'project:alpha', path: 'notes/a.md', content: 'deploys go out on tuesdays\n'}, {config: DEFAULT_CONFIG, read: () => undefined}, NOW)
  const e = entryFor(plan, undefined, {passed: true, dissent: false, summary: 'passed: 4/4', flags: [], votes: []}, 'p-abc123', NOW, () => 'm-1')
  return {...e.proposal, ...over}
}
const manifest = (serial: number, key = owner): Manifest => signManifest(key, {scope: 'project:alpha', entries: [], updated: NOW, serial})

function view(over: Partial<AcceptView> & {findings?: Recheck['findings']; quarantinedAs?: string} = {}): AcceptView & {rechecked: number} {
  const v = {
    rechecked: 0,
    keyring,
    async recheck() {
      v.rechecked++
      return {findings: over.findings ?? [], quarantinedAs: over.quarantinedAs ?? null, commit: null}
    },
    rel: (scope: string, path: string) => `${scope.replace(':', '/')}/${path}`,
    read: () => undefined,
    manifest: () => manifest(3),
    seenSerial: () => 3,
    ...over,
  }
  return v
}
async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p
  } catch (error) {
    return error instanceof EngramError ? error.code : `not an EngramError: ${String(error)}`
  }
  return 'no error'
}

describe('planAccept', () => {
  const reviewer = {name: owner.name, keyid: owner.keyid}

  it('plans the reviewed memory, signed by the reviewer, on the next manifest serial', async () => {
    const p = proposal()
    const digest = proposalDigest(p)
    const plan = await planAccept(p, digest.slice(0, 16), reviewer, view())
    expect(plan.digest).toBe(digest)
    expect(plan.change).toMatchObject({scope: 'project:alpha', rel: 'project/alpha/notes/a.md', serial: 4})
    expect(plan.change.memory!.frontmatter).toMatchObject({...p.memory, reviewed_by: 'alice', digest, signature: null})
    expect(plan.change.memory!.body).toBe(p.body)
    expect(plan.entry).toBe('.engram/proposals/p-abc123.md')
    expect(plan.subject).toBe('Accept create of project:alpha/notes/a.md (proposal p-abc123)')
  })

  it('takes the commit\'s provenance from the digest-covered memory, not the proposal\'s other fields', async () => {
    const p = proposal()
    const forged = {...p, author: 'owner', tainted: false}
    // the proposal-level fields are covered by the digest too, so a forged entry is reviewed as forged
    const plan = await planAccept(forged, proposalDigest(forged), reviewer, view())
    expect(plan.trailers).toMatchObject({'Engram-Author': 'claude-code', 'Engram-Tainted': true, 'Engram-Session': 's-abcd1234', 'Engram-Reviewed-By': `alice (${owner.keyid})`})
  })

  it('refuses a digest that does not match before it looks at anything else', async () => {
    const v = view()
    expect(await code(planAccept(proposal(), '0'.repeat(16), reviewer, v))).toBe('digest-mismatch')
    expect(v.rechecked).toBe(0)
  })

  it('refuses when a recomputed fact disagrees, and names a quarantined entry moved by hand', async () => {
    const p = proposal()
    const findings = [{field: 'author', stored: 'owner', recomputed: 'claude-code', source: 'session record'}]
    expect(await code(planAccept(p, proposalDigest(p), reviewer, view({findings})))).toBe('refused')
    const moved = planAccept(p, proposalDigest(p), reviewer, view({findings, quarantinedAs: 'q-1'}))
    await expect(moved).rejects.toThrow(/quarantined write \(entry q-1\)/)
  })

  it('refuses a memory whose scope is not the proposal\'s', async () => {
    const p = proposal()
    const odd = {...p, memory: {...p.memory, scope: 'project:beta'}}
    expect(await code(planAccept(odd, proposalDigest(odd), reviewer, view()))).toBe('bad-input')
  })

  it('refuses a stale proposal: the file is not the base it was made against', async () => {
    const p = proposal()
    expect(await code(planAccept(p, proposalDigest(p), reviewer, view({read: () => ({blob: 'e'.repeat(40)})})))).toBe('stale-digest')
  })

  it('plans a deletion as no memory', async () => {
    const p = proposal({operation: 'delete', base: 'f'.repeat(40)})
    const plan = await planAccept(p, proposalDigest(p), reviewer, view({read: () => ({blob: 'f'.repeat(40)})}))
    expect(plan.change.memory).toBeNull()
  })
})

describe('planSignedChange', () => {
  it('refuses to build on a manifest that does not verify, or on one older than seen', () => {
    const thrown = (fn: () => unknown) => {
      try {
        fn()
      } catch (error) {
        return (error as EngramError).code
      }
      return 'no error'
    }
    expect(thrown(() => planSignedChange(view({manifest: () => manifest(3, stranger)}), 'project:alpha', 'project/alpha/a.md', null))).toBe('verification')
    expect(thrown(() => planSignedChange(view({manifest: () => manifest(3), seenSerial: () => 5}), 'project:alpha', 'project/alpha/a.md', null))).toBe('verification')
  })

  it('puts the new serial above both the manifest and the highest seen', () => {
    expect(planSignedChange(view({manifest: () => undefined, seenSerial: () => 0}), 'project:alpha', 'r', null).serial).toBe(1)
    expect(planSignedChange(view({manifest: () => manifest(3), seenSerial: () => 1}), 'project:alpha', 'r', null).serial).toBe(4)
    // a stray high serial seen (an owner-signed manifest committed by mistake) is cleared by going above it
    expect(planSignedChange(view({manifest: () => undefined, seenSerial: () => 9}), 'project:alpha', 'r', null).serial).toBe(10)
  })
})
