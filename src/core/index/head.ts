import {lstatSync, readFileSync, statSync} from 'node:fs'
import {isAbsolute, join, resolve} from 'node:path'

import {headCommit} from '../git/git.js'

/**
 * The commit HEAD points at, read from the repository's files instead of spawning git
 * (a warm server asks on every request, and a spawn costs milliseconds). It is the key of
 * every warm cache: any commit changes it. Handles a `.git` folder, a `.git` file (linked
 * worktrees, submodules) with its `commondir`, loose refs and `packed-refs`. Anything it
 * does not understand (a symbolic ref pointing at a symbolic ref, reftable, an unborn
 * branch, unreadable files) goes to `git rev-parse`, which is always right.
 */
export async function readHead(top: string): Promise<string | undefined> {
  const fast = readHeadFromFiles(top)
  if (fast !== undefined) return fast
  return headCommit(top)
}

const OID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/

/** HEAD from the files alone, or undefined when unsure (the caller then asks git). */
export function readHeadFromFiles(top: string): string | undefined {
  try {
    const gitDir = findGitDir(top)
    if (!gitDir) return undefined
    const head = readFileSync(join(gitDir, 'HEAD'), 'utf8').trim()
    if (OID.test(head)) return head
    const m = /^ref: (refs\/heads\/[^\s]+)$/.exec(head)
    if (!m) return undefined
    const ref = m[1]
    if (ref.split('/').some((part) => part === '..' || part === '.' || part === '')) return undefined
    let common = gitDir
    // not a linked worktree (the common case, asked on every request): refs live beside HEAD, and no exception is thrown for it
    const commondir = join(gitDir, 'commondir')
    if (statSync(commondir, {throwIfNoEntry: false}) !== undefined) {
      try {
        const c = readFileSync(commondir, 'utf8').trim()
        common = isAbsolute(c) ? c : resolve(gitDir, c)
      } catch {
        // gone since: as no linked worktree
      }
    }
    let loose: string | undefined
    try {
      const file = join(common, ...ref.split('/'))
      // a symlink there is a symbolic ref to git, which reads its target as a ref name: left to git
      const st = lstatSync(file, {throwIfNoEntry: false})
      if (st !== undefined) {
        if (!st.isFile()) return undefined
        loose = readFileSync(file, 'utf8').trim()
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return undefined
    }
    if (loose !== undefined) return OID.test(loose) ? loose : undefined
    let packed: string
    try {
      packed = readFileSync(join(common, 'packed-refs'), 'utf8')
    } catch {
      return undefined
    }
    // the ref's one line; two lines for it (which git would read otherwise) are left to git
    let found: string | undefined
    for (const line of packed.split('\n')) {
      if (line.endsWith(` ${ref}`)) {
        if (found !== undefined) return undefined
        found = line.slice(0, line.length - ref.length - 1)
      }
    }
    return found !== undefined && OID.test(found) ? found : undefined
  } catch {
    return undefined
  }
}

function findGitDir(top: string): string | undefined {
  const dotGit = join(top, '.git')
  const st = statSync(dotGit)
  if (st.isDirectory()) return dotGit
  if (!st.isFile()) return undefined
  const m = /^gitdir: (.+)$/m.exec(readFileSync(dotGit, 'utf8'))
  if (!m) return undefined
  const dir = m[1].trim()
  return isAbsolute(dir) ? dir : resolve(top, dir)
}
