import {describe, expect, it} from 'vitest'

import {canonicalJson} from '../../src/core/memory/canonical.js'
import {ORIGINS, type MemoryFrontmatter, normaliseBody} from '../../src/core/memory/memory.js'
import {type Proposal, parseProposal, proposalDigest, serializeProposal} from '../../src/core/review/proposal.js'
import {fc, runs} from './properties-seed.js'

/** The same value with every object's keys in another order (chosen by `seed`). */
function reorder(value: unknown, seed: number): unknown {
  if (Array.isArray(value)) return value.map((v, i) => reorder(v, seed + i))
  if (value === null || typeof value !== 'object') return value
  const keys = Object.keys(value)
  const out: Record<string, unknown> = {}
  for (let i = 0; i < keys.length; i++) {
    const k = keys[(i * 7 + seed) % keys.length] ?? keys[i]
    if (!Object.hasOwn(out, k)) Object.defineProperty(out, k, {value: reorder((value as Record<string, unknown>)[k], seed + 1), enumerable: true, writable: true, configurable: true})
  }
  for (const k of keys) if (!Object.hasOwn(out, k)) Object.defineProperty(out, k, {value: reorder((value as Record<string, unknown>)[k], seed + 1), enumerable: true, writable: true, configurable: true})
  return out
}

// JSON values whose keys include the awkward ones ("__proto__", "constructor", numeric keys)
const key = fc.oneof(fc.string({maxLength: 8}), fc.constantFrom('__proto__', 'constructor', 'toString', '1', '01', '-1', ''))
const jsonValue = fc.letrec((tie) => ({
  value: fc.oneof({depthSize: 'small'}, fc.constant(null), fc.boolean(), fc.integer(), fc.double({noNaN: true, noDefaultInfinity: true}), fc.string({unit: 'binary', maxLength: 10}), tie('arr'), tie('obj')),
  arr: fc.array(tie('value'), {maxLength: 4}),
  obj: fc.dictionary(key, tie('value'), {maxKeys: 5}).map((d) => JSON.parse(JSON.stringify(d)) as unknown),
})).value

describe('properties: canonical JSON', () => {
  it('is deterministic, independent of key order, and reads back as the same value', () => {
    fc.assert(
      fc.property(jsonValue, fc.nat(1000), (v, seed) => {
        const c = canonicalJson(v)
        expect(canonicalJson(v)).toBe(c)
        expect(canonicalJson(reorder(v, seed))).toBe(c)
        // nothing is lost: the canonical form parses back to the value (-0 reads as 0, as in JSON)
        expect(canonicalJson(JSON.parse(c))).toBe(c)
        expect(JSON.parse(c)).toEqual(JSON.parse(JSON.stringify(v)))
      }),
      {numRuns: runs(600)},
    )
  })

  it('a "__proto__" key is kept: two different values never share a canonical form', () => {
    expect(canonicalJson(JSON.parse('{"__proto__": {"a": 1}}'))).toBe('{"__proto__":{"a":1}}')
    expect(canonicalJson(JSON.parse('{"__proto__": {"a": 1}}'))).not.toBe(canonicalJson({}))
  })
})

// ---- proposals: serialisation round trip and the review digest --------------------
const str = fc.oneof(fc.string({maxLength: 24}), fc.string({unit: 'binary', maxLength: 24}), fc.constantFrom('', '---', '\u2028', '\u0085', '\ufffe', '\u007f', 'a: b', '"'))
const nullable = fc.option(str, {nil: null})
const hex40 = fc.string({unit: fc.constantFrom(...'0123456789abcdef'.split('')), minLength: 40, maxLength: 40})

const proposal: fc.Arbitrary<Proposal> = fc
  .record({
    id: str, status: fc.constantFrom('pending' as const, 'quarantined' as const), kind: fc.constantFrom('write' as const, 'conflict' as const, 'dream' as const, 'release' as const),
    operation: fc.constantFrom('create' as const, 'update' as const, 'delete' as const), scope: str, path: str, base: fc.option(hex40, {nil: null}),
    author: str, session: nullable, origin: fc.constantFrom(...ORIGINS), tainted: fc.boolean(), taint_reasons: fc.array(str, {maxLength: 3}), created: str,
    flags: fc.array(fc.record({flag: str, reason: str}), {maxLength: 2}),
    redactions: fc.dictionary(fc.string({unit: fc.constantFrom(...'abc-'.split('')), minLength: 1, maxLength: 6}), fc.nat(), {maxKeys: 3}),
    votes: fc.array(fc.record({validator: str, verdict: fc.constantFrom('accept', 'reject', 'abstain'), confidence: fc.double({min: 0, max: 1, noNaN: true}), reason: str}), {maxLength: 3}),
    vote: fc.option(fc.record({passed: fc.boolean(), dissent: fc.boolean(), summary: str}), {nil: null}),
    evidence: fc.array(fc.record({session: str, quote: str, source: str}, {requiredKeys: []}), {maxLength: 2}),
    note: nullable,
    title: str, tags: fc.array(str, {maxLength: 3}), created2: str, version: fc.integer({min: 1, max: 1e9}), reviewed_by: nullable, digest: nullable, signature: nullable,
    body: fc.oneof(fc.string({maxLength: 100}), fc.string({unit: 'binary', maxLength: 100})),
    // a merge's other files, and the maker's signature of an entry made without a session
    removes: fc.array(fc.record({path: str, base: fc.stringMatching(/^[0-9a-f]{40}$/)}), {maxLength: 2}),
    entrySignature: fc.option(fc.string({minLength: 1, maxLength: 40}), {nil: null}),
    // the memory's expiry (engram write --expires): absent when unset
    expires: fc.option(fc.integer({min: 0, max: 80_000}).map((d) => new Date(Date.UTC(1990, 0, 1) + d * 86_400_000).toISOString().slice(0, 10)), {nil: undefined}),
  })
  .map((r) => {
    const memory: MemoryFrontmatter = {
      id: r.id, title: r.title, scope: r.scope, tags: r.tags, author: r.author, source_session: r.session, origin: r.origin, tainted: r.tainted,
      taint_reasons: r.taint_reasons, created: r.created2, updated: r.created2, ...(r.expires ? {expires: r.expires} : {}), version: r.version, proposal: r.id, reviewed_by: r.reviewed_by, digest: r.digest, signature: r.signature,
    }
    const {title: _t, tags: _g, created2: _c, version: _v, reviewed_by: _r, digest: _d, signature: _s, entrySignature, expires: _e, ...p} = r
    return {...p, signature: entrySignature, votes: p.votes as Proposal['votes'], memory, body: p.operation === 'delete' ? '' : normaliseBody(p.body)}
  })

// every field the digest covers, and a way to change each one
const CHANGES: Record<string, (p: Proposal, s: string) => Proposal> = {
  id: (p, s) => ({...p, id: p.id + s}),
  scope: (p, s) => ({...p, scope: p.scope + s}),
  path: (p, s) => ({...p, path: p.path + s}),
  operation: (p) => ({...p, operation: p.operation === 'create' ? 'update' : 'create'}),
  base: (p, s) => ({...p, base: p.base === null ? s : null}),
  body: (p, s) => ({...p, operation: p.operation === 'delete' ? 'update' : p.operation, body: normaliseBody(p.body.trimEnd() + s)}),
  removes: (p, s) => ({...p, removes: [...p.removes, {path: s, base: '0'.repeat(40)}]}),
  ...Object.fromEntries(
    (['id', 'title', 'scope', 'author', 'created', 'updated'] as const).map((k) => [`memory.${k}`, (p: Proposal, s: string) => ({...p, memory: {...p.memory, [k]: p.memory[k] + s}})]),
  ),
  ...Object.fromEntries(
    (['source_session', 'proposal', 'reviewed_by', 'digest', 'signature'] as const).map((k) => [`memory.${k}`, (p: Proposal, s: string) => ({...p, memory: {...p.memory, [k]: p.memory[k] === null ? s : null}})]),
  ),
  'memory.tags': (p, s) => ({...p, memory: {...p.memory, tags: [...p.memory.tags, s]}}),
  'memory.taint_reasons': (p, s) => ({...p, memory: {...p.memory, taint_reasons: [...p.memory.taint_reasons, s]}}),
  'memory.origin': (p) => ({...p, memory: {...p.memory, origin: p.memory.origin === 'email' ? 'webpage' : 'email'}}),
  'memory.tainted': (p) => ({...p, memory: {...p.memory, tainted: !p.memory.tainted}}),
  'memory.version': (p) => ({...p, memory: {...p.memory, version: p.memory.version + 1}}),
  // set, moved or dropped: the expiry the accepted file will carry
  'memory.expires': (p) => ({...p, memory: {...p.memory, expires: p.memory.expires === '2031-01-01' ? '2031-01-02' : '2031-01-01'}}),
  'memory.expires dropped': (p) => {
    const {expires, ...memory} = p.memory
    return expires ? {...p, memory} : {...p, memory: {...memory, expires: '2031-01-01'}}
  },
}

describe('properties: proposal serialisation and the review digest', () => {
  it('parseProposal(serializeProposal(p)) is p, and the digest survives the round trip', () => {
    fc.assert(
      fc.property(proposal, (p) => {
        const text = serializeProposal(p)
        const back = parseProposal(text, 'p.md')
        expect(back).toEqual(JSON.parse(JSON.stringify(p)))
        expect(serializeProposal(back)).toBe(text)
        expect(proposalDigest(back)).toBe(proposalDigest(p))
      }),
      {numRuns: runs(300)},
    )
  })

  it('equal inputs give equal digests; any change to any covered field changes it', () => {
    fc.assert(
      fc.property(proposal, fc.constantFrom(...Object.keys(CHANGES)), fc.string({minLength: 1, maxLength: 4}).filter((s) => s.trim() !== ''), (p, field, s) => {
        const d = proposalDigest(p)
        expect(proposalDigest(structuredClone(p))).toBe(d)
        expect(proposalDigest(reorder(p, s.length) as Proposal)).toBe(d)
        expect(d).toMatch(/^[0-9a-f]{64}$/)
        expect(proposalDigest(CHANGES[field](p, s))).not.toBe(d)
      }),
      {numRuns: runs(800)},
    )
  })
})
