import {describe, expect, it} from 'vitest'

import {Keyring, publicKeyRecord} from '../../src/core/trust/keys.js'
import {MemoryFile, parseMemory, serializeMemory} from '../../src/core/memory/memory.js'
import {
  formatSignature,
  generateKeyPair,
  keyIdOf,
  parseSignature,
  signBytes,
  signMemory,
  verifyBytes,
  verifyMemory,
} from '../../src/core/trust/sign.js'

const memory = (over: Partial<MemoryFile['frontmatter']> = {}, body = 'Deploys go out on Tuesdays.\n'): MemoryFile => ({
  frontmatter: {
    id: 'm-1',
    title: 'Deploy day',
    scope: 'project:web',
    tags: ['ops'],
    author: 'alice',
    source_session: null,
    origin: 'owner',
    tainted: false,
    taint_reasons: [],
    created: '2025-01-01T00:00:00.000Z',
    updated: '2025-01-01T00:00:00.000Z',
    version: 1,
    proposal: null,
    reviewed_by: 'alice',
    digest: null,
    signature: null,
    ...over,
  },
  body,
})

/** A keyring whose root is `owner` (as if it were in the store's initial key commit). */
function ringWith(owner = generateKeyPair('alice')) {
  const dreamer = generateKeyPair('dream')
  const ring = new Keyring({
    records: [
      {path: '.engram/keys/alice.pub', text: publicKeyRecord(owner, 'owner', owner)},
      {path: '.engram/keys/dream.pub', text: publicKeyRecord(dreamer, 'dreamer', owner)},
    ],
    revocations: [],
    roots: [{keyid: owner.keyid, name: 'alice', publicKey: owner.publicKey, reason: 'root: test'}],
  })
  return {owner, dreamer, ring}
}

const PATH = 'project/web/deploy-day.md'

describe('signBytes / verifyBytes', () => {
  it('round-trips, and noble signatures verify with node:crypto', () => {
    const kp = generateKeyPair('alice')
    const sig = signBytes(kp.secretKey, 'hello')
    expect(sig.length).toBe(64)
    expect(verifyBytes(kp.publicKey, 'hello', sig)).toBe(true)
    expect(verifyBytes(kp.publicKey, 'hellO', sig)).toBe(false)
    expect(verifyBytes(generateKeyPair('bob').publicKey, 'hello', sig)).toBe(false)
  })

  it('key id is the first 16 hex of sha256(public key)', () => {
    const kp = generateKeyPair('alice')
    expect(kp.keyid).toMatch(/^[0-9a-f]{16}$/)
    expect(kp.keyid).toBe(keyIdOf(kp.publicKey))
  })

  it('formats and parses ed25519:<keyid>:<base64>, rejecting anything else', () => {
    const kp = generateKeyPair('alice')
    const s = formatSignature(kp.keyid, signBytes(kp.secretKey, 'x'))
    expect(s).toMatch(/^ed25519:[0-9a-f]{16}:[A-Za-z0-9+/]{86}==$/)
    const p = parseSignature(s)
    expect(p?.keyid).toBe(kp.keyid)
    expect(verifyBytes(kp.publicKey, 'x', p!.sig)).toBe(true)
    expect(parseSignature('ed25519:zz:abc')).toBeUndefined()
    expect(parseSignature(s.replace('ed25519', 'rsa'))).toBeUndefined()
    expect(parseSignature(`${s} `)).toBeUndefined()
  })
})

describe('signMemory / verifyMemory', () => {
  it('a signed memory verifies, also after a write and re-parse; the input is not mutated', () => {
    const {owner, ring} = ringWith()
    const m = memory()
    const signed = signMemory(owner, PATH, m)
    expect(m.frontmatter.signature).toBeNull()
    expect(signed.frontmatter.signature).toMatch(new RegExp(`^ed25519:${owner.keyid}:`))
    expect(verifyMemory(ring, PATH, signed)).toEqual({ok: true, keyid: owner.keyid, role: 'owner'})
    const reparsed = parseMemory(serializeMemory(signed), PATH)
    expect(verifyMemory(ring, PATH, reparsed).ok).toBe(true)
  })

  it('an unsigned memory is reported unsigned', () => {
    const {ring} = ringWith()
    expect(verifyMemory(ring, PATH, memory())).toMatchObject({ok: false, problem: 'unsigned'})
  })

  it('a hand edit of the body or of any frontmatter field fails', () => {
    const {owner, ring} = ringWith()
    const signed = signMemory(owner, PATH, memory())
    expect(verifyMemory(ring, PATH, {...signed, body: 'Deploys go out on Fridays.\n'})).toMatchObject({ok: false, problem: 'bad-signature'})
    const edits: Partial<MemoryFile['frontmatter']>[] = [
      {id: 'm-2'},
      {title: 'x'},
      {tags: ['ops', 'x']},
      {author: 'mallory'},
      {source_session: 's-1'},
      {origin: 'webpage'},
      {tainted: true},
      {taint_reasons: ['web']},
      {created: '2024-01-01T00:00:00.000Z'},
      {updated: '2026-01-01T00:00:00.000Z'},
      {version: 2},
      {proposal: 'p-1'},
      {reviewed_by: 'mallory'},
      {digest: 'ab'},
    ]
    for (const edit of edits) {
      const tampered = {frontmatter: {...signed.frontmatter, ...edit}, body: signed.body}
      expect(verifyMemory(ring, PATH, tampered), JSON.stringify(edit)).toMatchObject({ok: false, problem: 'bad-signature'})
    }
  })

  it('a file moved to another path or scope fails', () => {
    const {owner, ring} = ringWith()
    const signed = signMemory(owner, PATH, memory())
    expect(verifyMemory(ring, 'project/web/other.md', signed)).toMatchObject({ok: false, problem: 'bad-signature'})
    expect(verifyMemory(ring, 'tenant/acme/deploy-day.md', signed)).toMatchObject({ok: false, problem: 'bad-signature'})
    const rescoped = {frontmatter: {...signed.frontmatter, scope: 'tenant:acme'}, body: signed.body}
    expect(verifyMemory(ring, 'tenant/acme/deploy-day.md', rescoped)).toMatchObject({ok: false, problem: 'bad-signature'})
  })

  it('a signature by a key the keyring does not trust is an unknown key', () => {
    const {ring} = ringWith()
    const stranger = generateKeyPair('mallory')
    expect(verifyMemory(ring, PATH, signMemory(stranger, PATH, memory()))).toMatchObject({ok: false, problem: 'unknown-key'})
  })

  it('a dreamer key cannot sign curated memory', () => {
    const {dreamer, ring} = ringWith()
    expect(ring.trusted(dreamer.keyid)?.role).toBe('dreamer')
    expect(verifyMemory(ring, PATH, signMemory(dreamer, PATH, memory()))).toMatchObject({ok: false, problem: 'not-owner'})
  })

  it('a garbled signature is a bad signature, not a crash', () => {
    const {ring} = ringWith()
    expect(verifyMemory(ring, PATH, memory({signature: 'ed25519:nonsense'}))).toMatchObject({ok: false, problem: 'bad-signature'})
  })
})
