/**
 * `engram sync`: exchange a store's history with a git remote (README "Sync", STANDARD
 * R29). Fetch the remote branch (transport.ts), integrate it with the store's commits
 * (merge.ts: a fast-forward, or a merge commit whose two parents keep both histories),
 * verify the result before the store moves (check.ts), move the store with the one atomic
 * commit (git/commit.ts), push, and on a push that lost the race fetch and integrate
 * again. A remote whose history does not verify, or that no longer holds the commit this
 * host last synced with (history rewritten or rolled back), is refused and the store is
 * left as it was.
 */
import {readFileSync} from 'node:fs'
import {setTimeout as sleep} from 'node:timers/promises'

import {gitBlobHash} from '../memory/hash.js'

import {commitChanges, FileChange} from '../git/commit.js'
import {gitRead, headCommit, lsTree} from '../git/git.js'
import {EngramError, refused, verificationFailed} from '../store/errors.js'
import {withStoreLock} from '../store/lock.js'
import type {Store} from '../store/store.js'
import {insideSession} from '../session/sessions.js'
import {raiseFromHistory, recordSerial} from '../trust/highwater.js'
import {loadKeyring} from '../trust/keys.js'
import type {KeyPair} from '../trust/sign.js'
import {keyringAtCommit, localSessionPaths, newProblems} from './check.js'
import {changedPaths, Demoted, integrate, readBlobs} from './merge.js'
import {checkBranch, checkRemoteUrl, readSyncState, SyncState, writeSyncState} from './remote.js'
import {openTransport} from './transport.js'
import {storeIdentity} from '../trust/bind.js'

export interface SyncInput {
  /** the remote's URL or path; set (or changed) by the owner, remembered on this machine */
  remote?: string
  branch?: string
  /** the owner key to merge manifests with, already unlocked (accept --sync) */
  owner?: KeyPair
  /** unlock the owner key when a merge needs it (outside a session) */
  unlock?: () => Promise<KeyPair>
  /** this process is an agent session (never sets the remote, never signs) */
  session?: boolean
  attempts?: number
}

export interface SyncResult {
  remote: string
  branch: string
  /** the store's commit before and after */
  before: string | null
  after: string | null
  /** the remote's commit as fetched first, and after the push */
  remote_before: string | null
  remote_after: string | null
  /** what happened to the store */
  integrated: 'none' | 'fast-forward' | 'merge'
  pushed: boolean
  attempts: number
  /** scopes whose manifest both hosts changed: merged and re-signed */
  resigned: {scope: string; serial: number}[]
  /** this host's accepts that lost to the remote's: kept as proposals */
  demoted: Demoted[]
}

async function ancestorCheck(store: Store, a: string, b: string): Promise<boolean> {
  try {
    await gitRead(store.top, ['merge-base', '--is-ancestor', '--end-of-options', a, b])
    return true
  } catch {
    return false
  }
}

/** The remote and branch this sync uses: the flags (owner only, when they change what is remembered), else what this machine remembers. */
function resolveRemote(store: Store, input: SyncInput, currentBranch: string | undefined): SyncState {
  const state = readSyncState(store)
  const url = input.remote !== undefined ? checkRemoteUrl(input.remote) : state?.url
  if (!url) throw refused('This store has no remote to sync with on this machine.', 'the owner sets it once: `engram sync --remote <url or path of a git repository>`')
  const branch = checkBranch(input.branch ?? (state && state.url === url ? state.branch : undefined) ?? currentBranch ?? 'main')
  const same = state !== undefined && state.url === url && state.branch === branch
  if (!same && input.session) {
    throw refused('An agent session syncs only with the remote the owner set; it cannot set or change it.', `the owner runs \`engram sync --remote ${url}\` once, outside a session`)
  }
  return same ? state : {v: 1, store: store.root, url, branch}
}

export async function syncStore(store: Store, input: SyncInput = {}): Promise<SyncResult> {
  const session = input.session ?? insideSession()
  if (store.prefix !== '') {
    throw refused('This store shares its project\'s repository (--shared-history); sync needs the store\'s own repository.', 'move it into a repository of its own with `engram detach`, then sync')
  }
  // a HEAD whose identity file is not the one pinned here would teach every clone another store's (README "Store identity")
  const identity = await storeIdentity(store)
  if (identity.state === 'file-differs') throw verificationFailed(`This store's identity file is not the identity pinned here (${identity.problem}); nothing was synced.`, 'run `engram keys bind`, which puts it back, then sync')
  const branchNow = (await gitRead(store.top, ['symbolic-ref', '-q', '--short', 'HEAD'], {allowFail: true})).trim() || undefined
  if (!branchNow) throw refused('The store\'s repository is not on a branch (detached HEAD); sync moves a branch.', 'check out the store\'s branch (`git switch main`), then sync')
  const state = resolveRemote(store, input, branchNow)
  const before = (await headCommit(store.top)) ?? null
  const transport = await openTransport(store, state.url, state.branch)
  const result: SyncResult = {
    remote: state.url, branch: state.branch, before, after: before, remote_before: null, remote_after: null,
    integrated: 'none', pushed: false, attempts: 0, resigned: [], demoted: [],
  }
  let owner = input.owner
  const unlock = session ? undefined : async () => (owner ??= input.owner ?? (input.unlock ? await input.unlock() : undefined) ?? failNoKey())
  const maxAttempts = input.attempts ?? 6
  try {
    for (let attempt = 1; ; attempt++) {
      result.attempts = attempt
      const tip = (await transport.fetch()) ?? null
      if (attempt === 1) result.remote_before = tip
      if (state.last) {
        // the remote must still hold what this host last synced with: anything else is a rewrite or rollback
        const kept = tip !== null && (tip === state.last.commit || (await ancestorCheck(store, state.last.commit, tip)))
        if (!kept) {
          throw verificationFailed(
            `The remote ${state.url} no longer holds commit ${state.last.commit.slice(0, 10)} of branch ${state.branch}, which this host synced with on ${state.last.at}: its history was rewritten or rolled back, so nothing was taken from it.`,
            'ask who administers the remote what happened; when a rewrite was intended, the owner sets the remote again with `engram sync --remote <url>`',
          )
        }
      }
      await withStoreLock(store, async () => {
        const head = (await headCommit(store.top)) ?? null
        if (tip === null || head === null || tip === head || (await ancestorCheck(store, tip, head))) return
        const keyring = await loadKeyring(store)
        const seen = await raiseFromHistory(store, keyring)
        if (await ancestorCheck(store, head, tip)) {
          const diff = await changedPaths(store, head, tip)
          await refuseLocalSessionChanges(store, diff, session)
          const changes = await contentsAt(store, diff, session)
          await refuseDirty(store, head, changes.map((c) => c.path), session)
          await commitChanges(store, {subject: 'sync', changes}, {fastForward: tip, beforeMove: (c) => refuseProblems(store, c, head, seen, session)})
          result.integrated = result.integrated === 'merge' ? 'merge' : 'fast-forward'
          return
        }
        const base = (await gitRead(store.top, ['merge-base', '--end-of-options', head, tip], {allowFail: true})).trim()
        if (!base) {
          throw verificationFailed(`The remote ${state.url} holds another store's history (no commit in common with this one); nothing was taken from it.`, 'check the remote\'s URL: `engram sync --remote <url>`')
        }
        await refuseLocalSessionChanges(store, await changedPaths(store, base, tip), session)
        const keyrings = {ours: keyring, theirs: await keyringAtCommit(store, tip)}
        const merged = await integrate(store, {head, tip, base, keyrings, owner, seenSerial: seen, unlock, session})
        await refuseDirty(store, head, merged.changes.map((c) => c.path), session)
        const lostAccepts = merged.entries.flatMap((e) => (e.change ? [e.change] : []))
        if (lostAccepts.length > 0) {
          // the merge's tree, checked before this host's lost accepts are committed: a merge refused
          // later would leave them in the queue, and the store not as it was (the tree is the one the
          // merge commit will hold, so nothing is left dangling)
          await commitChanges(store, {subject: 'sync check', changes: [...lostAccepts, ...merged.changes]}, {
            treeOnly: (tree) => refuseProblems(store, tree, head, seen, session),
          })
        }
        // this host's lost accepts first, each in a commit of its own on this host's line: a sync killed
        // before the merge keeps them (and this host's version of the file) all the same
        for (const e of merged.entries) {
          if (e.change) await commitChanges(store, {subject: e.subject, trailers: e.trailers, changes: [e.change]})
        }
        const mergeHead = (await headCommit(store.top)) as string
        const subject = `Sync with ${state.url} (${state.branch})${merged.resigned.length > 0 ? `: manifests of ${merged.resigned.map((r) => r.scope).join(', ')} merged` : ''}${merged.demoted.length > 0 ? `; ${merged.demoted.length} accept(s) kept as proposals` : ''}`
        await commitChanges(store, {
          subject,
          body: merged.demoted.map((d) => `${d.scope}/${d.path}: this host's ${d.ours === 'delete' ? 'deletion' : 'version'} is proposal ${d.proposal}`).join('\n') || undefined,
          trailers: {'Engram-Operation': 'sync', 'Engram-Remote-Commit': tip, ...(merged.resigned.length > 0 && owner ? {'Engram-Reviewed-By': `${owner.name} (${owner.keyid})`} : {})},
          changes: merged.changes,
        }, {
          mergeParents: [tip],
          beforeMove: (c) => refuseProblems(store, c, mergeHead, seen, session),
          afterCommit: () => {
            for (const r of merged.committed) recordSerial(store, r.scope, r.serial)
          },
        })
        result.integrated = 'merge'
        result.resigned.push(...merged.resigned)
        result.demoted.push(...merged.demoted)
      })
      const now = (await headCommit(store.top)) ?? null
      result.after = now
      if (now !== null && now !== tip && !(tip !== null && (await ancestorCheck(store, now, tip)))) {
        const pushed = await transport.push(now)
        if (pushed === 'rejected') {
          if (attempt >= maxAttempts) {
            throw new EngramError('conflict', `The remote ${state.url} kept moving: ${attempt} pushes lost the race; this store has the remote's changes up to ${tip?.slice(0, 10) ?? 'none'} and its own, not yet pushed.`, {
              nextStep: 'run `engram sync` again',
            })
          }
          await sleep(Math.floor(50 * 2 ** Math.min(attempt, 5) * (0.5 + Math.random())))
          continue
        }
        result.pushed = true
        result.remote_after = now
      } else {
        result.remote_after = tip
      }
      writeSyncState(store, {...state, last: {commit: result.remote_after ?? now ?? '', at: new Date().toISOString()}})
      return result
    }
  } finally {
    transport.close()
  }
}

function failNoKey(): never {
  throw refused('This sync needs the owner key and has none.', 'run `engram sync` as the owner, outside an agent session')
}

/** The files of `tip` at the paths that differ from HEAD, for the journalled move. */
async function contentsAt(store: Store, diff: Map<string, {blob: string | null; mode: string}>, session: boolean): Promise<FileChange[]> {
  const changes: FileChange[] = []
  const want: string[] = []
  const ids: string[] = []
  for (const [path, c] of diff) {
    if (c.blob === null) changes.push({path, content: null})
    else if (c.mode !== '100644') {
      throw verificationFailed(`The remote's history holds ${session ? 'a file' : path} as ${c.mode === '120000' ? 'a symbolic link' : `an entry of mode ${c.mode}`}; a store holds regular files only, so nothing was taken from it.`, 'look at the remote\'s last commits with the store\'s owner')
    } else {
      want.push(path)
      ids.push(c.blob)
    }
  }
  const blobs = await readBlobs(store, ids)
  want.forEach((path, i) => changes.push({path, content: blobs.get(ids[i])!}))
  return changes
}

/**
 * Refuse to overwrite a file whose work-tree bytes are not what HEAD holds (an owner's
 * config.yml edited but not yet signed, say): the sync would replace it with the remote's.
 * Like git's "your local changes would be overwritten", nothing is changed.
 */
async function refuseDirty(store: Store, head: string, paths: string[], session: boolean): Promise<void> {
  if (paths.length === 0) return
  const inHead = new Map((await lsTree(store.top, head, {paths})).filter((e) => e.type === 'blob').map((e) => [e.path, e.id]))
  const dirty = paths.filter((p) => {
    let now: string | null = null
    try {
      now = gitBlobHash(readFileSync(store.abs(p)))
    } catch {
      now = null
    }
    return now !== (inHead.get(p) ?? null)
  })
  if (dirty.length === 0) return
  throw refused(
    `${dirty.length} file(s) the sync would change have uncommitted changes here${session ? '' : ` (${dirty.slice(0, 5).join(', ')}${dirty.length > 5 ? ', …' : ''})`}; nothing was changed.`,
    'finish or undo them first (an edited config.yml is signed with `engram config sign`; `git status` shows them), then sync',
  )
}

/** Refuse a remote's change to the record or scratchpad of a session this host started. */
async function refuseLocalSessionChanges(store: Store, changed: Iterable<[string, {blob: string | null}]>, session: boolean): Promise<void> {
  const found = await localSessionPaths(store, changed)
  if (found.length === 0) return
  throw verificationFailed(
    `The remote's history changes ${found.length} file(s) of a session started on this host${session ? '' : ` (${found.slice(0, 5).join(', ')}${found.length > 5 ? ', …' : ''})`}, which only this host writes; nothing was changed.`,
    'ask who administers the remote to revert that commit; this store keeps its own history',
  )
}

/** Refuse to move the store to `commit` when it verifies worse than `head`. */
async function refuseProblems(store: Store, commit: string, head: string, seen: Record<string, number>, session: boolean): Promise<void> {
  const found = await newProblems(store, commit, head, seen)
  if (found.length === 0) return
  // a session is told how many, never which: the paths may be another tenant's (R7)
  const shown = session ? '' : ` (${found.slice(0, 5).map((p) => `${p.kind} ${p.path}: ${p.detail}`).join('; ')}${found.length > 5 ? '; …' : ''})`
  throw verificationFailed(
    `The remote's history does not verify: ${found.length} problem(s) it would bring into this store${shown}; nothing was changed.`,
    'ask the store\'s owner to look at the remote (`engram verify` in a clone of it); this store keeps its own history',
    session ? {problems: found.length} : {problems: found.map((p) => ({kind: p.kind, path: p.path, scope: p.scope ?? null}))},
  )
}

