import {createHash} from 'node:crypto'
import {existsSync, lstatSync, readFileSync, Stats, statSync, unlinkSync} from 'node:fs'
import {createRequire} from 'node:module'
import {dirname, join} from 'node:path'

import {EngramError} from '../store/errors.js'
import {gitMissing} from './need-git.js'
import {redactText} from '../write/redact/index.js'

/** node:child_process, loaded at the first git call: a search with warm caches makes none. */
let cp: typeof import('node:child_process') | undefined
async function childProcess(): Promise<typeof import('node:child_process')> {
  return (cp ??= await import('node:child_process'))
}

/**
 * A path that never exists (a file under /dev/null): git reads it as "no such file".
 * Pointing GIT_GRAFT_FILE and GIT_SHALLOW_FILE there makes git ignore a planted
 * `info/grafts` or `shallow` file, which would otherwise rewrite what history says.
 */
const NO_FILE = '/dev/null/engram-none'

/**
 * The environment every git call runs with: inherited GIT_DIR / GIT_WORK_TREE /
 * GIT_INDEX_FILE (and friends) are scrubbed so that a caller's environment can never
 * point our commands at another repository (as pass does). No prompts, no pager.
 *
 * History is read as committed (STANDARD R19): replace refs, grafts and a shallow file
 * are ignored, since anyone able to write the repository can add them and make git show
 * another object under a committed id (e.g. an agent's key record as the first owner key).
 * A truly shallow clone then fails its history reads: engram needs full history.
 */
export function gitEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith('GIT_') && !['GIT_AUTHOR_NAME', 'GIT_AUTHOR_EMAIL', 'GIT_COMMITTER_NAME', 'GIT_COMMITTER_EMAIL'].includes(k)) continue
    env[k] = v
  }
  env.GIT_TERMINAL_PROMPT = '0'
  env.LC_ALL = 'C'
  env.GIT_NO_REPLACE_OBJECTS = '1'
  env.GIT_GRAFT_FILE = NO_FILE
  env.GIT_SHALLOW_FILE = NO_FILE
  return {...env, ...extra}
}

/**
 * Options before every git subcommand. The repository's own config (`.git/config`) is
 * as writable by an agent as the store, so it may decide nothing and run nothing (STANDARD
 * R18): replace refs off, no hooks (`reference-transaction` runs on every ref move), no
 * fsmonitor command, no commit signing program, no automatic gc or maintenance. Clean
 * filters and diff drivers are avoided by the calls themselves (`hash-object --no-filters`,
 * the index staged from blob ids, `--no-ext-diff --no-textconv` on patches). Paths unquoted.
 */
export const GIT_OPTS = [
  '-c', 'core.quotepath=off',
  '-c', 'core.useReplaceRefs=false',
  '-c', 'core.hooksPath=/dev/null',
  '-c', 'core.fsmonitor=false',
  '-c', 'commit.gpgSign=false',
  '-c', 'gc.auto=0',
  '-c', 'maintenance.auto=false',
] as const

/**
 * A read-only git call: no optional locks (so it never races a writer on index.lock),
 * arguments passed as an array (user text is never parsed as an option: callers put
 * paths after `--`). Returns stdout.
 */
export async function gitRead(root: string, args: string[], opts: {allowFail?: boolean} = {}): Promise<string> {
  try {
    const {execFile} = await childProcess()
    return await new Promise<string>((resolve, reject) => {
      execFile(
        'git',
        [...GIT_OPTS, ...args],
        {cwd: root, env: gitEnv({GIT_OPTIONAL_LOCKS: '0'}), maxBuffer: 256 * 1024 * 1024, encoding: 'utf8'},
        (error, stdout, stderr) => (error ? reject(Object.assign(error, {stderr})) : resolve(stdout)),
      )
    })
  } catch (error) {
    if (opts.allowFail) return ''
    throw gitFailure(args, error)
  }
}

/** A git call that may change the repository: used by commit.ts (under the store lock) and init. */
export async function gitWrite(root: string, args: string[], input?: string | Buffer, extraEnv: Record<string, string> = {}): Promise<string> {
  const {execFile} = await childProcess()
  return new Promise((resolve, reject) => {
    const child = execFile(
      'git',
      [...GIT_OPTS, ...args],
      {cwd: root, env: gitEnv(extraEnv), maxBuffer: 64 * 1024 * 1024, encoding: 'utf8'},
      (error, stdout) => (error ? reject(gitFailure(args, error)) : resolve(stdout)),
    )
    // git may exit before reading its input; a closed pipe must not crash the process.
    child.stdin?.on('error', () => {})
    child.stdin?.end(input ?? '')
  })
}

function gitFailure(args: string[], error: unknown): EngramError {
  const e = error as {stderr?: string; message?: string; code?: unknown}
  if (e.code === 'ENOENT') return gitMissing()
  const detail = redactText((e.stderr || e.message || String(error)).trim()).split('\n').slice(-2).join(' ')
  return new EngramError('refused', `git ${args[0]} failed: ${detail}`, {
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

export async function headCommit(root: string): Promise<string | undefined> {
  const out = await gitRead(root, ['rev-parse', '--verify', '-q', 'HEAD'], {allowFail: true})
  return out.trim() || undefined
}

/**
 * The first parent of a commit read from its loose object in `<top>/.git/objects` (a
 * commit just made is loose), or undefined when unsure: a packed object, a linked
 * worktree, a SHA-256 repository, a root commit. The object's bytes must hash to its
 * name, so a planted file cannot pass for the commit.
 */
export function firstParentFromFiles(top: string, commit: string): string | undefined {
  if (!/^[0-9a-f]{40}$/.test(commit)) return undefined
  try {
    zlib ??= createRequire(import.meta.url)('node:zlib') as typeof import('node:zlib')
    const raw = zlib.inflateSync(readFileSync(join(top, '.git', 'objects', commit.slice(0, 2), commit.slice(2))))
    if (createHash('sha1').update(raw).digest('hex') !== commit) return undefined
    const nul = raw.indexOf(0)
    if (nul < 0 || !raw.toString('latin1', 0, nul).startsWith('commit ')) return undefined
    const m = /^tree [0-9a-f]{40}\nparent ([0-9a-f]{40})\n/.exec(raw.toString('latin1', nul + 1, Math.min(raw.length, nul + 200)))
    return m?.[1]
  } catch {
    return undefined
  }
}

let zlib: typeof import('node:zlib') | undefined

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

/** Stream blob contents in the order asked (one `git cat-file --batch`). Missing blobs yield null. */
export async function* catBlobs(store: {top: string}, ids: string[]): AsyncGenerator<{index: number; data: Buffer | null}> {
  if (ids.length === 0) return
  const {spawn} = await childProcess()
  const child = spawn('git', [...GIT_OPTS, 'cat-file', '--batch'], {cwd: store.top, env: gitEnv({GIT_OPTIONAL_LOCKS: '0'}), stdio: ['pipe', 'pipe', 'pipe']})
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
