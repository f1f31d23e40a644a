import {readFileSync, rmSync} from 'node:fs'
import {join} from 'node:path'

import {writeFileAtomic} from './fsutil.js'
import {catBlobs, gitRead} from './git.js'
import {sha256Hex} from './hash.js'
import {configDir} from './keys.js'
import type {Store} from './store.js'

/**
 * Manifest rollback defence. A manifest's serial only grows; an attacker who puts back an
 * older validly-signed manifest together with the old files it lists would otherwise pass
 * every signature check. Two witnesses: the highest serial this machine has seen (kept
 * beside the private keys, out of the agent's reach like them), and — for `verify` — the
 * highest serial in the manifest's git history.
 */
function stateFile(store: Store): string {
  return join(configDir(), 'state', `${sha256Hex(store.root).slice(0, 16)}.json`)
}

export function seenSerials(store: Store): Record<string, number> {
  try {
    const data = JSON.parse(readFileSync(stateFile(store), 'utf8'))
    return data && typeof data === 'object' && data.manifests && typeof data.manifests === 'object' ? data.manifests : {}
  } catch {
    return {}
  }
}

/** A new store at a path forgets what an old store there had seen (called by init). */
export function forgetSerials(store: Store): void {
  rmSync(stateFile(store), {force: true})
}

/** Remember a serial this machine has seen verify (never lowers what is recorded). */
export function recordSerial(store: Store, scope: string, serial: number): void {
  const seen = seenSerials(store)
  if ((seen[scope] ?? 0) >= serial) return
  try {
    writeFileAtomic(stateFile(store), `${JSON.stringify({manifests: {...seen, [scope]: serial}}, null, 2)}\n`, 0o600)
  } catch {
    // a read-only config folder only loses this witness; git history remains
  }
}

/**
 * The highest serial each committed version of each manifest file carried, keyed by
 * store-relative path: one `git log` and one `git cat-file --batch` for the whole store.
 */
export async function historicSerials(store: Store, manifestsDir: string): Promise<Map<string, number>> {
  const dir = store.gitPath(manifestsDir)
  const out = await gitRead(store.top, ['log', '--format=%x00%H', '--name-only', '--', dir], {allowFail: true})
  const specs: {rel: string; spec: string}[] = []
  for (const chunk of out.split('\0').filter(Boolean)) {
    const [commit, ...files] = chunk.split('\n').map((l) => l.trim()).filter(Boolean)
    for (const f of files) if (f.endsWith('.json')) specs.push({rel: f.slice(store.prefix.length), spec: `${commit}:${f}`})
  }
  const max = new Map<string, number>()
  for await (const {index, data} of catBlobs(store, specs.map((s) => s.spec))) {
    const m = data ? /"serial":\s*(\d+)/.exec(data.toString('utf8')) : null
    if (m) max.set(specs[index].rel, Math.max(max.get(specs[index].rel) ?? 0, Number(m[1])))
  }
  return max
}
