/**
 * `engram detach`: a store that shares its project's repository (made before 0.3.0, or
 * with `init --shared-history`) gets a repository of its own, with its history: the
 * commits that touched the store's folder, as `git subtree split` rewrites them (same
 * messages, trailers, authors and dates; paths relative to the store; new commit ids).
 * Signatures cover contents, not commits, and this machine's trust pins and serials are
 * keyed by the store's path, so everything verifies as before. The project's index stops
 * tracking the folder (staged, for the owner to commit) and its `.gitignore` leaves it out;
 * the project's history is not rewritten. README "The store".
 */
import {createHash} from 'node:crypto'
import {existsSync, lstatSync, readFileSync, readlinkSync, realpathSync, rmSync} from 'node:fs'
import {join, relative, sep} from 'node:path'

import {gitInit, gitRead, gitWrite} from '../git/git.js'
import {refused} from './errors.js'
import {writeFileAtomic} from './fsutil.js'
import {ignoreStoreIn} from './init.js'
import {withStoreLock} from './lock.js'
import type {Store} from './store.js'

export interface DetachResult {
  store: string
  /** the project repository the store left */
  project: string
  /** commits carried over into the store's own repository */
  commits: number
  head: string
  /** what the owner still has to do in the project */
  staged: string
}

export async function detachHistory(store: Store): Promise<DetachResult | undefined> {
  const root = realpathSync(store.root)
  const top = store.top
  if (top === root) return undefined
  const rel = relative(top, root).split(sep).join('/')
  return withStoreLock(store, async () => {
    const dirty = await uncommitted(top, rel)
    if (dirty.length > 0) {
      throw refused(`The store has changes its project's repository has not committed (${dirty.length} path(s), e.g. ${dirty[0]}); nothing was moved.`, `commit or drop them (\`git -C ${top} status -- ${rel}\`), then run detach again`)
    }
    if (existsSync(join(root, '.git'))) throw refused(`${root} already holds a .git of its own; nothing was moved.`, 'remove the stray .git, or use the store from that repository')
    const branch = (await gitRead(top, ['symbolic-ref', '--short', '-q', 'HEAD'], {allowFail: true})).trim() || 'main'
    // the store's history as its own: every commit that touched its folder, paths made relative
    const split = (await gitWrite(top, ['subtree', 'split', `--prefix=${rel}`, '-q'])).trim().split('\n').pop()!.trim()
    if (!/^[0-9a-f]{40}$/.test(split)) throw refused(`git subtree split gave no commit for ${rel}; nothing was moved.`)
    const tmp = `refs/engram/detach-${process.pid}`
    await gitWrite(top, ['update-ref', tmp, split])
    try {
      await gitInit(root)
      await gitWrite(root, ['fetch', '-q', '--no-tags', top, `${tmp}:refs/engram/imported`])
      await gitWrite(root, ['update-ref', `refs/heads/${branch}`, 'refs/engram/imported'])
      await gitWrite(root, ['update-ref', '-d', 'refs/engram/imported'])
      await gitWrite(root, ['symbolic-ref', 'HEAD', `refs/heads/${branch}`])
      // the work tree already holds exactly that tree (checked clean above): only the index is new
      await gitWrite(root, ['reset', '-q', '--mixed', branch])
      const left = await gitRead(root, ['status', '--porcelain', '--untracked-files=all'])
      if (left.trim() !== '') throw refused(`The store's own repository does not match its files (${left.trim().split('\n')[0]}); nothing was moved.`)
    } catch (error) {
      // all or nothing: the project still tracks the store, so the new repository goes
      rmSync(join(root, '.git'), {recursive: true, force: true})
      throw error
    } finally {
      await gitWrite(top, ['update-ref', '-d', tmp])
    }
    // the project stops tracking the folder; its history is left as it is
    await gitWrite(top, ['rm', '-r', '-q', '--cached', '--', rel])
    const ignore = join(top, '.gitignore')
    const next = ignoreStoreIn(top, rel, existsSync(ignore) ? readFileSync(ignore, 'utf8') : undefined)
    if (next !== undefined) writeFileAtomic(ignore, next)
    const commits = Number((await gitRead(root, ['rev-list', '--count', 'HEAD'])).trim())
    const head = (await gitRead(root, ['rev-parse', 'HEAD'])).trim()
    return {store: root, project: top, commits, head, staged: `git -C '${top}' add .gitignore && git -C '${top}' commit -m 'Move engram memory into a repository of its own'`}
  })
}

/**
 * The store's paths whose work tree or index differs from the project's HEAD, worked out
 * without `git status`: that would run the project's clean filters (its .git/config and
 * .gitattributes), which an agent may have planted. The index is compared with HEAD by
 * git (no work tree involved); each file with the index by hashing it here as git would.
 */
async function uncommitted(top: string, rel: string): Promise<string[]> {
  const out: string[] = []
  const staged = await gitRead(top, ['diff-index', '--cached', '--name-only', '-z', 'HEAD', '--', rel], {allowFail: true})
  out.push(...staged.split('\0').filter(Boolean))
  const entries = (await gitRead(top, ['ls-files', '-s', '-z', '--', rel])).split('\0').filter(Boolean)
  for (const e of entries) {
    const tab = e.indexOf('\t')
    const [mode, blob] = e.slice(0, tab).split(' ')
    const path = e.slice(tab + 1)
    const abs = join(top, path)
    let bytes: Buffer
    try {
      const st = lstatSync(abs)
      bytes = mode === '120000' ? (st.isSymbolicLink() ? Buffer.from(readlinkSync(abs)) : Buffer.from('\0not a link')) : st.isFile() ? readFileSync(abs) : Buffer.from('\0not a file')
    } catch {
      out.push(path)
      continue
    }
    const sha = createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex')
    if (sha !== blob) out.push(path)
  }
  const untracked = await gitRead(top, ['ls-files', '--others', '--exclude-standard', '-z', '--', rel])
  out.push(...untracked.split('\0').filter(Boolean))
  return [...new Set(out)]
}
