/**
 * Signed proposals: an entry made without an agent session — by the dream job with its
 * dreamer key, or by the owner (`engram forget` without --now) — carries its maker's
 * signature instead of a session record. Review checks it (recheck.ts) and shows who
 * signed; an entry that names no session and carries no valid signature is shown as
 * unsigned and refused at accept, so "origin: dream" can never be claimed by writing a file.
 */
import type {Keyring, KeyRole} from '../trust/keys.js'
import {KeyPair, parseSignature, signToString, verifyBytes} from '../trust/sign.js'
import {Proposal, proposalSignedPayload} from './proposal.js'

export function signProposal(key: KeyPair, p: Proposal): string {
  return signToString(key, proposalSignedPayload(p))
}

export type ProposalSigner =
  | {ok: true; keyid: string; name: string; role: KeyRole}
  | {ok: false; keyid: string | null; why: string}

/**
 * Who signed a proposal, when the signature verifies by a trusted, unrevoked key whose role
 * may make it: a dreamer key only an entry of origin `dream`, an owner key any entry.
 */
export function proposalSigner(keyring: Keyring, p: Proposal): ProposalSigner {
  if (!p.signature) return {ok: false, keyid: null, why: 'unsigned'}
  const parsed = parseSignature(p.signature)
  if (!parsed) return {ok: false, keyid: null, why: 'a signature that is not of the form ed25519:<keyid>:<base64>'}
  const info = keyring.status(parsed.keyid)
  const key = keyring.trusted(parsed.keyid)
  if (!info || !key) return {ok: false, keyid: parsed.keyid, why: `signed by key ${parsed.keyid}, which is ${info ? info.status : 'not known to this store'}`}
  if (!verifyBytes(key.publicKey, proposalSignedPayload(p), parsed.sig)) {
    return {ok: false, keyid: parsed.keyid, why: `a signature by ${key.name} (${parsed.keyid}) that does not match this entry (edited after signing)`}
  }
  if (key.role === 'dreamer' && p.memory.origin !== 'dream') {
    return {ok: false, keyid: parsed.keyid, why: `signed by dreamer key ${key.name}, which may only make proposals of origin dream`}
  }
  if (key.role !== 'owner' && key.role !== 'dreamer') return {ok: false, keyid: parsed.keyid, why: `signed by a ${key.role} key`}
  return {ok: true, keyid: parsed.keyid, name: key.name, role: key.role}
}
