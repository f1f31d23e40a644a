import {canRead, visibleScopes} from '../session/access.js'
import {listScopeFiles, listScopes} from '../memory/curated.js'
import {listEntries} from '../review/proposal.js'
import {listSessions, SessionRecord} from '../session/sessions.js'
import type {Store} from './store.js'
import {IdentityStatus, storeIdentity} from '../trust/bind.js'

export interface StoreStatus {
  root: string
  scopes: {scope: string; files: number}[]
  pending: number
  quarantined: number
  sessions: number
  tainted_sessions: number
  /** sessions escalated after repeated quarantined writes, and authors with many rejections */
  escalations: {session: string; agent: string; reason: string}[]
  quarantined_by_author: Record<string, number>
  /** the policy in force: whether config.yml is signed, and if not, why and what applies instead */
  config: {state: string; source: string; serial: number | null; problem: string | null}
  /** the store's identity on this machine (README "Store identity"); the owner's only */
  identity?: IdentityStatus
  /** queue and quarantine files that could not be read (counted above too; named by `review list`/`quarantine list`) */
  broken: number
}

/**
 * The owner's overview: scopes, queue sizes, and escalations that need attention. Inside
 * a session, the same counted over the scopes it may read only, and itself as the only
 * session (an unreadable entry counts for the owner only: its scope is unknown).
 */
export async function storeStatus(store: Store, session?: SessionRecord): Promise<StoreStatus> {
  const present = new Set(listScopes(store))
  const scopes = visibleScopes(store, session).filter((s) => present.has(s)).map((scope) => ({scope, files: listScopeFiles(store, scope).length}))
  const mine = (e: ReturnType<typeof listEntries>[number]) => (e.proposal ? canRead(session, e.proposal.scope) : !session)
  const allPending = listEntries(store, 'pending')
  const allQuarantined = listEntries(store, 'quarantined')
  const pending = allPending.filter(mine).length
  const q = allQuarantined.filter(mine)
  // broken entries: their scope is unknown, so only the owner sees them counted
  const broken = session ? 0 : [...allPending, ...allQuarantined].filter((e) => !e.proposal).length
  const byAuthor: Record<string, number> = {}
  for (const e of q) if (e.proposal) byAuthor[e.proposal.author] = (byAuthor[e.proposal.author] ?? 0) + 1
  const sessions = await listSessions(store, session)
  const escalations = sessions.flatMap((s) =>
    s.taint_reasons.filter((r) => r.startsWith('escalated:')).map((reason) => ({session: s.id, agent: s.agent, reason})),
  )
  // another author's count is about other sessions: the owner's to see
  if (!session) for (const [author, n] of Object.entries(byAuthor)) {
    if (n >= store.config.escalate_after) escalations.push({session: '-', agent: author, reason: `escalated: ${n} quarantined writes by author ${author}`})
  }
  return {
    root: store.root, scopes, pending, quarantined: q.length, sessions: sessions.length,
    tainted_sessions: sessions.filter((s) => s.tainted).length, escalations, quarantined_by_author: byAuthor, broken,
    config: {state: store.policy.state, source: store.policy.source, serial: store.policy.serial ?? null, problem: store.policy.problem ?? null},
    ...(session ? {} : {identity: await storeIdentity(store)}),
  }
}
