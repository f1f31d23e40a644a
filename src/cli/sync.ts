import {Flags} from '@oclif/core'

import {ownerKey} from '../core/review/review.js'
import {EngramError} from '../core/store/errors.js'
import type {Store} from '../core/store/store.js'
import {insideSession} from '../core/session/sessions.js'
import {SyncResult, syncStore} from '../core/sync/sync.js'

/** `--sync` of write and review accept: exchange with the remote this machine syncs with, once the change is committed. */
export const syncFlag = Flags.boolean({description: 'then sync with the remote this machine syncs with (`engram sync`)'})

/** One line for people about a sync's outcome. */
export function syncLine(r: SyncResult): string {
  const what = r.integrated === 'merge' ? 'merged the remote\'s changes' : r.integrated === 'fast-forward' ? 'took the remote\'s changes' : 'nothing new from the remote'
  const pushed = r.pushed ? `pushed ${r.after?.slice(0, 10) ?? ''}` : 'nothing to push'
  return `synced with ${r.remote} (${r.branch}): ${what}, ${pushed}${r.attempts > 1 ? ` (${r.attempts} attempts)` : ''}`
}

/** Sync after a committed change; a failure says the change itself is kept (the exit code is the sync's). */
export async function syncAfter(store: Store, done: string, keyName?: string): Promise<SyncResult> {
  try {
    return await syncStore(store, {session: insideSession(), unlock: insideSession() ? undefined : async () => (await ownerKey(store, keyName)).key})
  } catch (error) {
    if (!(error instanceof EngramError)) throw error
    throw new EngramError(error.code, `${done}, but the sync failed: ${error.message}`, {nextStep: error.nextStep, data: error.data})
  }
}
