import {existsSync, lstatSync, readFileSync, Stats, statSync, unlinkSync} from 'node:fs'
import {dirname, join} from 'node:path'
import type {GitError as SimpleGitError, SimpleGit, SimpleGitFactory} from 'simple-git'

import {looseCommit} from './loose.js'
import {EngramError} from '../store/errors.js'
import {gitMissing} from './need-git.js'
import {redactText} from '../write/redact/index.js'

/**
 * The git layer of engram (README "Git"). Every git command runs through this module:
 * through the store's one simple-git instance (below), or, for the few calls that feed git
 * on stdin or use a private index, through one spawn helper with the same options and
 * environment. Reads that must not start a process (the warm search path) read git's
 * files in-process here too (workTreeTopFromFiles, firstParentFromFiles).
 */

/** node:child_process and simple-git, loaded at the first git call: a search with warm caches makes none. */
let cp: typeof import('node:child_process') | undefined
async function childProcess(): Promise<typeof import('node:child_process')> {
  return (cp ??= await import('node:child_process'))
}
let sg: {simpleGit: SimpleGitFactory; GitError: typeof SimpleGitError} | undefined

/**
 * A path that never exists (a file under /dev/null): git reads it as "no such file".
 * Pointing GIT_GRAFT_FILE and GIT_SHALLOW_FILE there makes git ignore a planted
 * `info/grafts` or `shallow` file, which would otherwise rewrite what history says.
 */
const NO_FILE = '/dev/null/engram-none'

/**
 * Inherited variables that would have git start another program. Our commands never open
 * an editor, pager or askpass program, so they are dropped rather than allowed (simple-git
 * refuses to run with them unless told their use is safe).
 */
const PROGRAM_VARS = new Set(['EDITOR', 'VISUAL', 'PAGER', 'SSH_ASKPASS', 'PREFIX'])

/**
 * The environment every git call runs with: inherited GIT_DIR / GIT_WORK_TREE /
 * GIT_INDEX_FILE (and friends) are scrubbed so that a caller's environment can never
 * point our commands at another repository (as pass does). No prompts, no pager, no editor.
 *
 * History is read as committed (STANDARD R19): replace refs, grafts and a shallow file
 * are ignored, since anyone able to write the repository can add them and make git show
 * another object under a committed id (e.g. an agent's key record as the first owner key).
 * A truly shallow clone then fails its history reads: engram needs full history.
 * GIT_OPTIONAL_LOCKS=0: a read never takes `.git/index.lock` (it would race a writer);
 * no command engram runs to write needs an optional lock.
 */
export function gitEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith('GIT_') && !['GIT_AUTHOR_NAME', 'GIT_AUTHOR_EMAIL', 'GIT_COMMITTER_NAME', 'GIT_COMMITTER_EMAIL'].includes(k)) continue
    if (PROGRAM_VARS.has(k)) continue
    env[k] = v
  }
  env.GIT_TERMINAL_PROMPT = '0'
  env.LC_ALL = 'C'
  env.GIT_NO_REPLACE_OBJECTS = '1'
  env.GIT_GRAFT_FILE = NO_FILE
  env.GIT_SHALLOW_FILE = NO_FILE
  env.GIT_OPTIONAL_LOCKS = '0'
  return {...env, ...extra}
}

/**
 * Settings given with `-c` before every git subcommand. The repository's own config
 * (`.git/config`) is as writable by an agent as the store, so it may decide nothing and
 * run nothing (STANDARD R18): replace refs off, no hooks (`reference-transaction` runs on
 * every ref move), no fsmonitor command, no commit signing or signature-checking program, no automatic gc or
 * maintenance. Clean filters and diff drivers are avoided by the calls themselves
 * (`hash-object --no-filters`, the index staged from blob ids, `--no-ext-diff
 * --no-textconv` on patches). Paths unquoted.
 */
const GIT_CONFIG = [
  'core.quotepath=off',
  'core.useReplaceRefs=false',
  'core.hooksPath=/dev/null',
  'core.fsmonitor=false',
  'commit.gpgSign=false',
  // a log would check signatures with the repository's gpg.program (any program it names)
  'log.showSignature=false',
  'gc.auto=0',
  'maintenance.auto=false',
] as const

/** GIT_CONFIG as command-line options, for the spawn helper. */
export const GIT_OPTS = GIT_CONFIG.flatMap((c) => ['-c', c])

/**
 * The one simple-git instance of each repository (keyed by the root every call names:
 * the store's work-tree top), made at its first git call:
 * - `maxConcurrentProcesses: 1`: one git process at a time per store, in call order;
 * - our environment (gitEnv) for every command;
 * - `unsafe`: only the two of our own `-c` settings simple-git flags as unsafe
 *   (`core.hooksPath`, `core.fsmonitor`: we set them to run nothing); the environment
 *   needs no allowance, since gitEnv drops the editor and pager variables it refuses;
 * - every non-zero exit is a failure (simple-git counts one only when git also wrote to
 *   stderr; `rev-parse -q`, `merge-base --is-ancestor` and `config <key>` fail silently);
 * - no wait after a command that prints nothing: simple-git 3 waits 50 ms then, even with
 *   `completion: {onClose: true, onExit: false}` (its plugin skips the wait only once a
 *   stream has emitted data), so the output handler emits an empty chunk when stdout ends,
 *   before the process's close is handled (scripts/bench-git.mjs; README "Performance").
 */
const instances = new Map<string, Promise<SimpleGit>>()

function gitFor(root: string): Promise<SimpleGit> {
  let git = instances.get(root)
  if (!git) {
    git = (async () => {
      sg ??= (await import('simple-git')) as unknown as {simpleGit: SimpleGitFactory; GitError: typeof SimpleGitError}
      const {GitError, simpleGit} = sg
      const instance = simpleGit({
        baseDir: root,
        maxConcurrentProcesses: 1,
        config: [...GIT_CONFIG],
        completion: {onClose: true, onExit: false},
        unsafe: {allowUnsafeHooksPath: true, allowUnsafeFsMonitor: true},
        errors(error, result) {
          if (!result.exitCode) return error
          const stderr = Buffer.concat(result.stdErr).toString('utf8')
          return Object.assign(new GitError(undefined, stderr.trim() || `git exited with ${result.exitCode}`), {
            exitCode: result.exitCode,
            stderr,
            code: /\bspawn \S+ ENOENT\b/.test(stderr) ? 'ENOENT' : undefined,
          })
        },
      }).env(gitEnv())
      instance.outputHandler((_command, stdout) => {
        stdout.once('end', () => stdout.emit('data', Buffer.alloc(0)))
      })
      return instance
    })()
    instances.set(root, git)
    // a folder that does not exist yet (simple-git refuses it) gets a new instance next time
    git.catch(() => instances.delete(root))
  }
  return git
}

/**
 * A read-only git call through the store's simple-git instance; returns stdout. User text
 * is never in option position: callers put paths after `--` and a revision a user typed
 * after `--end-of-options`.
 */
export async function gitRead(root: string, args: string[], opts: {allowFail?: boolean} = {}): Promise<string> {
  try {
    return await (await gitFor(root)).raw(args)
  } catch (error) {
    if (opts.allowFail) return ''
    throw gitFailure(args, error)
  }
}

/**
 * A git call that may change the repository (commit.ts, under the store lock; init).
 * With `input` (fed on stdin) or `extraEnv` (a private index, the commit identity) it
 * runs through gitPipe, since simple-git writes nothing to a command's stdin and has one
 * environment per instance; otherwise through the store's simple-git instance.
 */
export async function gitWrite(root: string, args: string[], input?: string | Buffer, extraEnv: Record<string, string> = {}): Promise<string> {
  if (input === undefined && Object.keys(extraEnv).length === 0) {
    try {
      return await (await gitFor(root)).raw(args)
    } catch (error) {
      throw gitFailure(args, error)
    }
  }
  return gitPipe(root, args, input ?? '', extraEnv)
}

/** `git init` in `root` (a folder that exists and is in no work tree). */
export async function gitInit(root: string): Promise<void> {
  try {
    await (await gitFor(root)).init(false, ['--quiet'])
  } catch (error) {
    throw gitFailure(['init'], error)
  }
}

/** One git process with our options and environment, for the calls simple-git cannot make (it has no stdin and one environment per instance). */
async function spawnGit(root: string, args: string[], extraEnv: Record<string, string>) {
  const {spawn} = await childProcess()
  return spawn('git', [...GIT_OPTS, ...args], {cwd: root, env: gitEnv(extraEnv), stdio: ['pipe', 'pipe', 'pipe']})
}

/**
 * One spawned git call, run to its end: exit code (ENOENT when git is missing, 124 when it
 * was killed at `timeoutMs`), stdout and stderr. Fed `input` on stdin, which git may stop
 * reading early: a closed pipe must not crash the process.
 */
async function runGit(root: string, args: string[], input: string | Buffer, extraEnv: Record<string, string>, timeoutMs?: number): Promise<{code: number; stdout: string; stderr: string}> {
  const child = await spawnGit(root, args, extraEnv)
  const out: Buffer[] = []
  let stderr = ''
  child.stdout.on('data', (d: Buffer) => out.push(d))
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
  child.stdin.on('error', () => {})
  child.stdin.end(input)
  const timer = timeoutMs ? setTimeout(() => child.kill('SIGKILL'), timeoutMs) : undefined
  const code = await new Promise<number | string>((resolve) => {
    child.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'))
    child.on('close', (c, signal) => resolve(c ?? (signal ? 'killed' : 1)))
  })
  if (timer) clearTimeout(timer)
  if (code === 'ENOENT') throw gitMissing()
  return {code: typeof code === 'number' ? code : 124, stdout: Buffer.concat(out).toString('utf8'), stderr}
}

/** A git call fed on stdin (`hash-object --stdin-paths`, `update-index --index-info`, `commit-tree -F -`), or run with a per-call environment. */
async function gitPipe(root: string, args: string[], input: string | Buffer, extraEnv: Record<string, string>): Promise<string> {
  const r = await runGit(root, args, input, extraEnv)
  if (r.code !== 0) throw gitFailure(args, {stderr: r.stderr, message: `git exited with ${r.code}`})
  return r.stdout
}

/**
 * A git call whose failure is an answer, not an error (a push the remote rejects): exit
 * code, stdout and stderr, with our options and environment. Used by sync's transport,
 * in a repository engram made for the call.
 */
export async function gitRun(root: string, args: string[], extraEnv: Record<string, string> = {}, opts: {timeoutMs?: number} = {}): Promise<{code: number; stdout: string; stderr: string}> {
  return runGit(root, args, '', extraEnv, opts.timeoutMs)
}

function gitFailure(args: string[], error: unknown): EngramError {
  const e = error as {stderr?: string; message?: string; code?: unknown}
  if (e.code === 'ENOENT') return gitMissing()
  const detail = redactText((e.stderr || e.message || String(error)).trim()).split('\n').slice(-2).join(' ')
  const sub = args.find((a) => !a.startsWith('-')) ?? args[0]
  return new EngramError('refused', `git ${sub} failed: ${detail}`, {
    nextStep: 'check the repository with `git status`; run `engram verify` if the store looks inconsistent',
  })
}

/** The top of the git work tree containing `dir`, or undefined. */
export async function gitTopLevel(dir: string): Promise<string | undefined> {
  const fast = workTreeTopFromFiles(dir)
  if (fast !== undefined) return fast
  const out = await gitRead(dir, ['rev-parse', '--show-toplevel'], {allowFail: true})
  return out.trim() || undefined
}

/**
 * The work tree top from the file system alone, for the plain case: the nearest folder
 * upward (same file system) holding a `.git` folder that has a HEAD, is owned by this
 * user, and whose config neither sets `core.worktree`, says `bare = true` nor includes
 * other files. Anything else (a `.git` file of a linked worktree or submodule, a link,
 * another owner, which `safe.directory` governs) returns undefined and git is asked.
 * Every git call scrubs GIT_DIR and friends (gitEnv), so the environment cannot change
 * the answer. Saves a `git rev-parse` spawn (several ms) in every command.
 */
export function workTreeTopFromFiles(dir: string): string | undefined {
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined
  let d = dir
  let dev: number | undefined
  for (;;) {
    let here: Stats
    try {
      here = lstatSync(d)
    } catch {
      return undefined
    }
    // git's discovery stops at a file system boundary
    if (dev !== undefined && here.dev !== dev) return undefined
    dev = here.dev
    let dotGit: Stats | undefined
    try {
      dotGit = lstatSync(join(d, '.git'))
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return undefined
    }
    if (dotGit) {
      if (!dotGit.isDirectory() || (uid !== undefined && dotGit.uid !== uid)) return undefined
      try {
        if (!statSync(join(d, '.git', 'HEAD')).isFile()) return undefined
        const config = readFileSync(join(d, '.git', 'config'), 'utf8')
        if (/^\s*worktree\s*=/im.test(config) || /^\s*bare\s*=\s*(true|yes|on|1)\s*$/im.test(config) || /^\s*\[\s*include/im.test(config)) return undefined
      } catch {
        return undefined
      }
      return d
    }
    const parent = dirname(d)
    if (parent === d) return undefined
    d = parent
  }
}

/** The commit HEAD names, or undefined on an unborn branch. */
export async function headCommit(root: string): Promise<string | undefined> {
  return revParse(root, 'HEAD')
}

/** The object a revision names (`rev-parse --verify -q`), or undefined. A revision starting with `-` is a revision, never an option. */
export async function revParse(root: string, rev: string): Promise<string | undefined> {
  try {
    return (await (await gitFor(root)).revparse(['--verify', '-q', '--end-of-options', rev])) || undefined
  } catch {
    return undefined
  }
}

/** A blob's bytes (`cat-file blob`), exactly as stored. */
export async function blobBytes(root: string, blob: string): Promise<Buffer> {
  try {
    return (await (await gitFor(root)).binaryCatFile(['blob', blob])) as Buffer
  } catch (error) {
    throw gitFailure(['cat-file'], error)
  }
}

/**
 * The first parent of a commit read from its loose object (a commit just made is loose),
 * or undefined when unsure: a packed object, a linked worktree, a SHA-256 repository, a
 * root commit. Read by loose.ts, which checks that the object's bytes hash to its name, so
 * a planted file cannot pass for the commit.
 */
export function firstParentFromFiles(top: string, commit: string): string | undefined {
  return looseCommit(top, commit)?.parents[0]
}

/** Path of the repository's index.lock (handles worktrees via --git-dir). */
export async function indexLockPath(top: string): Promise<string> {
  const gitDir = (await gitRead(top, ['rev-parse', '--git-dir'])).trim()
  return join(gitDir.startsWith('/') ? gitDir : join(top, gitDir), 'index.lock')
}

/** Remove an index.lock we know to be stale (its writer is dead). Returns true when one was removed. */
export function removeStaleIndexLock(lockPath: string): boolean {
  if (!existsSync(lockPath)) return false
  try {
    statSync(lockPath)
    unlinkSync(lockPath)
    return true
  } catch {
    return false
  }
}

/** One entry of `git ls-tree -z`: mode, type, object id and repository path. */
export interface TreeListing {
  mode: string
  type: string
  id: string
  path: string
}

/**
 * `git ls-tree -z --full-tree <commit> [-- paths]` (with `-r`, every file below), parsed:
 * the one reader of a commit's entries for the layers above.
 */
export async function lsTree(root: string, commit: string, opts: {paths?: string[]; recursive?: boolean} = {}): Promise<TreeListing[]> {
  const args = ['ls-tree', '-z', '--full-tree', ...(opts.recursive ? ['-r'] : []), '--end-of-options', commit, ...(opts.paths ? ['--', ...opts.paths] : [])]
  const out: TreeListing[] = []
  for (const rec of (await gitRead(root, args)).split('\0')) {
    const m = /^(\d+) (\w+) ([0-9a-f]+)\t(.*)$/s.exec(rec)
    if (m) out.push({mode: m[1], type: m[2], id: m[3], path: m[4]})
  }
  return out
}

/** One path `git diff-tree -r --raw` lists: its modes before and after, its new blob (null when deleted). */
export interface RawChange {
  path: string
  oldMode: string
  newMode: string
  blob: string | null
}

/** The files that differ between two commits (`git diff-tree -r -z --no-renames --raw`), parsed. */
export async function rawDiff(root: string, from: string, to: string): Promise<RawChange[]> {
  const parts = (await gitRead(root, ['diff-tree', '-r', '-z', '--no-renames', '--raw', '--end-of-options', from, to])).split('\0')
  const out: RawChange[] = []
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const m = /^:(\d+) (\d+) [0-9a-f]+ ([0-9a-f]+) ([A-Z])\d*$/.exec(parts[i])
    if (m) out.push({path: parts[i + 1], oldMode: m[1], newMode: m[2], blob: m[4] === 'D' ? null : m[3]})
  }
  return out
}

/** Stream blob contents in the order asked (one `git cat-file --batch`). Missing blobs yield null. */
export async function* catBlobs(store: {top: string}, ids: string[]): AsyncGenerator<{index: number; data: Buffer | null}> {
  if (ids.length === 0) return
  // spawned, not through simple-git: the ids are fed on stdin and the blobs streamed out as they come
  const child = await spawnGit(store.top, ['cat-file', '--batch'], {})
  let stderr = ''
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
  const exited = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? 1)))
  child.stdin.on('error', () => {})
  child.stdin.end(`${ids.join('\n')}\n`)
  let buf: Buffer = Buffer.alloc(0)
  let index = 0
  let need = -1
  for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
    buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk])
    for (;;) {
      if (need < 0) {
        const nl = buf.indexOf(10)
        if (nl < 0) break
        const line = buf.toString('utf8', 0, nl)
        buf = buf.subarray(nl + 1)
        if (line.endsWith(' missing')) {
          yield {index: index++, data: null}
          continue
        }
        const size = Number(line.split(' ')[2])
        need = Number.isFinite(size) ? size : 0
      }
      if (buf.length < need + 1) break
      const data = buf.subarray(0, need)
      buf = buf.subarray(need + 1)
      need = -1
      yield {index: index++, data}
    }
  }
  const code = await exited
  if (index < ids.length) throw new Error(`git cat-file stopped early (exit ${code}): ${stderr.trim()}`)
}
