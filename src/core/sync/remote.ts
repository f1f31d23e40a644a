/**
 * Where a store syncs to, and the last remote commit it synced with: machine state beside
 * the trust pins (`$ENGRAM_CONFIG_DIR/state/sync-<store>.json`), never the store's own
 * `.git/config`. The agent can write the store (cooperative mode) and so its git config:
 * a remote named there could point the owner's sync at another repository, and a
 * `url.*.insteadOf`, `uploadpack` or `sshCommand` there would run a program. So the remote
 * is set by the owner, kept here, and every network git call runs in a repository engram
 * makes for the call (transport.ts).
 */
import {readFileSync} from 'node:fs'
import {isAbsolute, join, resolve} from 'node:path'

import {configDir} from '../store/cachefile.js'
import {badInput} from '../store/errors.js'
import {writeFileAtomic} from '../store/fsutil.js'
import {sha256Hex} from '../memory/hash.js'
import type {Store} from '../store/store.js'

export interface SyncState {
  v: 1
  /** the store's real path: the state belongs to this store on this machine */
  store: string
  url: string
  branch: string
  /** the remote commit this host last fetched or pushed, and when: the remote must keep it in its history */
  last?: {commit: string; at: string}
}

export function syncStateFile(store: Store): string {
  return join(configDir(), 'state', `sync-${sha256Hex(store.root).slice(0, 16)}.json`)
}

export function readSyncState(store: Store): SyncState | undefined {
  let data: Partial<SyncState>
  try {
    data = JSON.parse(readFileSync(syncStateFile(store), 'utf8'))
  } catch {
    return undefined
  }
  if (!data || data.v !== 1 || data.store !== store.root || typeof data.url !== 'string' || typeof data.branch !== 'string') return undefined
  const last = data.last && typeof data.last.commit === 'string' && /^[0-9a-f]{40}$/.test(data.last.commit) && typeof data.last.at === 'string' ? data.last : undefined
  return {v: 1, store: store.root, url: data.url, branch: data.branch, ...(last ? {last} : {})}
}

export function writeSyncState(store: Store, state: SyncState): void {
  writeFileAtomic(syncStateFile(store), `${JSON.stringify(state, null, 2)}\n`, 0o600)
}

/**
 * A remote as the owner gives it: an absolute path or `file://` URL (a local bare
 * repository, as the tests use), `ssh://…`, `user@host:path`, `https://…` or `git://…`.
 * Anything else is refused: git's `<transport>::` form runs a helper program (`ext::` any
 * command), an option-like value would be read as an option. A relative path is made
 * absolute against `cwd`.
 */
export function checkRemoteUrl(raw: string, cwd = process.cwd()): string {
  const url = raw.trim()
  const bad = (why: string) => badInput(`Remote "${url.slice(0, 200)}" ${why}.`, 'give an absolute path, file://, ssh://, https:// or user@host:path')
  if (!url) throw bad('is empty')
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(url)) throw bad('holds control characters')
  if (url.startsWith('-')) throw bad('starts with "-" (it would be read as an option)')
  if (url.includes('::')) throw bad('names a git transport helper ("<transport>::"), which runs a program')
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\//.exec(url)?.[1]?.toLowerCase()
  if (scheme) {
    if (!['file', 'ssh', 'https', 'http', 'git'].includes(scheme)) throw bad(`uses the "${scheme}" protocol`)
    if (scheme === 'ssh' && /^ssh:\/\/-/.test(url)) throw bad('names a host starting with "-"')
    return url
  }
  // scp-like user@host:path (no slash before the colon)
  if (/^[^/:]+:/.test(url)) {
    if (/^[^@/:]*@?-/.test(url)) throw bad('names a host starting with "-"')
    return url
  }
  return isAbsolute(url) ? url : resolve(cwd, url)
}

/** A branch name as git would take it, never an option or a path trick. */
export function checkBranch(raw: string): string {
  const b = raw.trim()
  if (!/^[A-Za-z0-9][A-Za-z0-9._/-]{0,100}$/.test(b) || b.includes('..') || b.endsWith('/') || b.endsWith('.lock') || b.includes('//')) {
    throw badInput(`Branch "${b.slice(0, 100)}" is not a branch name engram syncs.`, 'e.g. --branch main')
  }
  return b
}
