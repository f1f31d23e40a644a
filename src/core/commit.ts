import {gitRead, gitWrite} from './git.js'
import {redactText} from './redact/index.js'
import type {Store} from './store.js'

export interface Trailers {
  [key: string]: string | number | boolean | null | undefined
}

export interface CommitRequest {
  /** one sentence, the subject line */
  subject: string
  /** optional paragraph(s) after the subject */
  body?: string
  /** provenance trailers, e.g. {'Engram-Author': 'claude-code'} */
  trailers?: Trailers
  /** store-relative paths this change touched (added, modified or deleted) */
  paths: string[]
}

let identity: Promise<Record<string, string>> | undefined

/** A machine with no git identity (a fresh CI box) still commits, as "engram". */
function identityEnv(store: Store): Promise<Record<string, string>> {
  identity ??= (async () => {
    const env: Record<string, string> = {}
    const name = (await gitRead(store.top, ['config', 'user.name'], {allowFail: true})).trim()
    const email = (await gitRead(store.top, ['config', 'user.email'], {allowFail: true})).trim()
    if (!name && !process.env.GIT_AUTHOR_NAME) env.GIT_AUTHOR_NAME = env.GIT_COMMITTER_NAME = 'engram'
    if (!email && !process.env.GIT_AUTHOR_EMAIL) env.GIT_AUTHOR_EMAIL = env.GIT_COMMITTER_EMAIL = 'engram@localhost'
    return env
  })()
  return identity
}

/** A trailer value on one line, whatever the input, redacted before it is cut to length. */
export function trailerValue(v: unknown): string {
  // eslint-disable-next-line no-control-regex
  return redactText(String(v)).replace(/[\u0000-\u001f\u007f]+/g, ' ').trim().slice(0, 500)
}

export function commitMessage(req: Omit<CommitRequest, 'paths'>): string {
  const lines = [trailerValue(req.subject)]
  if (req.body) lines.push('', redactText(req.body.trim()))
  const trailers = Object.entries(req.trailers ?? {}).filter(([, v]) => v !== undefined && v !== null && v !== '')
  if (trailers.length > 0) lines.push('', ...trailers.map(([k, v]) => `${k}: ${trailerValue(v)}`))
  return `${lines.join('\n')}\n`
}

/**
 * The one function that commits to the store's repository (as pass's git_add_file):
 * stages exactly the given paths, commits only them (the user's other staged work in the
 * same repository is left alone), and makes no commit when nothing changed.
 * Callers hold the store lock. Returns the new commit id, or undefined.
 */
export async function commitPaths(store: Store, req: CommitRequest): Promise<string | undefined> {
  const paths = [...new Set(req.paths)].map((p) => store.gitPath(p))
  if (paths.length === 0) return undefined
  const env = await identityEnv(store)
  await gitWrite(store.top, ['add', '--all', '--', ...paths])
  const staged = await gitWrite(store.top, ['diff', '--cached', '--name-only', '--', ...paths])
  if (staged.trim() === '') return undefined
  // The message comes on stdin (-F -), never parsed as an option; paths come after `--`.
  await gitWrite(store.top, ['commit', '--quiet', '--no-verify', '-F', '-', '--only', '--', ...paths], commitMessage(req), env)
  return (await gitWrite(store.top, ['rev-parse', 'HEAD'])).trim()
}
