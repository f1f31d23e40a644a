import {readFileSync, rmSync} from 'node:fs'
import {join} from 'node:path'

import {writeFileAtomic} from '../store/fsutil.js'
import {sha256Hex} from '../memory/hash.js'
import {configDir} from './keys.js'
import type {Store} from '../store/store.js'

/**
 * Manifest rollback defence. A manifest's serial only grows; an attacker who puts back an
 * older validly-signed manifest together with the old files it lists would otherwise pass
 * every signature check. The witness is the highest serial this machine has seen (kept
 * beside the private keys, out of the agent's reach like them), raised from the manifest's
 * own committed history (manifest.ts `raiseFromHistory`) so that a machine with no state
 * (a new host, CI) refuses a rollback too (STANDARD R13).
 */
function stateFile(store: Store): string {
  return join(configDir(), 'state', `${sha256Hex(store.root).slice(0, 16)}.json`)
}

interface State {
  manifests: Record<string, number>
  /** where each highest serial was seen: a commit id, or absent when on this machine (an accept, a verify) */
  seen_in: Record<string, string>
  /** the HEAD and trusted owners committed history was last scanned at: state and scan go together */
  scanned?: {head: string; owners: string}
}

function readState(store: Store): State {
  try {
    const data = JSON.parse(readFileSync(stateFile(store), 'utf8'))
    const manifests = data && typeof data === 'object' && data.manifests && typeof data.manifests === 'object' ? data.manifests : {}
    const seenIn = data && typeof data.seen_in === 'object' && data.seen_in ? data.seen_in : {}
    const scanned = data && data.scanned && typeof data.scanned.head === 'string' && typeof data.scanned.owners === 'string' ? data.scanned : undefined
    return {manifests, seen_in: seenIn, scanned}
  } catch {
    return {manifests: {}, seen_in: {}}
  }
}

export function seenSerials(store: Store): Record<string, number> {
  return readState(store).manifests
}

/** The commit the highest serial of a scope was seen in, when it came from history. */
export function serialSeenIn(store: Store, scope: string): string | undefined {
  const c = readState(store).seen_in[scope]
  return typeof c === 'string' ? c : undefined
}

/** Where committed history was last scanned (manifest.ts raiseFromHistory), or undefined. */
export function historyScanned(store: Store): {head: string; owners: string} | undefined {
  return readState(store).scanned
}

export function markHistoryScanned(store: Store, head: string, owners: string): void {
  writeState(store, {...readState(store), scanned: {head, owners}})
}

function writeState(store: Store, state: State): void {
  try {
    writeFileAtomic(stateFile(store), `${JSON.stringify(state, null, 2)}\n`, 0o600)
  } catch {
    // a read-only config folder only loses this witness; history is scanned again next time
  }
}

/** A new store at a path forgets what an old store there had seen (called by init). */
export function forgetSerials(store: Store): void {
  rmSync(stateFile(store), {force: true})
}

/** Remember a serial this machine has seen verify, and in which commit when from history (never lowers what is recorded). */
export function recordSerial(store: Store, scope: string, serial: number, commit?: string): void {
  const state = readState(store)
  if ((state.manifests[scope] ?? 0) >= serial) return
  const seenIn = {...state.seen_in}
  if (commit) seenIn[scope] = commit
  else delete seenIn[scope]
  writeState(store, {...state, manifests: {...state.manifests, [scope]: serial}, seen_in: seenIn})
}
