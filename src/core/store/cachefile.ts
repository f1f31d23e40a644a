import {readFileSync} from 'node:fs'
import {homedir} from 'node:os'
import {join} from 'node:path'

import {sha256Hex} from '../memory/hash.js'
import {writeFileAtomic} from './fsutil.js'

/** `$ENGRAM_CONFIG_DIR`, or `~/.config/engram`: private keys, trust pins, state and caches. */
export function configDir(): string {
  return process.env.ENGRAM_CONFIG_DIR || join(homedir(), '.config', 'engram')
}

/**
 * Facts engram remembers about one store between commands, beside the private keys (the
 * agent can write the store, not this folder): `cache/<kind>/<store>.json`, one file per
 * store and kind, tied to the store's real path. A cache is derived data: unreadable,
 * malformed or missing means the next command works it out again, so it is replaced by a
 * rename without fsync, and a failure to write it is ignored.
 */
function storeCachePath(kind: string, root: string): string {
  return join(configDir(), 'cache', kind, `${sha256Hex(root).slice(0, 16)}.json`)
}

export function readStoreCache(kind: string, root: string): Record<string, unknown> | undefined {
  try {
    const data = JSON.parse(readFileSync(storeCachePath(kind, root), 'utf8'))
    return data && data.v === 1 && data.root === root ? data : undefined
  } catch {
    return undefined
  }
}

export function writeStoreCache(kind: string, root: string, data: Record<string, unknown>): void {
  const file = storeCachePath(kind, root)
  try {
    writeFileAtomic(file, JSON.stringify({...data, v: 1, root}), 0o600, {fsync: false})
  } catch {
    // a read-only config folder only makes the next command slower
  }
}
