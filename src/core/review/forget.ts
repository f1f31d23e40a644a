/**
 * `engram forget`: a deletion of one curated memory, proposed for review like any change
 * (an agent session for its assigned scope, or the owner, whose proposal is signed), or
 * applied at once by the owner (`now`): signed manifest, file removal and commit together.
 * History keeps the deleted version; `engram restore` brings it back.
 */
import {commitChanges} from '../git/commit.js'
import {readStored} from '../memory/curated.js'
import {inheritedTaint} from '../memory/memory.js'
import {badInput, notFound, refused, usageError} from '../store/errors.js'
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
  return withStoreLock(store, async () => {
    const current = readStored(store, scope, input.path)
    if (!current) throw notFound(`No memory ${printable(`${scope}/${input.path}`)}.`, `see \`engram list --scope ${scope}\``)
    const id = newProposalId()
    const taint = session ? inheritedTaint(session, 'direct_chat') : {tainted: false, reasons: []}
    const author = session ? session.agent : owner!.key.name
    const origin = session ? 'direct_chat' : 'owner'
    const fm = current.memory.frontmatter
    const p: Proposal = {
      id, status: 'pending', kind: 'forget', operation: 'delete', scope, path: input.path, base: current.blob,
      author, session: session?.id ?? null, origin, tainted: taint.tainted, taint_reasons: taint.reasons,
      created: new Date().toISOString(), flags: [], redactions: {}, votes: [], vote: null, evidence: [],
      note: `forget: ${reason}`, removes: [], signature: null,
      // what is deleted, and who asks: the digest covers the memory's id and title as they are now
      memory: {
        ...fm, author, source_session: session?.id ?? null, origin, tainted: taint.tainted, taint_reasons: taint.reasons,
        updated: new Date().toISOString(), proposal: id, reviewed_by: null, digest: null, signature: null,
      },
      body: '',
    }
    if (owner) p.signature = signProposal(owner.key, p)
    const digest = proposalDigest(p)
    const commit = await commitChanges(store, {
      subject: `Propose to forget ${scope}/${input.path} (${id})`,
      body: `Reason: ${reason}`,
      trailers: {
        'Engram-Operation': 'forget', 'Engram-Proposal': id, 'Engram-Digest': digest, 'Engram-Author': author,
        'Engram-Session': session?.id, 'Engram-Origin': origin, 'Engram-Tainted': taint.tainted,
        ...(owner ? {'Engram-Signed-By': `owner ${owner.key.name} (${owner.key.keyid})`} : {}),
      },
      changes: [{path: entryFile(p), content: serializeProposal(p)}],
    })
    return {status: 'pending', scope, path: input.path, proposal: id, digest, commit, reason}
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
