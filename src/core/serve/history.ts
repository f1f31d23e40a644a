import {assertCanRead} from '../session/access.js'
import {readStored} from '../memory/curated.js'
import {notFound} from '../store/errors.js'
import {catBlobs, gitRead} from '../git/git.js'
import {loadKeyring} from '../trust/keys.js'
import {parseMemory} from '../memory/memory.js'
import {isRunWriteCommit} from '../session/runlabels.js'
import {printable, scopeDir} from '../store/scope.js'
import type {SessionRecord} from '../session/sessions.js'
import {verifyMemory} from '../trust/sign.js'
import type {Store} from '../store/store.js'

/** What a commit's Engram-* trailers say. Anyone who can run `git commit` can write them: claims, not facts. */
export interface HistoryClaims {
  author: string | null
  session: string | null
  origin: string | null
  tainted: boolean | null
  proposal: string | null
  digest: string | null
  reviewed_by: string | null
  operation: string | null
  restored_from: string | null
}

export interface HistoryEntry {
  commit: string
  date: string
  subject: string
  /**
   * `<key name> (<keyid>)` when this version of the file carries a valid signature, for its
   * path, by an owner key trusted and not revoked now; otherwise null, whatever the
   * trailers say.
   */
  reviewed_by: string | null
  /** `verified`, `deleted` (no file at this commit), or why this version does not verify */
  signature: string
  /** run: scopes: the commit is the session's own scratchpad write (runlabels.ts) */
  session_write: boolean
  claims: HistoryClaims
}

const TRAILERS = ['Engram-Author', 'Engram-Session', 'Engram-Origin', 'Engram-Tainted', 'Engram-Proposal', 'Engram-Digest', 'Engram-Reviewed-By', 'Engram-Operation', 'Engram-Restored-From']

/**
 * The commits that touched one memory, newest first (STANDARD R23). Each version of the
 * file is checked against the keyring as it is now: only a valid signature by a trusted
 * owner key makes a version "reviewed"; the trailers are reported as claims.
 */
export async function memoryHistory(store: Store, session: SessionRecord | undefined, scopeText: string, path: string): Promise<HistoryEntry[]> {
  const scope = assertCanRead(session, scopeText)
  const stored = readStored(store, scope, path) // validates the path and refuses symlinks
  const rel = stored?.rel ?? `${scopeDir(scope)}/${path}`
  const file = store.gitPath(rel)
  const fmt = ['%H', '%aI', '%s', ...TRAILERS.map((t) => `%(trailers:key=${t},valueonly,separator=%x2C)`)].join('%x1f')
  const out = await gitRead(store.top, ['log', '--full-diff', '--no-renames', '--name-only', `--format=%x1e${fmt}%x1d`, '--', file], {allowFail: true})
  const records = out.split('\x1e').map((r) => r.trim()).filter(Boolean)
  if (records.length === 0) throw notFound(`No history for ${printable(path)} in ${scope}.`, `see \`engram list --scope ${scope}\``)
  const keyring = await loadKeyring(store)
  const rows = records.map((r) => {
    const [head, names = ''] = r.split('\x1d')
    const [commit, date, subject, ...t] = head.split('\x1f').map((s) => s.trim())
    return {commit, date, subject, t, files: names.split('\n').map((n) => n.trim()).filter(Boolean)}
  })
  const versions: (string | null)[] = []
  for await (const {data} of catBlobs(store, rows.map((r) => `${r.commit}:${file}`))) versions.push(data ? data.toString('utf8') : null)
  const run = scope.startsWith('run:')
  return rows.map(({commit, date, subject, t, files}, i) => {
    const orNull = (s: string | undefined) => (s ? s : null)
    const [author, sess, origin, tainted, proposal, digest, reviewer, operation, restored] = t
    const claims: HistoryClaims = {
      author: orNull(author), session: orNull(sess), origin: orNull(origin),
      tainted: tainted === 'true' ? true : tainted === 'false' ? false : null,
      proposal: orNull(proposal), digest: orNull(digest), reviewed_by: orNull(reviewer), operation: orNull(operation), restored_from: orNull(restored),
    }
    let reviewed: string | null = null
    let signature = 'deleted'
    const text = versions[i]
    if (text !== null && text !== undefined) {
      if (run) {
        signature = 'unsigned (run: scratchpad)'
      } else {
        try {
          const check = verifyMemory(keyring, rel, parseMemory(text, `${rel}@${commit.slice(0, 10)}`))
          if (check.ok) {
            reviewed = `${keyring.status(check.keyid)?.name ?? check.keyid} (${check.keyid})`
            signature = 'verified'
          } else {
            signature = `${check.problem}: ${check.detail}`
          }
        } catch (error) {
          signature = `unreadable: ${(error as Error).message}`
        }
      }
    }
    const trailers = {'Engram-Operation': claims.operation ?? '', 'Engram-Session': claims.session ?? ''}
    return {commit, date, subject, reviewed_by: reviewed, signature, session_write: run && isRunWriteCommit(scope, trailers, files, `${store.gitPath(scopeDir(scope))}/`), claims}
  })
}
