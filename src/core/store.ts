import {existsSync, lstatSync, readFileSync, realpathSync} from 'node:fs'
import {dirname, join, relative, resolve, sep} from 'node:path'

import {EngramConfig, loadConfig} from './config.js'
import {EngramError, notFound} from './errors.js'
import {gitTopLevel} from './git.js'

export const ENGRAM_DIR = '.engram'

/** A store: a folder in a git work tree that holds `.engram/`. */
export class Store {
  /** absolute, real path of the store folder */
  readonly root: string
  /** absolute path of the git work tree's top */
  readonly top: string
  /** the store folder relative to the work tree top, '' or ending in '/' */
  readonly prefix: string
  private _config?: EngramConfig

  constructor(root: string, top: string) {
    this.root = root
    this.top = top
    const rel = relative(top, root).split(sep).join('/')
    this.prefix = rel ? `${rel}/` : ''
  }

  /**
   * Open the store at `base` (or ENGRAM_BASE, or the nearest folder upward from the
   * current directory holding `.engram/`). The config is checked unless `config: false`.
   */
  static async open(base?: string, opts: {config?: boolean} = {}): Promise<Store> {
    const start = resolve(base ?? process.env.ENGRAM_BASE ?? process.cwd())
    const root = findStoreRoot(start, base !== undefined || process.env.ENGRAM_BASE !== undefined)
    if (!root) {
      throw notFound(`No engram store at or above ${start}.`, 'run `engram init` there, or pass --base <store folder>')
    }
    const top = await gitTopLevel(root)
    if (!top) throw new EngramError('refused', `${root} holds .engram/ but is not in a git work tree.`, {nextStep: 'run `git init` there, or restore the repository'})
    const store = new Store(root, realpathSync(top))
    // validate config early: a malformed config is bad input before anything runs (a
    // read-only command that never uses the config, like search, may pass config: false)
    if (opts.config !== false) store.config
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
    return store
  }

  get config(): EngramConfig {
    if (!this._config) this._config = loadConfig(this.abs(`${ENGRAM_DIR}/config.yml`))
    return this._config
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
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw error
    }
  }
}

function findStoreRoot(start: string, exact: boolean): string | undefined {
  let dir = start
  for (;;) {
    const marker = join(dir, ENGRAM_DIR)
    if (existsSync(marker) && lstatSync(marker).isDirectory()) return realpathSync(dir)
    if (exact) return undefined
    const parent = dirname(dir)
    if (parent === dir) return undefined
    dir = parent
  }
}
