import {gitRead} from '../git/git.js'
import {ORIGINS, isIndirectOrigin} from '../memory/memory.js'
import {parseScope, scopeDir} from '../store/scope.js'
import {SessionRecord, loadSession} from './sessions.js'
import type {Store} from '../store/store.js'

/** What serving says of a run: memory: only what engram's own commit and the session record prove. */
export interface RunLabel {
  /** `agent <name>` from the session record, or `unverified` */
  author: string
  session: string
  origin: string
  tainted: boolean
  /** a scratchpad is never reviewed */
  reviewed_by: null
  /** the file on disk is what a commit of the session's own write path wrote */
  proven: boolean
}

interface Written {
  blob: string | null
  proven: boolean
  origin: string
  tainted: boolean
}

const TRAILERS = ['Engram-Operation', 'Engram-Session', 'Engram-Origin', 'Engram-Tainted'] as const

/**
 * Whether a commit is one the write path makes for a run: scratchpad write: engram's
 * trailers for that very session, and nothing changed outside that run folder (a commit
 * that also touched curated memory, the queue or another session's folder is not one).
 */
export function isRunWriteCommit(scope: string, trailers: Record<string, string>, files: string[], gitDir: string): boolean {
  const s = parseScope(scope)
  if (s.kind !== 'run') return false
  return trailers['Engram-Operation'] === 'write' && trailers['Engram-Session'] === s.name && files.length > 0 && files.every((f) => f.startsWith(gitDir))
}

/**
 * Labels for run: memory (STANDARD R23). A scratchpad file is unsigned, and its
 * frontmatter (author, origin, reviewed_by, tainted) is whatever was written into the
 * file — by its session, or by anything else that can write the store — so none of it is
 * a label. A file is labelled `agent <name>` of the session whose folder it is in only
 * when the file on disk is the blob the newest commit touching it wrote, and that commit
 * is the session's own write (isRunWriteCommit); its taint is the session record's (which
 * only goes up), the commit's, and its origin's. Anything else is `unverified` and tainted.
 * One `git log` per run scope, on first use.
 */
export class RunLabels {
  private readonly scopes = new Map<string, Promise<{files: Map<string, Written>; session: SessionRecord | undefined}>>()

  constructor(private readonly store: Store) {}

  private load(scope: string) {
    let p = this.scopes.get(scope)
    if (!p) {
      p = (async () => {
        const dir = `${this.store.gitPath(scopeDir(scope))}/`
        const fmt = TRAILERS.map((t) => `%(trailers:key=${t},valueonly,separator=%x2C)`).join('%x1f')
        const out = await gitRead(this.store.top, ['log', '--full-diff', '--no-renames', '--raw', '--no-abbrev', `--format=%x1e${fmt}%x1d`, '--', dir], {allowFail: true})
        const files = new Map<string, Written>()
        for (const rec of out.split('\x1e').slice(1)) {
          const [head, raw = ''] = rec.split('\x1d')
          const t = Object.fromEntries(TRAILERS.map((k, i) => [k, (head.split('\x1f')[i] ?? '').trim()]))
          const changes = raw.split('\n').flatMap((l) => {
            const m = /^:\d+ \d+ [0-9a-f]+ ([0-9a-f]+) ([A-Z])\d*\t(.+)$/.exec(l)
            return m ? [{blob: m[2] === 'D' ? null : m[1], file: m[3]}] : []
          })
          const proven = isRunWriteCommit(scope, t, changes.map((c) => c.file), dir)
          for (const c of changes) {
            // git log is newest first: the first commit seen for a file wrote what it is now
            if (!c.file.startsWith(dir) || files.has(c.file)) continue
            files.set(c.file, {blob: c.blob, proven, origin: t['Engram-Origin'], tainted: t['Engram-Tainted'] !== 'false'})
          }
        }
        let session: SessionRecord | undefined
        try {
          session = await loadSession(this.store, parseScope(scope).name)
        } catch {
          session = undefined
        }
        return {files, session}
      })()
      this.scopes.set(scope, p)
    }
    return p
  }

  /** `rel` is store-relative, `blob` the git blob id of the file's bytes as served. */
  async label(scope: string, rel: string, blob: string): Promise<RunLabel> {
    const sid = parseScope(scope).name
    const {files, session} = await this.load(scope)
    const w = files.get(this.store.gitPath(rel))
    if (!session || !w || !w.proven || w.blob !== blob) {
      return {author: 'unverified', session: sid, origin: 'unverified', tainted: true, reviewed_by: null, proven: false}
    }
    const origin = (ORIGINS as readonly string[]).includes(w.origin) ? w.origin : 'unverified'
    const tainted = session.tainted || w.tainted || origin === 'unverified' || isIndirectOrigin(origin)
    return {author: `agent ${session.agent}`, session: sid, origin, tainted, reviewed_by: null, proven: true}
  }
}

export const isRunScope = (scope: string) => scope.startsWith('run:')
