import {mkdirSync, readFileSync} from 'node:fs'
import {join} from 'node:path'

import {commitChanges} from '../git/commit.js'
import {writeFileAtomic} from '../store/fsutil.js'
import {sha256Hex} from '../memory/hash.js'
import {ensurePrivateFolder, mac, privateDir, sameMac, sessionSecret} from '../store/private.js'
import {validateSessionId} from './sessions.js'
import type {Store} from '../store/store.js'

/**
 * A host's session (Claude Code's `session_id`) bound to one engram session, so a resumed,
 * compacted or cleared host session gets the same engram session back, taint and all
 * (STANDARD.md R26). The binding is committed in the store like a session record,
 * `.engram/bindings/<host>/<sha256 of the host's id>.json`, and carries a MAC made with
 * the session secret outside the store: an agent that edits it (to point at a clean
 * session) or copies another binding over it makes a binding that does not verify, which
 * counts as none — and a host session engram did not see start begins tainted.
 */
export interface HostBinding {
  host: string
  /** sha256 of the host's session id (the id itself is not kept in the store) */
  host_session: string
  session: string
  created: string
  mac: string
}

const HOST_RE = /^[a-z0-9][a-z0-9-]{0,31}$/

export const bindingFile = (host: string, hostSession: string) => `.engram/bindings/${host}/${sha256Hex(hostSession)}.json`

const bindingMac = (secret: Buffer, b: Omit<HostBinding, 'mac'>) => mac(secret, 'engram-host-binding', b.host, b.host_session, b.session, b.created)

export type BindingLookup = {binding: HostBinding} | {binding?: undefined; problem?: string}

/** The verified binding of a host session, or none (with why, when a file was there but does not verify). */
export function readBinding(store: Store, host: string, hostSession: string): BindingLookup {
  if (!HOST_RE.test(host)) throw new Error(`bad host name ${host}`)
  const rel = bindingFile(host, hostSession)
  let text: string | undefined
  try {
    text = store.readText(rel)
  } catch {
    return {problem: `${rel} is not a regular file`}
  }
  if (text === undefined) return {}
  let r: Record<string, unknown>
  try {
    const parsed: unknown = JSON.parse(text)
    r = parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {}
  } catch {
    return {problem: `${rel} is not valid JSON`}
  }
  const {session, created, mac: proof} = r
  if (typeof session !== 'string' || typeof created !== 'string' || typeof proof !== 'string') return {problem: `${rel} is not a binding`}
  const b = {host, host_session: sha256Hex(hostSession), session, created}
  let secret: Buffer
  try {
    secret = sessionSecret(false)
  } catch {
    return {problem: 'no session secret on this machine to check the binding with'}
  }
  if (r.host !== host || r.host_session !== b.host_session || !sameMac(proof, bindingMac(secret, b))) {
    return {problem: `${rel} does not carry engram's proof (edited, or copied from another session)`}
  }
  try {
    validateSessionId(session)
  } catch {
    return {problem: `${rel} names no session`}
  }
  return {binding: {...b, mac: proof}}
}

/** Bind (or re-bind) a host session to an engram session and commit it. The caller holds the store lock. */
export async function writeBinding(store: Store, host: string, hostSession: string, session: string, why: string): Promise<HostBinding> {
  const base = {host, host_session: sha256Hex(hostSession), session, created: new Date().toISOString()}
  const b: HostBinding = {...base, mac: bindingMac(sessionSecret(true), base)}
  await commitChanges(store, {
    subject: `Bind ${host} session ${b.host_session.slice(0, 12)} to ${session}`,
    body: why,
    trailers: {'Engram-Session': session},
    changes: [{path: bindingFile(host, hostSession), content: `${JSON.stringify(b, null, 2)}\n`}],
  })
  rememberBinding(store.root, b)
  return b
}

/**
 * A copy of the binding in the private folder, `<private>/bindings/<host>/<hash>.json`: when
 * the store cannot be opened at all, a taint hook still knows which session of which store
 * to mark (pending.ts). Best effort: the committed binding is the one that counts.
 */
function rememberBinding(storeRoot: string, b: HostBinding): void {
  try {
    const dir = join(privateDir(), 'bindings', b.host)
    ensurePrivateFolder(privateDir(), true)
    mkdirSync(dir, {recursive: true, mode: 0o700})
    writeFileAtomic(join(dir, `${b.host_session}.json`), `${JSON.stringify({store: storeRoot, session: b.session})}\n`, 0o600, {fsync: false})
  } catch {
    // the committed binding still holds
  }
}

/** The private copy of a binding: the store's real path and the session, or undefined. */
export function rememberedBinding(host: string, hostSession: string): {store: string; session: string} | undefined {
  if (!HOST_RE.test(host)) return undefined
  try {
    const r = JSON.parse(readFileSync(join(privateDir(), 'bindings', host, `${sha256Hex(hostSession)}.json`), 'utf8')) as {store?: unknown; session?: unknown}
    if (typeof r.store !== 'string' || typeof r.session !== 'string') return undefined
    validateSessionId(r.session)
    return {store: r.store, session: r.session}
  } catch {
    return undefined
  }
}
