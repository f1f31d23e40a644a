/**
 * `engram forget`: a deletion of one curated memory, proposed for review like any change
 * (an agent session for its assigned scope, or the owner, whose proposal is signed), or
 * applied at once by the owner (`now`): signed manifest, file removal and commit together.
 * History keeps the deleted version; `engram restore` brings it back.
 */
import {commitChanges} from '../git/commit.js'
import {readStored} from '../memory/curated.js'
import {inheritedTaint} from '../memory/memory.js'
import {EngramError, badInput, notFound, refused, usageError} from '../store/errors.js'
import type {KeyPair} from '../trust/sign.js'
import {newProposalId} from '../store/ids.js'
import {withStoreLock} from '../store/lock.js'
import {memoryRelPath} from '../store/paths.js'
import {formatScope, parseScope, printable} from '../store/scope.js'
import type {Store} from '../store/store.js'
import {writeRoute} from '../session/access.js'
import type {SessionRecord} from '../session/sessions.js'
import {clipRedacted, redactText} from '../write/redact/index.js'
import {planSignedChange} from './accept-plan.js'
import {Proposal, entryFile, proposalDigest, serializeProposal} from './proposal.js'
import {ownerKey, signChange, storeView} from './review.js'
import {signProposal} from './signed.js'

export interface ForgetInput {
  scope: string
  path: string
  reason: string
  /** the owner only: delete at once instead of proposing */
  now?: boolean
  keyName?: string
}

export interface ForgetResult {
  status: 'pending' | 'deleted'
  scope: string
  path: string
  proposal?: string
  digest?: string
  commit?: string
  reason: string
}

/** The reason, redacted and bounded: it is stored in the entry and the commit message. */
function reasonOf(store: Store, reason: string): string {
  const why = clipRedacted(redactText(reason.trim(), store.config.redaction.extra), 500, store.config.redaction.extra)
  if (!why) throw usageError('A reason is required.', 'e.g. --reason "superseded: the renewal moved to April"')
  return why
}

export async function forgetMemory(store: Store, session: SessionRecord | undefined, input: ForgetInput): Promise<ForgetResult> {
  const scope = formatScope(parseScope(input.scope))
  if (scope.startsWith('run:')) throw badInput('run: scratchpads are not curated memory; forget deletes curated memory (org, project:, tenant:).', 'a run: scratchpad is cleared by the dream job after the retention period')
  const reason = reasonOf(store, input.reason)
  if (session) {
    if (input.now) throw refused('Only the owner can delete at once (--now); an agent session proposes the deletion for review.', 'drop --now: the owner reviews the deletion')
    // the same rule as a write: a session proposes to its assigned scope only (org, read-only scopes and other tenants refused)
    if (writeRoute(session, scope, store.config) !== 'proposal') throw refused(`Session ${session.id} may not forget in scope ${printable(scope)}.`)
  }
  // the path is checked before anything else happens: scope-relative, no "..", no link
  memoryRelPath(store, scope, input.path)
  if (input.now) return forgetNow(store, scope, input.path, reason, input.keyName)
  // the owner's proposal is signed with the owner key; a session's is proven by its record
  const owner = session ? undefined : await ownerKey(store, input.keyName)
  const maker = session
    ? {author: session.agent, session, origin: 'direct_chat' as const, taint: inheritedTaint(session, 'direct_chat')}
    : {author: owner!.key.name, origin: 'owner' as const, taint: {tainted: false, reasons: []}, key: owner!.key, role: 'owner' as const}
  const r = await proposeDeletion(store, maker, {scope, path: input.path, kind: 'forget', note: `forget: ${reason}`, reason})
  return {status: 'pending', scope, path: input.path, proposal: r.id, digest: r.digest, commit: r.commit, reason}
}

/** Who proposes a deletion: an agent session (proven by its record) or a key (owner, dreamer) that signs the entry. */
export interface DeletionMaker {
  author: string
  session?: SessionRecord
  origin: 'direct_chat' | 'owner' | 'dream'
  taint: {tainted: boolean; reasons: string[]}
  key?: KeyPair
  role?: 'owner' | 'dreamer'
}

/**
 * A deletion (of `path`, and of `removes`, all files of `scope`) as a review-queue entry,
 * against the files as they are under the lock: the one builder for forget and the dream's
 * retire and clear proposals. Its commit carries Engram-Operation: forget.
 */
export async function proposeDeletion(
  store: Store,
  maker: DeletionMaker,
  d: {scope: string; path: string; kind: 'forget' | 'dream'; note: string; reason: string; removes?: {path: string; base: string}[]; base?: string; evidence?: Proposal['evidence']; trailers?: Record<string, string>},
): Promise<{id: string; digest: string; commit?: string}> {
  return withStoreLock(store, async () => {
    const {scope} = d
    const current = readStored(store, scope, d.path)
    if (!current) throw notFound(`No memory ${printable(`${scope}/${d.path}`)}.`, `see \`engram list --scope ${scope}\``)
    if (d.base !== undefined && current.blob !== d.base) throw new EngramError('stale-digest', `${scope}/${d.path} changed while this was being proposed.`, {nextStep: 'run it again'})
    for (const r of d.removes ?? []) if (readStored(store, scope, r.path)?.blob !== r.base) throw new EngramError('stale-digest', `${scope}/${r.path} changed while this was being proposed.`, {nextStep: 'run it again'})
    const id = newProposalId()
    const fm = current.memory.frontmatter
    const p: Proposal = {
      id, status: 'pending', kind: d.kind, operation: 'delete', scope, path: d.path, base: current.blob,
      author: maker.author, session: maker.session?.id ?? null, origin: maker.origin, tainted: maker.taint.tainted, taint_reasons: maker.taint.reasons,
      created: new Date().toISOString(), flags: [], redactions: {}, votes: [], vote: null, evidence: d.evidence ?? [],
      note: d.note, removes: d.removes ?? [], signature: null,
      // what is deleted, and who asks: the digest covers the memory's id and title as they are now
      memory: {
        ...fm, scope, author: maker.author, source_session: maker.session?.id ?? null, origin: maker.origin, tainted: maker.taint.tainted, taint_reasons: maker.taint.reasons,
        updated: new Date().toISOString(), proposal: id, reviewed_by: null, digest: null, signature: null,
      },
      body: '',
    }
    if (maker.key) p.signature = signProposal(maker.key, p)
    const digest = proposalDigest(p)
    const commit = await commitChanges(store, {
      subject: `Propose to ${d.kind === 'forget' ? 'forget' : 'delete'} ${scope}/${d.path}${p.removes.length > 0 ? ` and ${p.removes.length} more` : ''} (${id})`,
      body: `Reason: ${d.reason}`,
      trailers: {
        'Engram-Operation': 'forget', 'Engram-Proposal': id, 'Engram-Digest': digest, 'Engram-Author': maker.author,
        'Engram-Session': maker.session?.id, 'Engram-Origin': maker.origin, 'Engram-Tainted': maker.taint.tainted,
        ...(maker.key ? {'Engram-Signed-By': `${maker.role} ${maker.key.name} (${maker.key.keyid})`} : {}),
        ...d.trailers,
      },
      changes: [{path: entryFile(p), content: serializeProposal(p)}],
    })
    return {id, digest, commit}
  })
}

/** The owner's deletion at once: the file's removal and the scope's re-signed manifest, one commit. */
async function forgetNow(store: Store, scope: string, path: string, reason: string, keyName?: string): Promise<ForgetResult> {
  const {key, keyring} = await ownerKey(store, keyName)
  return withStoreLock(store, async () => {
    const view = storeView(store, keyring)
    if (!view.read(scope, path)) throw notFound(`No memory ${printable(`${scope}/${path}`)}.`, `see \`engram list --scope ${scope}\``)
    const {changes, committed} = signChange(store, key, keyring, planSignedChange(view, scope, view.rel(scope, path), null))
    const commit = await commitChanges(store, {
      subject: `Forget ${scope}/${path}`,
      body: `Reason: ${reason}`,
      trailers: {'Engram-Operation': 'forget', 'Engram-Reviewed-By': `${key.name} (${key.keyid})`},
      changes,
    }, {afterCommit: committed})
    return {status: 'deleted', scope, path, commit, reason}
  })
}
