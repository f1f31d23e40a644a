import {lstatSync, readdirSync, readFileSync, unlinkSync, writeFileSync} from 'node:fs'
import {randomBytes} from 'node:crypto'

import {EngramError} from '../store/errors.js'
import {writeFileAtomic} from '../store/fsutil.js'
import {blobBytes as gitBlobBytes, gitRead, gitRun, gitWrite, headCommit, lsTree} from './git.js'
import {gitBlobHash} from '../memory/hash.js'
import {readHeadFromFiles} from '../index/head.js'
import {identName, looseCommit, treeWithChanges, writeLooseBlob, writeLooseCommit} from './loose.js'
import {redactText} from '../write/redact/index.js'
import type {Store} from '../store/store.js'

export interface Trailers {
  [key: string]: string | number | boolean | null | undefined
}

interface Message {
  /** one sentence, the subject line */
  subject: string
  /** optional paragraph(s) after the subject */
  body?: string
  /** provenance trailers, e.g. {'Engram-Author': 'claude-code'} */
  trailers?: Trailers
}

export interface CommitRequest extends Message {
  /** store-relative paths this change touched (added, modified or deleted) */
  paths: string[]
}

/** One file of a change: its new bytes, or null to delete it. `path` is store-relative. */
export interface FileChange {
  path: string
  content: string | Buffer | null
}

export interface ChangeRequest extends Message {
  changes: FileChange[]
}

export interface CommitOptions {
  /** runs once the branch has moved (e.g. to record a manifest serial) */
  afterCommit?: (commit: string) => void
  onWarning?: (m: string) => void
  /** more parents after HEAD: a merge commit (sync), made even when the tree does not change */
  mergeParents?: string[]
  /** move the branch to this existing commit instead of making one (a sync's fast-forward); its tree must be HEAD's with `changes` applied */
  fastForward?: string
  /** runs once the commit exists and before the branch moves: throwing leaves everything as it was (sync verifies the commit here) */
  beforeMove?: (commit: string) => Promise<void>
  /** only work out the tree these changes make and hand it here: no commit, nothing moves (sync checks a merge before its first commit) */
  treeOnly?: (tree: string) => Promise<void>
}

interface Identity {
  /** environment for the git calls that commit */
  env: Record<string, string>
  /** "Name <email>" as git works them out, for a commit written in-process (loose.ts); unset when git must write it */
  author?: string
  committer?: string
}

let identity: Promise<Identity> | undefined

/**
 * A machine with no git identity (a fresh CI box) still commits, as "engram". One git call
 * per process (`git var -l`: the config it reads and the author and committer git would
 * name, from the environment or the config).
 */
function identityOf(store: Store): Promise<Identity> {
  identity ??= (async () => {
    const env: Record<string, string> = {}
    const lines = (await gitRead(store.top, ['var', '-l'], {allowFail: true})).split('\n')
    // the last entry of a key is the one git uses (an empty one included)
    const has = (key: string) => (lines.filter((l) => l.toLowerCase().startsWith(`${key}=`)).pop()?.length ?? 0) > key.length + 1
    if (!has('user.name') && !process.env.GIT_AUTHOR_NAME) env.GIT_AUTHOR_NAME = env.GIT_COMMITTER_NAME = 'engram'
    if (!has('user.email') && !process.env.GIT_AUTHOR_EMAIL) env.GIT_AUTHOR_EMAIL = env.GIT_COMMITTER_EMAIL = 'engram@localhost'
    if (Object.keys(env).length > 0) return {env}
    const ident = (name: string) => identName(lines.filter((l) => l.startsWith(`${name}=`)).pop()?.slice(name.length + 1))
    return {env, author: ident('GIT_AUTHOR_IDENT'), committer: ident('GIT_COMMITTER_IDENT')}
  })()
  return identity
}

/** A trailer value on one line, whatever the input, redacted before it is cut to length. */
export function trailerValue(v: unknown): string {
  // eslint-disable-next-line no-control-regex
  return redactText(String(v)).replace(/[\u0000-\u001f\u007f]+/g, ' ').trim().slice(0, 500)
}

export function commitMessage(req: Message): string {
  const lines = [trailerValue(req.subject)]
  if (req.body) lines.push('', redactText(req.body.trim()))
  const trailers = Object.entries(req.trailers ?? {}).filter(([, v]) => v !== undefined && v !== null && v !== '')
  if (trailers.length > 0) lines.push('', ...trailers.map(([k, v]) => `${k}: ${trailerValue(v)}`))
  return `${lines.join('\n')}\n`
}

// ---------------------------------------------------------------- the journal

/**
 * An interrupted commit's record, written before the branch moves and removed once the
 * work tree and git's index match the new commit. Its name matches `*.tmp-*`, which every
 * store's `.engram/.gitignore` ignores. It is agent-writable data like the rest of the
 * store, so recovery only ever makes listed work-tree files equal to what HEAD holds.
 */
const JOURNAL = '.engram/txn.tmp-journal'
/** paths whose index entry is still to be refreshed (a foreign `.git/index.lock` was in the way) */
const UNSYNCED = '.engram/index-sync.tmp-pending'
const TEMP_INDEX = 'git-index.tmp-'

interface Journal {
  v: 1
  parent: string | null
  commit: string
  changes: {path: string; old: string | null; new: string | null}[]
}

/** Whether an earlier engram process was killed in a commit (or left the index unsynced): one stat, no git. */
export function interruptedCommit(store: Store): boolean {
  for (const f of [JOURNAL, UNSYNCED]) {
    try {
      lstatSync(store.abs(f))
      return true
    } catch {
      // absent
    }
  }
  return false
}

const SAFE_REL = /^(?!\/)(?!.*(?:^|\/)\.\.?(?:\/|$))[^\0]+$/

function readJournal(store: Store): Journal | undefined {
  const text = store.readText(JOURNAL)
  if (text === undefined) return undefined
  try {
    const j = JSON.parse(text) as Journal
    const oid = (s: unknown) => typeof s === 'string' && /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/.test(s)
    if (j.v === 1 && oid(j.commit) && (j.parent === null || oid(j.parent)) && Array.isArray(j.changes) &&
      j.changes.every((c) => typeof c.path === 'string' && SAFE_REL.test(c.path) && (c.old === null || oid(c.old)) && (c.new === null || oid(c.new)))) return j
  } catch {
    // unreadable: treated as no journal (the commit it described either landed or not; HEAD says which)
  }
  return undefined
}

function readUnsynced(store: Store): string[] {
  try {
    const list = JSON.parse(store.readText(UNSYNCED) ?? '[]')
    return Array.isArray(list) ? list.filter((p): p is string => typeof p === 'string' && SAFE_REL.test(p)) : []
  } catch {
    return []
  }
}

function remove(file: string): void {
  try {
    unlinkSync(file)
  } catch {
    // already gone
  }
}

/**
 * Stage exactly `paths` (store-relative) in the repository's own index from the work
 * tree, so that `git status` is clean after an engram commit and the user's next `git
 * commit` cannot undo it; the user's other staged work is left alone. When another
 * process holds `.git/index.lock` the paths are remembered and staged at the next
 * command: the commit itself never needed the index.
 */
async function syncIndex(store: Store, paths: string[], warn?: (m: string) => void, known?: Map<string, string | null>): Promise<void> {
  const all = [...new Set([...readUnsynced(store), ...paths])]
  if (all.length === 0) return
  try {
    // staged from HEAD's blob ids, never from the work tree: reading the work tree would run
    // any clean filter the repository's config names (R18). A commit just made knows them.
    const inHead = new Map<string, string>()
    if (known && all.every((p) => known.has(p))) {
      for (const p of all) if (known.get(p)) inHead.set(store.gitPath(p), `100644 ${known.get(p)}`)
    } else {
      // (an unborn branch lists nothing: every path leaves the index)
      const listed = await lsTree(store.top, 'HEAD', {paths: all.map((p) => store.gitPath(p))}).catch(() => [])
      for (const e of listed) if (e.type === 'blob') inHead.set(e.path, `${e.mode} ${e.id}`)
    }
    const info = all.map((p) => store.gitPath(p)).map((g) => `${inHead.get(g) ?? '0 0000000000000000000000000000000000000000'}\t${g}`)
    await gitWrite(store.top, ['update-index', '-z', '--index-info'], `${info.join('\0')}\0`)
    remove(store.abs(UNSYNCED))
  } catch {
    writeFileAtomic(store.abs(UNSYNCED), `${JSON.stringify(all)}\n`)
    warn?.('git\'s index is locked by another process (.git/index.lock): the commit is made, and the index will be updated at the next engram command; if no git is running, remove .git/index.lock')
  }
}

/**
 * Finish or forget a commit an earlier engram process was killed in (callers hold the
 * store lock; withStoreLock calls this first). Landed (its commit is HEAD or below it):
 * each listed file still as before, or already as after, is made what HEAD holds, and the
 * index is refreshed. Not landed: nothing in the work tree was touched, so the journal is
 * simply dropped (its objects are unreferenced, for git gc).
 */
export async function recoverInterrupted(store: Store, warn?: (m: string) => void): Promise<void> {
  // a killed commit's private index and blob temp files
  for (const name of safeReaddir(store.abs('.engram'))) if (name.startsWith(TEMP_INDEX) || name.startsWith('blob.tmp-')) remove(store.abs(`.engram/${name}`))
  const j = readJournal(store)
  const paths: string[] = []
  if (j) {
    const head = await headCommit(store.top)
    const landed = head !== undefined && (head === j.commit || (await isAncestor(store, j.commit, head)))
    if (landed) {
      const atHead = await blobsAt(store, head, j.changes.map((c) => c.path))
      for (const c of j.changes) {
        const now = workBlob(store, c.path)
        const want = atHead.get(c.path) ?? null
        if (now === want) continue
        if (now !== c.old && now !== c.new) {
          warn?.(`${c.path} was changed by hand while an interrupted engram commit was recovered; left as it is (run \`engram verify\`)`)
          continue
        }
        if (want === null) remove(store.abs(c.path))
        else writeFileAtomic(store.abs(c.path), await blobBytes(store, want))
      }
      paths.push(...j.changes.map((c) => c.path))
      // a temp file of the killed process's work-tree update (writeFileAtomic: `<file>.tmp-<pid>-…`)
      for (const c of j.changes) {
        const abs = store.abs(c.path)
        const base = `${abs.slice(abs.lastIndexOf('/') + 1)}.tmp-`
        for (const name of safeReaddir(abs.slice(0, abs.lastIndexOf('/')))) if (name.startsWith(base)) remove(`${abs.slice(0, abs.lastIndexOf('/'))}/${name}`)
      }
      warn?.(`finished an engram commit (${j.commit.slice(0, 10)}) that a killed process had made but not checked out`)
    }
  }
  await syncIndex(store, paths, warn)
  remove(store.abs(JOURNAL))
}

async function isAncestor(store: Store, a: string, b: string): Promise<boolean> {
  try {
    await gitRead(store.top, ['merge-base', '--is-ancestor', a, b])
    return true
  } catch {
    return false
  }
}

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir)
  } catch {
    return []
  }
}

function workBlob(store: Store, rel: string): string | null {
  try {
    return gitBlobHash(readFileSync(store.abs(rel)))
  } catch {
    return null
  }
}

/** The blob id of each store-relative path at a commit (absent paths are missing from the map). */
async function blobsAt(store: Store, commit: string | null | undefined, rels: string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>()
  if (!commit || rels.length === 0) return out
  for (const e of await lsTree(store.top, commit, {paths: rels.map((r) => store.gitPath(r))})) {
    if (e.type === 'blob' && e.path.startsWith(store.prefix)) out.set(e.path.slice(store.prefix.length), e.id)
  }
  return out
}

/** Write blobs (each with its id, already computed) to the object store: as loose objects in-process where loose.ts can, else one `git hash-object -w --no-filters --stdin-paths` for all (via temp files under .engram/), so no clean filter of the repository's config ever runs. */
async function writeBlobs(store: Store, blobs: {content: string | Buffer; id: string}[]): Promise<void> {
  if (blobs.length === 0) return
  const contents = blobs.map((b) => b.content)
  // in-process where the repository allows (loose.ts); otherwise git writes them
  if (blobs.every((b) => writeLooseBlob(store.top, b.id, typeof b.content === 'string' ? Buffer.from(b.content, 'utf8') : b.content))) return
  const files = contents.map((_, i) => store.abs(`.engram/blob.tmp-${process.pid}-${randomBytes(4).toString('hex')}-${i}`))
  try {
    contents.forEach((c, i) => writeFileSync(files[i], c, {mode: 0o600}))
    const ids = (await gitWrite(store.top, ['hash-object', '-w', '--no-filters', '--stdin-paths'], `${files.join('\n')}\n`)).trim().split('\n')
    blobs.forEach((b, i) => {
      if (ids[i] !== b.id) throw new EngramError('refused', 'git stored a blob under another id than its bytes hash to; nothing was committed.')
    })
  } finally {
    for (const f of files) remove(f)
  }
}

function blobBytes(store: Store, blob: string): Promise<Buffer> {
  return gitBlobBytes(store.top, blob)
}

// ---------------------------------------------------------------- committing

/** The tree HEAD's with `changes` applied makes, built by git in a private index (GIT_INDEX_FILE) of its own. */
async function treeFromIndex(store: Store, parent: string | undefined, changes: FileChange[], blobs: Map<string, string | null>): Promise<string> {
  const index = store.abs(`.engram/${TEMP_INDEX}${process.pid}-${randomBytes(4).toString('hex')}`)
  const ienv = {GIT_INDEX_FILE: index}
  try {
    await gitWrite(store.top, parent ? ['read-tree', parent] : ['read-tree', '--empty'], undefined, ienv)
    const info = changes.map((c) => {
      const b = blobs.get(c.path)
      return b === null || b === undefined ? `0 ${'0'.repeat(40)}\t${store.gitPath(c.path)}` : `100644 ${b}\t${store.gitPath(c.path)}`
    })
    if (changes.length > 0) await gitWrite(store.top, ['update-index', '-z', '--index-info'], `${info.join('\0')}\0`, ienv)
    return (await gitWrite(store.top, ['write-tree'], undefined, ienv)).trim()
  } finally {
    remove(index)
  }
}

/** HEAD's commit and tree (empty strings on an unborn branch): from the files when they say, else from git. */
async function headAndTree(store: Store): Promise<string[]> {
  const id = readHeadFromFiles(store.top)
  const tree = id === undefined ? undefined : looseCommit(store.top, id)?.tree
  if (id !== undefined && tree !== undefined) return [id, tree]
  return (await gitRead(store.top, ['log', '-1', '--format=%H %T'], {allowFail: true})).trim().split(' ')
}

/**
 * The one function that commits to the store's repository, atomically (README "Crash
 * safety", STANDARD R24). The commit is built from objects alone — blobs written with
 * `git hash-object -w`, a tree from HEAD's in a private index (GIT_INDEX_FILE), `git
 * commit-tree` — and the branch is moved with a compare-and-swap (`git update-ref HEAD
 * <new> <old>`). Only then are the work tree and the repository's index changed. A
 * process killed before the branch moves leaves nothing behind; one killed after leaves a
 * journal that the next engram command finishes (recoverInterrupted). The user's other
 * staged work is never committed, and a foreign `.git/index.lock` cannot stop or split
 * the commit. Makes no commit when nothing changed. Callers hold the store lock.
 * `afterCommit` runs once the branch has moved (e.g. to record a manifest serial).
 * Returns the new commit id, or undefined.
 */
export async function commitChanges(store: Store, req: ChangeRequest, opts: CommitOptions = {}): Promise<string | undefined> {
  const byPath = new Map<string, FileChange>()
  for (const c of req.changes) byPath.set(c.path, c)
  const changes = [...byPath.values()]
  const moves = opts.mergeParents !== undefined || opts.fastForward !== undefined
  if (changes.length === 0 && !moves) return undefined
  const id = await identityOf(store)
  const env = id.env
  const head = await headAndTree(store)
  const parent = head[0] || undefined
  const blobs = new Map<string, string | null>(changes.map((c) => [c.path, c.content === null ? null : gitBlobHash(c.content)]))
  // the work tree as it is now: what recovery may find at a path besides the new bytes
  const old = new Map(changes.map((c) => [c.path, workBlob(store, c.path)]))
  await writeBlobs(store, changes.flatMap((c) => (c.content === null ? [] : [{content: c.content, id: blobs.get(c.path)!}])))
  let commit: string | undefined
  // the tree in-process where HEAD's trees are loose (loose.ts), else in a private index
  const tree = treeWithChanges(store.top, parent ? head[1] : undefined, changes.map((c) => ({path: store.gitPath(c.path), blob: blobs.get(c.path) ?? null}))) ??
    (await treeFromIndex(store, parent, changes, blobs))
  if (opts.treeOnly) {
    await opts.treeOnly(tree)
    return undefined
  }
  if (opts.fastForward !== undefined) {
    // the branch moves to a commit that exists already (sync): only if it holds exactly the tree these changes make
    const target = (await gitRead(store.top, ['rev-parse', '--verify', '-q', '--end-of-options', `${opts.fastForward}^{tree}`], {allowFail: true})).trim()
    if (target !== tree) throw new EngramError('refused', 'The commit to move to does not hold the files worked out for it; nothing was changed.')
    commit = opts.fastForward
  } else if (tree !== head[1] || opts.mergeParents !== undefined) {
    const parents = [...(parent ? [parent] : []), ...(opts.mergeParents ?? [])]
    const message = commitMessage(req)
    commit = id.author && id.committer ? writeLooseCommit(store.top, {tree, parents, author: id.author, committer: id.committer, message}) : undefined
    // The message comes on stdin, never parsed as an option.
    commit ??= (await gitWrite(store.top, ['commit-tree', tree, ...parents.flatMap((p) => ['-p', p]), '-F', '-'], message, env)).trim()
  }
  if (commit && opts.beforeMove) await opts.beforeMove(commit)
  if (commit) {
    const journal: Journal = {v: 1, parent: parent ?? null, commit, changes: changes.map((c) => ({path: c.path, old: old.get(c.path) ?? null, new: blobs.get(c.path) ?? null}))}
    writeFileAtomic(store.abs(JOURNAL), `${JSON.stringify(journal)}\n`)
    try {
      await gitWrite(store.top, ['update-ref', '-m', `engram: ${trailerValue(req.subject).slice(0, 100)}`, 'HEAD', commit, parent ?? ''])
    } catch (error) {
      remove(store.abs(JOURNAL))
      throw new EngramError('conflict', 'The repository\'s branch moved while engram was committing; nothing was changed.', {
        nextStep: 'run the command again',
        data: {detail: (error as Error).message},
      })
    }
  }
  // The branch has moved (or nothing needed committing): now the work tree, then the index.
  for (const c of changes) {
    const want = blobs.get(c.path) ?? null
    if (workBlob(store, c.path) === want) continue
    if (c.content === null) remove(store.abs(c.path))
    else writeFileAtomic(store.abs(c.path), c.content)
  }
  if (commit) opts.afterCommit?.(commit)
  // with no commit the paths now match HEAD in the work tree; the index follows, so an entry
  // that was only staged (never committed) leaves nothing behind when it is removed
  // HEAD now holds `blobs` at these paths (the commit made, or the tree it already had)
  await syncIndex(store, changes.map((c) => c.path), opts.onWarning, blobs)
  remove(store.abs(JOURNAL))
  if (commit) await packNowAndThen(store)
  return commit
}

/** Loose objects (estimated) past which a commit packs them. */
const LOOSE_LIMIT = 1024

/**
 * A store with its own repository packs its loose objects now and then, after a commit
 * and under the store lock (README "Load on one host"). Every git call engram makes turns
 * git's own automatic gc off (git.ts), so without this each write leaves three or four
 * loose objects for good, and every history walk a command makes (the signed config's
 * versions, a session's record, recent writes) opens them one by one: at 4,000 objects a
 * walk took 65 ms, packed 8 ms. The count is estimated as git's gc does, from one
 * sixteenth of the fan-out folders. `repack --geometric=2 -d` packs loose objects and
 * rolls small packs into bigger ones; it never drops an object (a fetched object no ref
 * names yet stays). A store inside a project's repository leaves that repository to its
 * owner; a failure only means the objects stay loose.
 */
async function packNowAndThen(store: Store): Promise<void> {
  if (store.top !== store.root) return
  const objects = `${store.top}/.git/objects`
  let loose = 0
  for (let i = 0; i < 16; i++) loose += safeReaddir(`${objects}/0${i.toString(16)}`).length
  if (loose * 16 < LOOSE_LIMIT) return
  await gitRun(store.top, ['repack', '--geometric=2', '-d', '-q'], {}, {timeoutMs: 120_000})
}

/**
 * Commit files already written to the work tree (init, key records): each path's bytes
 * as they are now, or its deletion when it is gone; a folder stands for the files git
 * would add from it. Same atomic commit as commitChanges.
 */
export async function commitPaths(store: Store, req: CommitRequest): Promise<string | undefined> {
  const rels: string[] = []
  for (const p of new Set(req.paths)) {
    let dir = false
    try {
      dir = lstatSync(store.abs(p)).isDirectory()
    } catch {
      // gone: a deletion
    }
    if (!dir) {
      rels.push(p)
      continue
    }
    const listed = await gitRead(store.top, ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--', store.gitPath(p)])
    for (const f of listed.split('\0').filter(Boolean)) if (f.startsWith(store.prefix)) rels.push(f.slice(store.prefix.length))
  }
  const changes: FileChange[] = rels.map((path) => {
    try {
      return {path, content: readFileSync(store.abs(path))}
    } catch {
      return {path, content: null}
    }
  })
  return commitChanges(store, {subject: req.subject, body: req.body, trailers: req.trailers, changes})
}
