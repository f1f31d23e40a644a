import {execFile} from 'node:child_process'
import {existsSync, statSync, unlinkSync} from 'node:fs'
import {join} from 'node:path'
import {promisify} from 'node:util'

import {EngramError} from './errors.js'

const execFileP = promisify(execFile)

/**
 * The environment every git call runs with: inherited GIT_DIR / GIT_WORK_TREE /
 * GIT_INDEX_FILE (and friends) are scrubbed so that a caller's environment can never
 * point our commands at another repository (as pass does). No prompts, no pager.
 */
export function gitEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith('GIT_') && !['GIT_AUTHOR_NAME', 'GIT_AUTHOR_EMAIL', 'GIT_COMMITTER_NAME', 'GIT_COMMITTER_EMAIL'].includes(k)) continue
    env[k] = v
  }
  env.GIT_TERMINAL_PROMPT = '0'
  env.LC_ALL = 'C'
  return {...env, ...extra}
}

/**
 * A read-only git call: no optional locks (so it never races a writer on index.lock),
 * arguments passed as an array (user text is never parsed as an option: callers put
 * paths after `--`). Returns stdout.
 */
export async function gitRead(root: string, args: string[], opts: {allowFail?: boolean} = {}): Promise<string> {
  try {
    const {stdout} = await execFileP('git', ['-c', 'core.quotepath=off', ...args], {
      cwd: root,
      env: gitEnv({GIT_OPTIONAL_LOCKS: '0'}),
      maxBuffer: 256 * 1024 * 1024,
      encoding: 'utf8',
    })
    return stdout
  } catch (error) {
    if (opts.allowFail) return ''
    throw gitFailure(args, error)
  }
}

/** A git call that may change the repository: used by commit.ts (under the store lock) and init. */
export async function gitWrite(root: string, args: string[], input?: string, extraEnv: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'git',
      ['-c', 'core.quotepath=off', ...args],
      {cwd: root, env: gitEnv(extraEnv), maxBuffer: 64 * 1024 * 1024, encoding: 'utf8'},
      (error, stdout) => (error ? reject(gitFailure(args, error)) : resolve(stdout)),
    )
    // git may exit before reading its input; a closed pipe must not crash the process.
    child.stdin?.on('error', () => {})
    child.stdin?.end(input ?? '')
  })
}

function gitFailure(args: string[], error: unknown): EngramError {
  const e = error as {stderr?: string; message?: string}
  const detail = (e.stderr || e.message || String(error)).trim().split('\n').slice(-2).join(' ')
  return new EngramError('refused', `git ${args[0]} failed: ${detail}`, {
    nextStep: 'check the repository with `git status`; run `engram verify` if the store looks inconsistent',
  })
}

/** The top of the git work tree containing `dir`, or undefined. */
export async function gitTopLevel(dir: string): Promise<string | undefined> {
  const out = await gitRead(dir, ['rev-parse', '--show-toplevel'], {allowFail: true})
  return out.trim() || undefined
}

export async function headCommit(root: string): Promise<string | undefined> {
  const out = await gitRead(root, ['rev-parse', '--verify', '-q', 'HEAD'], {allowFail: true})
  return out.trim() || undefined
}

/** The blob id of `relPath` at HEAD (store-relative to the repo top), or undefined. */
export async function blobAtHead(top: string, repoRelPath: string): Promise<string | undefined> {
  const out = await gitRead(top, ['rev-parse', '--verify', '-q', `HEAD:${repoRelPath}`], {allowFail: true})
  return out.trim() || undefined
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
