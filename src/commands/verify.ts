import {Flags} from '@oclif/core'

import {EngramCommand, sessionFlag} from '../cli/base.js'
import {listEnvelope, table} from '../cli/list.js'
import {visibleScopes} from '../core/session/access.js'
import {EngramError} from '../core/store/errors.js'
import {loadKeyring} from '../core/trust/keys.js'
import {verifyStore} from '../core/trust/verify.js'
import {currentSession} from '../core/session/sessions.js'
import {Store} from '../core/store/store.js'

export default class Verify extends EngramCommand {
  static override summary = 'Check every curated file, manifest and key; name each problem. Exit 7 when any.'
  static override description =
    'Problems: unsigned, bad-signature, unknown-key, revoked-key, not-owner, moved, rolled-back, mismatch, missing, not-in-head, extra, ' +
    'manifest-bad-signature, manifest-missing, key-untrusted, root-not-pinned, store-identity (no identity pinned here, or .engram/store-id says another; `engram keys bind`), config-unsigned (config.yml is not signed by a trusted owner key; the last signed config applies). Inside a session only the scopes it may read are checked.'
  static override examples = ['<%= config.bin %> verify', '<%= config.bin %> verify --scope tenant:acme --json']
  static override flags = {scope: Flags.string({description: 'only this scope'}), session: sessionFlag}

  async run() {
    const {flags} = await this.parse(Verify)
    const store = await Store.open(flags.base)
    const session = await currentSession(store, flags.session)
    // the owner checks the whole store (keys and manifests of scopes with no files too)
    const scopes = session || flags.scope ? visibleScopes(store, session, flags.scope) : undefined
    const report = await verifyStore(store, await loadKeyring(store), {scopes})
    // the policy is the store's, not a tenant's: named in every view
    const policy = store.policy
    if (policy.state === 'unsigned') {
      report.problems.unshift({kind: 'config-unsigned', path: '.engram/config.yml', detail: `${policy.problem}; in force: ${policy.source === 'built-in defaults' ? 'the built-in defaults' : `the last signed version (${policy.source}, serial ${policy.serial})`}`})
    }
    // one shape, pass or fail (README "JSON output"): the problems are the items
    const result = listEnvelope(report.problems, {checked: report.checked})
    if (!this.jsonEnabled()) for (const line of table(['PROBLEM', 'PATH', 'DETAIL'], report.problems.map((p) => [p.kind, p.path, p.detail]))) this.log(line)
    if (report.problems.length > 0) {
      // a signed file HEAD lacks is still served from the work tree: what it costs is search and the vote
      const onlyHead = report.problems.every((p) => p.kind === 'not-in-head')
      throw new EngramError(
        'verification',
        onlyHead
          ? `${report.problems.length} signed memory file(s) of ${report.checked} checked are not in HEAD's tree; search and the vote on a write do not see them.`
          : `${report.problems.length} problem(s) in ${report.checked} curated file(s) checked; files with problems are not served.`,
        {
          nextStep: onlyHead
            ? 'see which commit dropped them (`git log -- <path>` in the store), then commit the signed files back (`git add <path>`, `git commit`)'
            : policy.state === 'unsigned' && report.problems.length === 1
              ? 'review config.yml and sign it with `engram config sign`, or put the signed version back (`engram config show` says which applies)'
              : 'restore a damaged file with `engram restore <path> --scope <scope> --to <rev>`, or remove what does not belong; sign a config.yml change with `engram config sign` or put the signed version back',
          output: result,
        },
      )
    }
    // the verdict is the result: on stdout, where a script or a person piping it looks
    if (!this.jsonEnabled()) this.log(`ok: ${report.checked} curated file(s) verified`)
    return result
  }
}
