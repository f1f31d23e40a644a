/**
 * The keyring's decision (src/core/trust/keys.ts decideKeys) from plain records, revocations
 * and roots: no repository, no config folder.
 */
import {describe, expect, it} from 'vitest'

import {KeyringInput, Keyring, decideKeys, publicKeyPath, publicKeyRecord, revocationPath, revocationRecord} from '../../src/core/trust/keys.js'
import {generateKeyPair} from '../../src/core/trust/sign.js'

const root = generateKeyPair('alice')
const bob = generateKeyPair('bob')
const carol = generateKeyPair('carol')
const dream = generateKeyPair('dreamer')
const eve = generateKeyPair('eve')
const rootOf = (k = root) => ({keyid: k.keyid, name: k.name, publicKey: k.publicKey, reason: 'root: pinned in the test'})
const rec = (k: typeof root, role: 'owner' | 'dreamer', by: typeof root) => ({path: publicKeyPath(k.name), text: publicKeyRecord(k, role, by, '2026-01-01T00:00:00.000Z')})
const status = (input: KeyringInput) => {
  const d = decideKeys(input)
  return Object.fromEntries([...d.infos.values()].map((i) => [i.name, `${i.status} ${i.role}`]))
}

describe('decideKeys', () => {
  it('trusts the roots and what owners reachable from them endorse, chains included; nothing else', () => {
    const input: KeyringInput = {
      roots: [rootOf()],
      records: [rec(root, 'owner', root), rec(bob, 'owner', root), rec(carol, 'owner', bob), rec(dream, 'dreamer', root), rec(eve, 'owner', eve)],
      revocations: [],
    }
    expect(status(input)).toEqual({alice: 'trusted owner', bob: 'trusted owner', carol: 'trusted owner', dreamer: 'trusted dreamer', eve: 'untrusted owner'})
    expect(decideKeys(input).infos.get(eve.keyid)?.reason).toBe('self-endorsed, but not a root key pinned on this machine')
  })

  it('without a root nothing is trusted, whatever the records say', () => {
    expect(status({roots: [], records: [rec(root, 'owner', root), rec(bob, 'owner', root)], revocations: []})).toEqual({alice: 'untrusted owner', bob: 'untrusted owner'})
  })

  it('dreamers cannot endorse', () => {
    const s = status({roots: [rootOf()], records: [rec(dream, 'dreamer', root), rec(eve, 'owner', dream)], revocations: []})
    expect(s.eve).toBe('untrusted owner')
  })

  it('a revocation by an owner removes trust from the key and what it endorsed, except what it keeps', () => {
    const revoke = (keep: string[]) => ({path: revocationPath('bob'), text: revocationRecord(bob, root, {reason: 'lost', keep, revokedAt: '2026-02-01T00:00:00.000Z'})})
    const records = [rec(bob, 'owner', root), rec(carol, 'owner', bob), rec(dream, 'dreamer', bob)]
    expect(status({roots: [rootOf()], records, revocations: [revoke([])]})).toMatchObject({bob: 'revoked owner', carol: 'untrusted owner', dreamer: 'untrusted dreamer'})
    expect(status({roots: [rootOf()], records, revocations: [revoke([carol.keyid])]})).toMatchObject({bob: 'revoked owner', carol: 'trusted owner', dreamer: 'untrusted dreamer'})
    // a revocation signed by an untrusted key counts for nothing
    const forged = {path: revocationPath('bob'), text: revocationRecord(bob, eve, {revokedAt: '2026-02-01T00:00:00.000Z'})}
    expect(status({roots: [rootOf()], records, revocations: [forged]}).bob).toBe('trusted owner')
  })

  it('a malformed record is kept as broken, under its file name', () => {
    const d = decideKeys({roots: [rootOf()], records: [{path: '.engram/keys/junk.pub', text: 'not a record\n'}], revocations: []})
    expect(d.broken.map((b) => [b.name, b.status])).toEqual([['junk', 'untrusted']])
  })

  it('the Keyring is exactly these decisions', () => {
    const input: KeyringInput = {roots: [rootOf()], records: [rec(bob, 'owner', root), rec(eve, 'owner', eve)], revocations: []}
    const ring = new Keyring(input)
    const d = decideKeys(input)
    expect(ring.list().map((k) => [k.name, k.status]).sort()).toEqual([...d.infos.values(), ...d.broken].map((k) => [k.name, k.status]).sort())
    expect(ring.isOwner(bob.keyid)).toBe(true)
    expect(ring.isOwner(eve.keyid)).toBe(false)
    expect(Buffer.from(ring.publicKey(eve.keyid)!).equals(Buffer.from(eve.publicKey))).toBe(true)
  })
})
