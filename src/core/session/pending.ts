import {lstatSync, readFileSync, unlinkSync} from 'node:fs'
import {join} from 'node:path'

import {writeFileAtomic} from '../store/fsutil.js'
import {privateDir, privateSubfolder, storeKey} from '../store/private.js'

/**
 * A taint that could not be recorded in the store (locked, broken, read-only) is kept
 * here, in engram's private folder beside the session secret, where the agent cannot
 * clear it: `<private>/taint-pending/<store>/<session>.json`. Every load of that session
 * counts it (sessions.ts loadSession), so the session's writes are tainted from the
 * moment the taint happened, and the next successful hook flushes it into the store.
 * A taint that cannot be recorded is assumed, never dropped (STANDARD.md R26).
 */
function pendingDir(storeRoot: string): string {
  return join(privateDir(), 'taint-pending', storeKey(storeRoot))
}

const pendingFile = (storeRoot: string, session: string) => join(pendingDir(storeRoot), `${session}.json`)

/** The reasons of the taint waiting for `session` of the store at `storeRoot`, or undefined when none waits. */
export function pendingTaint(storeRoot: string, session: string): string[] | undefined {
  const file = pendingFile(storeRoot, session)
  let text: string
  try {
    if (!lstatSync(file).isFile()) return ['a pending taint record that is not a file (assumed tainted)']
    text = readFileSync(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined
    return ['an unreadable pending taint record (assumed tainted)']
  }
  try {
    const r = JSON.parse(text) as {reasons?: unknown}
    const reasons = Array.isArray(r.reasons) ? r.reasons.filter((x): x is string => typeof x === 'string' && x.length > 0) : []
    return reasons.length > 0 ? reasons : ['a pending taint record without a reason (assumed tainted)']
  } catch {
    // torn or edited: still a taint, only its reason is lost
    return ['a malformed pending taint record (assumed tainted)']
  }
}

/** Keep a taint for later (durably: fsync'd); reasons are already redacted and clipped by the caller. */
export function recordPendingTaint(storeRoot: string, session: string, reason: string): string {
  privateSubfolder('taint-pending', storeKey(storeRoot))
  const file = pendingFile(storeRoot, session)
  const have = pendingTaint(storeRoot, session) ?? []
  const reasons = have.includes(reason) ? have : [...have, reason]
  writeFileAtomic(file, `${JSON.stringify({store: storeRoot, session, reasons, updated: new Date().toISOString()}, null, 2)}\n`, 0o600, {fsync: true})
  return file
}

/** Drop the pending taint once its reasons are in the store, unless more arrived meanwhile. */
export function clearPendingTaint(storeRoot: string, session: string, flushed: string[]): void {
  const now = pendingTaint(storeRoot, session)
  if (!now || now.some((r) => !flushed.includes(r))) return
  try {
    unlinkSync(pendingFile(storeRoot, session))
  } catch {
    // gone already
  }
}
