/**
 * Verification of a commit that is not checked out: the whole-store check of verify.ts
 * (checkStore, the same rules as `engram verify`) over the files of a commit read from
 * git's objects, with this machine's root pins and the serials it has seen. Sync runs it on
 * the commit it is about to move the store to, before anything moves: a remote whose
 * history makes a file unsigned, a manifest rolled back, a key untrusted, is refused and
 * the store is left as it was.
 */
import {catBlobs, gitRead, lsTree} from '../git/git.js'
import {Keyring, KEYS_DIR, pinnedRoots, pinnedStoreId, rootNotPinned} from '../trust/keys.js'
import {MANIFESTS_DIR} from '../trust/manifest.js'
import {CONFIG_FILE, CONFIG_SIG, checkConfigSignature} from '../store/policy.js'
import {STORE_ID_FILE} from '../trust/identity.js'
import {printable} from '../store/scope.js'
import {scopeOfPath} from '../store/scope.js'
import {seenSerials} from '../trust/highwater.js'
import {loadSession} from '../session/sessions.js'
import type {Store} from '../store/store.js'
import {VerifyProblem, VerifyView, checkStore} from '../trust/verify.js'

/** Every regular file of a commit (store-relative path → bytes), and the paths that are links or other entries. */
async function filesAt(store: Store, commit: string): Promise<{files: Map<string, Buffer>; odd: string[]}> {
  const paths: string[] = []
  const ids: string[] = []
  const odd: string[] = []
  for (const e of await lsTree(store.top, commit, {recursive: true})) {
    if (e.mode !== '100644' && e.mode !== '100755') odd.push(e.path)
    else {
      paths.push(e.path)
      ids.push(e.id)
    }
  }
  const files = new Map<string, Buffer>()
  for await (const {index, data} of catBlobs(store, ids)) if (data) files.set(paths[index], data)
  return {files, odd}
}

/** The keyring the commit's key records and revocations make, from this machine's root pins. */
function keyringAt(store: Store, files: Map<string, Buffer>): Keyring {
  const records: {path: string; text: string}[] = []
  const revocations: {path: string; text: string}[] = []
  for (const [path, bytes] of files) {
    if (!path.startsWith(`${KEYS_DIR}/`) || path.slice(KEYS_DIR.length + 1).includes('/')) continue
    if (path.endsWith('.pub')) records.push({path, text: bytes.toString('utf8')})
    else if (path.endsWith('.revoked')) revocations.push({path, text: bytes.toString('utf8')})
  }
  const storeId = pinnedStoreId(store)
  return new Keyring({records, revocations, roots: pinnedRoots(store), ...(storeId ? {storeId} : {})})
}

/** The keyring of a commit's key records (for a manifest of that side of a merge). */
export async function keyringAtCommit(store: Store, commit: string): Promise<Keyring> {
  const keys = (await lsTree(store.top, commit, {paths: [`${KEYS_DIR}/`]})).filter((e) => e.mode === '100644' && e.type === 'blob')
  const paths = keys.map((e) => e.path)
  const ids = keys.map((e) => e.id)
  const files = new Map<string, Buffer>()
  for await (const {index, data} of catBlobs(store, ids)) if (data) files.set(paths[index], data)
  return keyringAt(store, files)
}

/** What `engram verify` would report of the store at `commit`: its problems, as kind + path + detail. */
export async function verifyCommit(store: Store, commit: string, seenSerial: Record<string, number>): Promise<VerifyProblem[]> {
  const {files, odd} = await filesAt(store, commit)
  const keyring = keyringAt(store, files)
  const unpinned = (await rootNotPinned(store))?.message
  const folders = new Map<string, string>()
  for (const path of files.keys()) {
    const s = scopeOfPath(path)
    if (s && !s.scope.startsWith('run:') && path.endsWith('.md')) folders.set(s.scope, path.slice(0, path.length - s.path.length - 1))
  }
  const view: VerifyView = {
    unpinned,
    manifestFiles: [...files.keys()]
      .filter((p) => p.startsWith(`${MANIFESTS_DIR}/`) && !p.slice(MANIFESTS_DIR.length + 1).includes('/'))
      .map((p) => ({name: p.slice(MANIFESTS_DIR.length + 1), regular: true})),
    manifestText: (rel) => {
      const b = files.get(rel)
      if (!b) throw new Error(`${rel} is not in the commit`)
      return b.toString('utf8')
    },
    seenSerial,
    seenIn: () => undefined,
    folders: [...folders].map(([scope, dir]) => ({scope, dir})),
    walk: (dir) => ({
      files: [...files.keys()].filter((p) => p.startsWith(`${dir}/`) && p.endsWith('.md')),
      links: odd.filter((p) => p.startsWith(`${dir}/`)),
    }),
    bytes: (rel) => files.get(rel) as Buffer,
    signedBefore: () => undefined,
  }
  const problems = checkStore(keyring, view).report.problems
  // the file a clone learns the store's identity from must name the one pinned here (README "Store identity")
  const idText = files.get(STORE_ID_FILE)?.toString('utf8').trim()
  if (keyring.storeId !== undefined && idText !== keyring.storeId) {
    problems.push({kind: 'store-identity', path: STORE_ID_FILE, detail: `${STORE_ID_FILE} ${idText === undefined ? 'is missing' : `says ${printable(idText.slice(0, 64))}`}, but this machine pinned ${keyring.storeId} for this store`})
  }
  // `engram verify` also fails when config.yml is not the owner's signed config (or an older
  // signed one than this machine has seen): the policy every command would fall back from
  const cfg = files.get(CONFIG_FILE)
  const sig = files.get(CONFIG_SIG)
  if (cfg !== undefined || sig !== undefined) {
    const check = checkConfigSignature(store, keyring, cfg, sig?.toString('utf8'))
    const highest = seenSerials(store)[CONFIG_FILE] ?? 0
    const detail = !check.ok ? check.problem : check.serial < highest ? `its signature has serial ${check.serial}, older than serial ${highest} seen on this machine (an old config was put back)` : undefined
    if (detail) problems.unshift({kind: 'config-unsigned', path: CONFIG_FILE, detail})
  }
  return problems
}

/** The problems `commit` has that `than` does not (by kind and path): what a sync would bring in. */
export async function newProblems(store: Store, commit: string, than: string | undefined, seenSerial: Record<string, number>): Promise<VerifyProblem[]> {
  const found = [...(than ? await droppedRevocations(store, commit, than) : []), ...(await verifyCommit(store, commit, seenSerial))]
  if (found.length === 0 || !than) return found
  const before = new Set((await verifyCommit(store, than, seenSerial)).map((p) => `${p.kind}\0${p.path}`))
  return found.filter((p) => !before.has(`${p.kind}\0${p.path}`))
}

/** The `.revoked` records of a commit's key folder, by path → blob id. */
async function revocationsAt(store: Store, commit: string): Promise<Map<string, string>> {
  const listed = await gitRead(store.top, ['ls-tree', '-z', '--full-tree', '--end-of-options', commit, '--', `${KEYS_DIR}/`])
  const out = new Map<string, string>()
  for (const rec of listed.split('\0')) {
    const m = /^\d+ blob ([0-9a-f]+)\t(.*)$/s.exec(rec)
    if (m && m[2].endsWith('.revoked')) out.set(m[2], m[1])
  }
  return out
}

/**
 * A revocation only goes one way: one this store holds that `commit` removes or rewrites
 * would trust the revoked key again (the keyring is made from the files), and with it
 * whatever its stolen private half signed. Nothing a sync brings in may do that.
 */
async function droppedRevocations(store: Store, commit: string, than: string): Promise<VerifyProblem[]> {
  const now = await revocationsAt(store, than)
  if (now.size === 0) return []
  const then = await revocationsAt(store, commit)
  return [...now].filter(([path, blob]) => then.get(path) !== blob).map(([path]) => ({
    kind: 'key-untrusted' as const,
    path,
    detail: `the revocation ${then.has(path) ? 'is rewritten' : 'is removed'}, which would trust the revoked key again`,
  }))
}

/**
 * The paths of `changed` (what the remote's side changed) that belong to a session started
 * on this host: its record or its run: scratchpad. Only this host writes them (a session's
 * token lives on the machine that started it), and the session reads its scratchpad as its
 * own notes, unreviewed: a remote that rewrites them would speak to the agent in its own
 * voice, or end or re-taint its session.
 */
export async function localSessionPaths(store: Store, changed: Iterable<[string, {blob: string | null}]>): Promise<string[]> {
  const mine = new Map<string, boolean>()
  const out: string[] = []
  for (const [path, change] of changed) {
    // a scratchpad cleared elsewhere (the dream job's reviewed deletion, accepted on another host) speaks no words
    const run = /^run\/([^/]+)\//.exec(path)?.[1]
    if (run && change.blob === null) continue
    const id = run ?? /^\.engram\/sessions\/([^/]+)\.json$/.exec(path)?.[1]
    if (!id) continue
    if (!mine.has(id)) {
      let local = false
      try {
        // throws unless the record's first committed version carries this machine's proof
        await loadSession(store, id)
        local = true
      } catch {
        // another host's session (or none): its files travel like any other
      }
      mine.set(id, local)
    }
    if (mine.get(id)) out.push(path)
  }
  return out
}
