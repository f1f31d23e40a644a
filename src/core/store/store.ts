import {Dirent, existsSync, lstatSync, readdirSync, readFileSync, realpathSync} from 'node:fs'
import {dirname, join, relative, resolve, sep} from 'node:path'

import type {EngramConfig} from './config.js'
import {EngramError, notFound, refused} from './errors.js'
import {gitTopLevel} from '../git/git.js'
import {requireGit} from '../git/need-git.js'
import {Policy, resolvePolicy} from './policy.js'
import {setRulesInForce} from '../write/redact/index.js'

export const ENGRAM_DIR = '.engram'

/** A store: a folder in a git work tree that holds `.engram/`. */
export class Store {
  /** absolute, real path of the store folder */
  readonly root: string
  /** absolute path of the git work tree's top */
  readonly top: string
  /** the store folder relative to the work tree top, '' or ending in '/' */
  readonly prefix: string
  private _policy?: Policy
  /** Where a warning about the store goes (a command sets stderr); said once per store and process. */
  static onWarning: (message: string) => void = () => {}
  private static warned = new Set<string>()

  constructor(root: string, top: string) {
    this.root = root
    this.top = top
    const rel = relative(top, root).split(sep).join('/')
    this.prefix = rel ? `${rel}/` : ''
  }

  /**
   * Open the store at `base` (or ENGRAM_BASE, or the nearest folder upward from the
   * current directory holding `.engram/`). The policy (the signed config, README
   * "Configuration") is worked out unless `config: false`.
   */
  static async open(base?: string, opts: {config?: boolean; from?: string} = {}): Promise<Store> {
    // `from`: look upward from this folder instead (a hook's payload names the agent's folder), ENGRAM_BASE aside
    const envBase = opts.from === undefined ? process.env.ENGRAM_BASE : undefined
    const start = resolve(base ?? envBase ?? opts.from ?? process.cwd())
    const root = findStoreRoot(start, base !== undefined || envBase !== undefined)
    if (!root) {
      throw notFound(`No engram store at or above ${start}.`, 'run `engram init` there, or pass --base <store folder>')
    }
    assertStoreLayout(root)
    requireGit()
    const top = await gitTopLevel(root)
    if (!top) throw new EngramError('refused', `${root} holds .engram/ but is not in a git work tree.`, {nextStep: 'run `git init` there, or restore the repository'})
    const store = new Store(root, realpathSync(top))
    // before anything runs, so that every command warns when config.yml is not in force (a
    // read-only command that never uses the config, like search, may pass config: false)
    // an earlier engram process killed mid-commit: finish or drop its commit before
    // anything reads the store (README "Crash safety"); two stats when there was none
    if (existsSync(join(root, ENGRAM_DIR, 'txn.tmp-journal')) || existsSync(join(root, ENGRAM_DIR, 'index-sync.tmp-pending'))) {
      const {withStoreLock} = await import('./lock.js')
      try {
        await withStoreLock(store, async () => {}, {timeoutMs: 5000})
      } catch {
        // a read-only or busy store: the next command that writes recovers it under the lock
      }
    }
    if (opts.config !== false) await store.loadPolicy()
    return store
  }

  /** Work out the policy in force (again, e.g. after `config sign`), warning once when config.yml is not it. */
  async loadPolicy(): Promise<Policy> {
    this._policy = await resolvePolicy(this)
    // every message of this process is redacted with the store's own rules from now on
    setRulesInForce(this._policy.config.redaction.extra)
    if (this._policy.warning && !Store.warned.has(this.root)) {
      Store.warned.add(this.root)
      Store.onWarning(this._policy.warning)
    }
    return this._policy
  }

  /** The policy in force: only ever a config signed by a trusted owner key, or the defaults. */
  get policy(): Policy {
    if (!this._policy) throw new Error('the store policy was not loaded (the store was opened with config: false)')
    return this._policy
  }

  get config(): EngramConfig {
    return this.policy.config
  }

  /** Store-relative POSIX path → absolute path. */
  abs(rel: string): string {
    return join(this.root, ...rel.split('/'))
  }

  /** Store-relative path → path relative to the git work tree top (for git commands). */
  gitPath(rel: string): string {
    return this.prefix + rel
  }

  readText(rel: string): string | undefined {
    try {
      return readFileSync(this.abs(rel), 'utf8')
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'ENOENT') return undefined
      // a folder (or other non-file) where a store file belongs is a broken store, not a bug
      if (code === 'EISDIR') throw notAFile(rel)
      throw error
    }
  }
}

function findStoreRoot(start: string, exact: boolean): string | undefined {
  let dir = start
  for (;;) {
    const marker = join(dir, ENGRAM_DIR)
    if (existsSync(marker) && lstatSync(marker).isDirectory()) return realpathSync(dir)
    if (lstatSync(marker, {throwIfNoEntry: false})?.isSymbolicLink()) throw symlinked(ENGRAM_DIR)
    if (exact) return undefined
    const parent = dirname(dir)
    if (parent === dir) return undefined
    dir = parent
  }
}

/** The folders a scope lives in below the store root (scope.ts scopeDir). */
const SCOPE_KINDS = ['tenant', 'project', 'run'] as const

const symlinked = (rel: string) =>
  refused(`The store's "${rel}" is a symbolic link; engram never follows links out of the store, so it refuses the store.`, 'replace the link with a real folder (or restore it from git) and retry')

const notAFile = (rel: string) =>
  refused(`The store's "${rel}" is not a regular file (a folder or other entry stands in its place), so engram refuses the store.`, `remove it and restore the file from git (\`git checkout -- ${rel}\`), then retry`)

/** `.engram/` entries that are always regular files when present. */
const ENGRAM_FILES = new Set(['config.yml', 'config.sig', '.gitignore'])

function children(dir: string): Dirent[] {
  try {
    return readdirSync(dir, {withFileTypes: true})
  } catch {
    return []
  }
}

/**
 * Refuse a store whose `.engram/` entries (proposals, manifests, quarantine, sessions,
 * keys, index, config, lock) or scope folders (org, tenant/<id>, project/<name>,
 * run/<session>) are symbolic links: a link could make engram read or write outside the
 * store (STANDARD.md R17). Known files (config.yml, config.sig) must be regular files: a
 * folder in their place would otherwise fail every command as an unexpected error. Checked before any command reads or writes; a few directory
 * listings, so cheap enough for every open.
 */
function assertStoreLayout(root: string): void {
  for (const e of children(join(root, ENGRAM_DIR))) {
    if (e.isSymbolicLink()) throw symlinked(`${ENGRAM_DIR}/${e.name}`)
    if (ENGRAM_FILES.has(e.name) && !e.isFile()) throw notAFile(`${ENGRAM_DIR}/${e.name}`)
  }
  for (const top of ['org', ...SCOPE_KINDS]) {
    const st = lstatSync(join(root, top), {throwIfNoEntry: false})
    if (st?.isSymbolicLink()) throw symlinked(top)
  }
  for (const kind of SCOPE_KINDS) for (const e of children(join(root, kind))) if (e.isSymbolicLink()) throw symlinked(`${kind}/${e.name}`)
}
