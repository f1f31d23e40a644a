import {signProposal} from './signed.js'
import {commitChanges} from '../git/commit.js'
import {EngramError} from '../store/errors.js'
import {newProposalId} from '../store/ids.js'
import {withStoreLock} from '../store/lock.js'
import {clipRedacted, redactText} from '../write/redact/index.js'
import {Proposal, entryFile, findEntry, proposalDigest, serializeProposal} from './proposal.js'
import {checkDigestArg, requireReviewedDigest} from './digest.js'
import {ownerKey} from './review.js'
import type {Store} from '../store/store.js'

/**
 * Release a quarantined write into the review queue (never straight to curated memory).
 * Needs an owner key, a reason, and the entry's digest as shown by `quarantine show`, so
 * the owner releases exactly what they looked at. The new proposal gets a new id (and so
 * a new digest): it must be reviewed again before it can be accepted.
 */
export async function releaseQuarantined(store: Store, id: string, reason: string, digestArg: string, opts: {keyName?: string} = {}) {
  const why = redactText(reason.trim(), store.config.redaction.extra)
  if (!why) throw new EngramError('usage', 'A reason is required.', {nextStep: 'e.g. --reason "checked with the customer: correct"'})
  const digest = checkDigestArg(digestArg)
  const {key} = await ownerKey(store, opts.keyName)
  return withStoreLock(store, async () => {
    const q = findEntry(store, 'quarantined', id)
    requireReviewedDigest(proposalDigest(q), digest, `Quarantine entry ${q.id}`, `look at it again with \`engram quarantine show ${q.id}\``)
    const pid = newProposalId()
    const proposal: Proposal = {
      ...q,
      id: pid,
      status: 'pending',
      kind: 'release',
      created: new Date().toISOString(),
      note: `released from quarantine ${q.id} by ${key.name}: ${clipRedacted(why, 500, store.config.redaction.extra)}`,
      memory: {...q.memory, proposal: pid},
      signature: null,
    }
    // an entry made without a session (a dream) was proven by its maker's signature, which
    // this new entry no longer matches: the owner who releases it signs it instead (signed.ts)
    if (!proposal.session) proposal.signature = signProposal(key, proposal)
    const file = entryFile(proposal)
    const qfile = entryFile(q)
    const newDigest = proposalDigest(proposal)
    // the new proposal and the quarantine entry's removal land together, or neither does
    const commit = await commitChanges(store, {
      subject: `Release quarantine entry ${q.id} for review as proposal ${pid}`,
      body: `Reason: ${clipRedacted(why, 1000, store.config.redaction.extra)}`,
      trailers: {
        'Engram-Operation': 'release', 'Engram-Proposal': pid, 'Engram-Digest': newDigest, 'Engram-Released-From': q.id,
        'Engram-Author': q.author, 'Engram-Session': q.session ?? undefined, 'Engram-Reviewed-By': `${key.name} (${key.keyid})`,
      },
      changes: [{path: file, content: serializeProposal(proposal)}, {path: qfile, content: null}],
    })
    return {id: q.id, proposal: pid, digest: newDigest, commit, released_by: key.name}
  })
}
