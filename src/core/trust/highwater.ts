import {readFileSync, rmSync} from 'node:fs'
import {join} from 'node:path'

import {writeFileAtomic} from '../store/fsutil.js'
import {sha256Hex} from '../memory/hash.js'
import {catBlobs, gitRead, headCommit} from '../git/git.js'
import {readHeadFromFiles} from '../index/head.js'
import {verificationFailed} from '../store/errors.js'
import {configDir, type Keyring} from './keys.js'
import {MANIFESTS_DIR, manifestPath, parseManifest, verifyManifest} from './manifest.js'
import type {Store} from '../store/store.js'

/**
 * Manifest rollback defence. A manifest's serial only grows; an attacker who puts back an
 * older validly-signed manifest together with the old files it lists would otherwise pass
 * every signature check. The witness is the highest serial this machine has seen (kept
 * beside the private keys, out of the agent's reach like them), raised from the manifest's
 * own committed history (`raiseFromHistory` below) so that a machine with no state
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

/** Where committed history was last scanned (raiseFromHistory), or undefined. */
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

// ---------------------------------------------------------------- committed history

/**
 * The highest serial of each scope's manifest in the store's committed history (every
 * ancestor of HEAD, both sides of a merge: a newer accept hidden as the second parent of a
 * `merge -s ours` still counts), counting only versions whose signature verifies under a
 * trusted owner key now: an unsigned or agent-signed "serial 10^9" committed and reverted
 * counts for nothing. Each counted serial is recorded in this machine's state, so a machine
 * with no state (a new host, CI) refuses a committed rollback (STANDARD R13). Returns the
 * state's serials raised by history.
 *
 * One `git log -p` of the manifests folder reads each version's serial line from its diff
 * (not every version's whole file); only versions above what is known are fetched and
 * verified, highest first, until one verifies. The scan is remembered in the same state
 * file, per HEAD and set of trusted owners, and resumed from the last HEAD scanned
 * (`last..HEAD`, i.e. every ancestor of HEAD not reachable from the last one, side branches
 * merged since included): state only grows, so what an earlier scan counted stays counted. A history git cannot read (a shallow
 * clone, which engram reads without its shallow file) fails closed.
 */
export async function raiseFromHistory(store: Store, keyring: Keyring): Promise<Record<string, number>> {
  const head = readHeadFromFiles(store.top) ?? (await headCommit(store.top))
  if (head === undefined) return seenSerials(store)
  // The scan mode is part of the key: a scan made when only the first parent was read is not trusted.
  const owners = `ancestry;${keyring.ownersKey()}`
  const cached = historyScanned(store)
  if (cached && cached.head === head && cached.owners === owners) return seenSerials(store)
  const dir = store.gitPath(MANIFESTS_DIR)
  const args = (range: string) => ['log', '--full-history', '--diff-merges=separate', '-p', '--unified=0', '--no-renames', '--no-color', '--no-ext-diff', '--no-textconv', '--format=%x00%H', '--end-of-options', range, '--', `${dir}/`]
  let out: string | undefined
  if (cached && cached.owners === owners && /^[0-9a-f]{40,64}$/.test(cached.head)) {
    try {
      out = await gitRead(store.top, args(`${cached.head}..${head}`))
    } catch {
      out = undefined // the old HEAD is gone (history rewritten): scan it all
    }
  }
  if (out === undefined) {
    try {
      out = await gitRead(store.top, args(head))
    } catch {
      throw verificationFailed(
        'The history of this store\'s manifests cannot be read (a shallow clone?), so a rollback cannot be ruled out; no curated memory is served.',
        'fetch the full history (`git fetch --unshallow`), or clone without --depth',
      )
    }
  }
  const seen = seenSerials(store)
  const candidates: {scope: string; rel: string; serial: number; commit: string}[] = []
  for (const chunk of out.split('\0')) {
    const lines = chunk.split('\n')
    const commit = lines[0]?.trim()
    if (!commit || !/^[0-9a-f]{40,64}$/.test(commit)) continue
    let rel: string | undefined
    for (const line of lines) {
      if (line.startsWith('+++ ')) {
        const f = line.slice(4).replace(/^b\//, '')
        rel = f.startsWith(store.prefix) && f.endsWith('.json') ? f.slice(store.prefix.length) : undefined
        continue
      }
      const m = rel ? /^\+ {2}"serial": (\d{1,15}),$/.exec(line) : null
      if (!m || !rel) continue
      const scope = rel.slice(MANIFESTS_DIR.length + 1, -5).replace('_', ':')
      const serial = Number(m[1])
      if (serial > (seen[scope] ?? 0)) candidates.push({scope, rel, serial, commit})
    }
  }
  candidates.sort((a, b) => b.serial - a.serial)
  const done = new Set<string>()
  const specs = candidates.map((c) => `${c.commit}:${store.gitPath(c.rel)}`)
  for await (const {index, data} of catBlobs(store, specs)) {
    const c = candidates[index]
    if (done.has(c.scope) || !data) continue
    try {
      const m = parseManifest(data.toString('utf8'), `${c.rel} at ${c.commit.slice(0, 10)}`)
      if (m.scope !== c.scope || manifestPath(m.scope) !== c.rel || m.serial !== c.serial || !verifyManifest(keyring, m).ok) continue
    } catch {
      continue
    }
    done.add(c.scope)
    recordSerial(store, c.scope, c.serial, c.commit)
    seen[c.scope] = Math.max(seen[c.scope] ?? 0, c.serial)
  }
  markHistoryScanned(store, head, owners)
  return seen
}
