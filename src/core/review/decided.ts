import {gitRead} from '../git/git.js'
import {canRead} from '../session/access.js'
import type {SessionRecord} from '../session/sessions.js'
import type {Store} from '../store/store.js'

/**
 * A proposal that left the review queue: accepted, rejected, or (quarantine) purged, as the
 * commit that removed it says. Commit subjects and trailers are anyone's to write (README
 * "History"): this is what the history claims, for a reviewer asking "what happened to
 * 7f3k?", never a proof; `engram history` and `verify` prove what is signed.
 */
export interface Decision {
  id: string
  decision: 'accepted' | 'rejected' | 'purged'
  scope: string | null
  path: string | null
  commit: string
  date: string
  /** the Engram-Reviewed-By trailer: who the commit says decided */
  reviewer: string | null
  /** a rejection's or purge's "Reason:" line */
  reason: string | null
}

const DECISIONS: Record<string, Decision['decision']> = {accept: 'accepted', reject: 'rejected', purge: 'purged'}
const ID_RE = /^[0-9a-z-]{1,64}$/

/**
 * Decisions, newest first, from the commits of the store's repository; `id` keeps those
 * whose proposal id starts with it. A session sees only decisions on scopes it may read
 * (and none whose scope the commit does not name).
 */
export async function listDecisions(store: Store, opts: {id?: string; session?: SessionRecord} = {}): Promise<Decision[]> {
  const id = opts.id?.trim().toLowerCase()
  if (id !== undefined && !ID_RE.test(id)) return []
  const trailer = (k: string) => `%(trailers:key=${k},valueonly,separator=%x2C)`
  const fmt = ['%H', '%aI', '%s', trailer('Engram-Operation'), trailer('Engram-Proposal'), trailer('Engram-Reviewed-By'), '%b'].join('%x1f')
  const greps = id === undefined ? Object.keys(DECISIONS).map((op) => `--grep=Engram-Operation: ${op}`) : [`--grep=Engram-Proposal: ${id}`]
  const out = await gitRead(store.top, ['log', '-F', ...greps, `--format=%x1e${fmt}`, '--', store.gitPath('.engram')], {allowFail: true})
  const found: Decision[] = []
  for (const record of out.split('\x1e')) {
    const [commit, date, subject, op, proposal, reviewer, body] = record.split('\x1f').map((f) => f?.trim() ?? '')
    const decision = DECISIONS[op]
    if (!commit || !decision || !proposal || (id !== undefined && !proposal.startsWith(id))) continue
    // "Accept create of tenant:acme/x.md (proposal …)", "Reject proposal … for tenant:acme/x.md"
    const where = /(?:of|for) (\S+?)\/(\S+?)(?: \(proposal [^)]*\))?$/.exec(subject)
    const scope = where?.[1] ?? null
    if (opts.session && (!scope || !canRead(opts.session, scope))) continue
    found.push({
      id: proposal, decision, scope, path: where?.[2] ?? null, commit, date, reviewer: reviewer || null,
      reason: /^Reason: (.*)$/m.exec(body ?? '')?.[1] ?? null,
    })
  }
  return found
}
