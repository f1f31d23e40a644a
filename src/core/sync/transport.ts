/**
 * The network half of `engram sync`: fetch a remote branch's commits into the store's
 * object database and push a commit to it, with git running in a bare repository engram
 * makes for the call (its config is empty) whose object directory is the store's
 * (GIT_OBJECT_DIRECTORY). The store's own `.git/config` — agent-writable in cooperative
 * mode — is never read by these calls, so a planted `url.*.insteadOf`, `uploadpack`,
 * `receivepack`, `sshCommand`, credential helper or hook cannot run anything or redirect
 * the transfer (README "Sync", STANDARD R29). Objects arrive checked (`transfer.fsckObjects`)
 * and are content-addressed: a process killed mid-fetch leaves only unreferenced objects.
 */
import {lstatSync, mkdtempSync, realpathSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {basename, dirname, join, relative, resolve, sep} from 'node:path'
import {fileURLToPath} from 'node:url'

import {EngramError} from '../store/errors.js'
import {gitRead, gitRun} from '../git/git.js'
import type {Store} from '../store/store.js'
import {redactText} from '../write/redact/index.js'

export interface Transport {
  /** the remote branch's commit, or undefined when the remote has no such branch */
  remoteTip(): Promise<string | undefined>
  /** fetch the remote branch's history (objects only); returns its commit */
  fetch(): Promise<string | undefined>
  /** push `commit` to the remote branch; 'rejected' when the remote moved on meanwhile */
  push(commit: string): Promise<'pushed' | 'rejected'>
  close(): void
}

const NETWORK_TIMEOUT_MS = Number(process.env.ENGRAM_SYNC_TIMEOUT_MS) || 120_000

/** What the transfer's git calls are told: no prompt, objects checked, no helper protocol. */
const TRANSFER_OPTS = ['-c', 'transfer.fsckObjects=true', '-c', 'protocol.ext.allow=never', '-c', 'protocol.fd.allow=never', '-c', 'credential.interactive=false']

/**
 * A remote on this machine (a path, file://) is received into by a git that runs here, as
 * the owner, with the owner's environment, reading that repository's own config and hooks:
 * whoever can write the remote's folder would run a program in every owner's sync. So the
 * receiving git is told to run no hook, no fsmonitor and no alternate-refs command, and
 * never to update a checked-out branch (which would run that repository's filters). A
 * remote over ssh or https runs its hooks on its own server, as its administrator wants.
 */
const LOCAL_RECEIVE_PACK = 'git -c core.hooksPath=/dev/null -c core.fsmonitor=false -c core.alternateRefsCommand=true -c receive.denyCurrentBranch=refuse receive-pack'

export async function openTransport(store: Store, url: string, branch: string): Promise<Transport> {
  const objects = (await gitRead(store.top, ['rev-parse', '--path-format=absolute', '--git-path', 'objects'])).trim()
  const dir = mkdtempSync(join(tmpdir(), 'engram-sync-'))
  const env = {GIT_OBJECT_DIRECTORY: objects}
  const run = async (args: string[], what: string) => {
    const r = await gitRun(dir, [...TRANSFER_OPTS, ...args], env, {timeoutMs: NETWORK_TIMEOUT_MS})
    return {...r, fail: () => failure(what, url, r)}
  }
  try {
    const init = await gitRun(dir, ['init', '--bare', '-q', '.'], {})
    if (init.code !== 0) throw failure('prepare the transfer', url, init)
  } catch (error) {
    rmSync(dir, {recursive: true, force: true})
    throw error
  }
  const ref = `refs/heads/${branch}`
  const local = url.startsWith('/') || /^file:\/\//i.test(url)
  let tip: string | undefined | null = null
  return {
    async remoteTip() {
      const r = await run(['ls-remote', url, ref], 'read')
      if (r.code !== 0) throw r.fail()
      const line = r.stdout.split('\n').find((l) => l.endsWith(`\t${ref}`))
      tip = line ? line.slice(0, line.indexOf('\t')) : undefined
      return tip
    },
    async fetch() {
      // what the store has, so the remote sends only what is new (the refs live in this folder only)
      const head = (await gitRead(store.top, ['rev-parse', '--verify', '-q', 'HEAD'], {allowFail: true})).trim()
      if (head) await run(['update-ref', 'refs/engram/have', head], 'prepare the transfer')
      const r = await run(['fetch', '--no-tags', '--no-write-fetch-head', '--no-recurse-submodules', '-q', url, `+${ref}:refs/engram/remote`], 'fetch from')
      if (r.code !== 0) {
        if (/couldn't find remote ref|could not find remote ref/i.test(r.stderr)) return (tip = undefined)
        throw r.fail()
      }
      const got = (await run(['rev-parse', '--verify', '-q', 'refs/engram/remote'], 'read')).stdout.trim()
      return (tip = got || undefined)
    },
    async push(commit: string) {
      const r = await run(['push', '--porcelain', '--no-verify', ...(local ? [`--receive-pack=${LOCAL_RECEIVE_PACK}`] : []), url, `${commit}:${ref}`], 'push to')
      if (r.code === 0) return 'pushed'
      if (local) await clearStaleRefLock(url, r.stdout + r.stderr)
      if (/\[rejected\]|non-fast-forward|fetch first|\[remote rejected\].*(?:lock|failed to update ref)/i.test(r.stdout + r.stderr)) return 'rejected'
      throw r.fail()
    },
    close() {
      rmSync(dir, {recursive: true, force: true})
    },
  }
}

/**
 * A ref update holds its lock for milliseconds; a lock this old was left by a push killed in the
 * middle of one (the receiving git runs on this machine for a remote here, and a Ctrl-C or a
 * SIGKILL of the sync's process group takes it down with it). Git never removes such a lock: every
 * later push would lose "the race" (README "Sync").
 */
const STALE_REF_LOCK_MS = 10_000

/**
 * After a push to a remote on this machine failed on a ref lock, remove the lock if it is stale:
 * a `.lock` under the remote repository's `refs/` (or its `packed-refs.lock`) that has not changed
 * for STALE_REF_LOCK_MS. A younger one is waited for, once, up to that age. The caller retries.
 */
export async function clearStaleRefLock(url: string, output: string): Promise<void> {
  const m = /Unable to create '([^'\n]+\.lock)': File exists/.exec(output)
  if (!m) return
  let lock: string
  let age: number
  try {
    // where the files really are: a symlink in the remote (refs/heads → elsewhere) must not
    // turn this into a way to delete a lock outside it
    const repo = realpathSync(resolve(url.startsWith('/') ? url : fileURLToPath(url)))
    const named = resolve(m[1])
    lock = join(realpathSync(dirname(named)), basename(named))
    const rel = relative(repo, lock)
    if (rel.startsWith('..') || !(rel.startsWith(`refs${sep}`) || rel === 'packed-refs.lock')) return
    // a lock is a plain file git made, never a link
    const st = lstatSync(lock)
    if (!st.isFile()) return
    age = Date.now() - st.mtimeMs
  } catch {
    return
  }
  if (age < STALE_REF_LOCK_MS) await new Promise((r) => setTimeout(r, STALE_REF_LOCK_MS - age))
  try {
    // still there, and unchanged since: stale
    if (Date.now() - lstatSync(lock).mtimeMs >= STALE_REF_LOCK_MS) rmSync(lock, {force: true})
  } catch {
    // gone meanwhile: its push ended
  }
}

function failure(what: string, url: string, r: {code: number; stderr: string}): EngramError {
  const detail = redactText(r.stderr.trim()).split('\n').filter(Boolean).slice(-2).join(' ') || `git exited with ${r.code}`
  return new EngramError('refused', `Could not ${what} the remote ${url}: ${detail}`, {
    nextStep: 'check that the remote exists and that this machine can reach it (`git ls-remote <url>`); nothing was changed',
  })
}
