import {execFileSync} from 'node:child_process'
import {mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {afterEach} from 'vitest'

import {MemoryFile, serializeMemory} from '../../src/core/memory/memory.js'
import {Store} from '../../src/core/store/store.js'

/** A real temp git repository holding a store (optionally in a subfolder). */
export class TestRepo {
  readonly top: string
  readonly store: Store
  private n = 0

  constructor(prefix = '') {
    this.top = realpathSync(mkdtempSync(join(tmpdir(), 'engram-index-')))
    this.git('init', '-q', '-b', 'main')
    const root = prefix ? join(this.top, prefix) : this.top
    mkdirSync(join(root, '.engram'), {recursive: true})
    writeFileSync(join(root, '.engram', 'config.yml'), 'version: 1\n')
    this.store = new Store(root, this.top)
  }

  git(...args: string[]): string {
    return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'commit.gpgsign=false', ...args], {
      cwd: this.top,
      encoding: 'utf8',
    })
  }

  /** Write a memory file at a store-relative path; returns its text. */
  put(rel: string, fields: Partial<MemoryFile['frontmatter']> & {body: string}): string {
    const {body, ...fm} = fields
    const scope = rel.startsWith('org/') ? 'org' : rel.split('/').slice(0, 2).join(':')
    const text = serializeMemory({
      frontmatter: {
        id: `m${++this.n}`,
        title: '',
        scope,
        tags: [],
        author: 'alice',
        source_session: null,
        origin: 'direct_chat',
        tainted: false,
        taint_reasons: [],
        created: '2025-01-01T00:00:00.000Z',
        updated: '2025-01-01T00:00:00.000Z',
        version: 1,
        proposal: null,
        reviewed_by: 'owner',
        digest: null,
        signature: null,
        ...fm,
      },
      body,
    })
    this.write(rel, text)
    return text
  }

  write(rel: string, text: string): void {
    const abs = this.store.abs(rel)
    mkdirSync(dirname(abs), {recursive: true})
    writeFileSync(abs, text)
  }

  remove(rel: string): void {
    rmSync(this.store.abs(rel))
  }

  commit(message = 'change'): void {
    this.git('add', '-A')
    this.git('commit', '-q', '--allow-empty', '-m', message)
  }

  cleanup(): void {
    rmSync(this.top, {recursive: true, force: true})
  }
}

/** Deterministic PRNG for randomised tests (same seed, same store). */
export function prng(seed: number): () => number {
  let s = seed >>> 0 || 1
  return () => {
    s ^= s << 13
    s >>>= 0
    s ^= s >>> 17
    s ^= s << 5
    s >>>= 0
    return s / 0x100000000
  }
}

/** A factory of test repositories that are all removed after each test (call at file level). */
export function useTestRepos(): (prefix?: string) => TestRepo {
  let repos: TestRepo[] = []
  afterEach(() => {
    for (const r of repos) r.cleanup()
    repos = []
  })
  return (prefix = '') => {
    const r = new TestRepo(prefix)
    repos.push(r)
    return r
  }
}
