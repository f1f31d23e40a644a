import {Flags} from '@oclif/core'

import {EngramCommand, passphraseFileFlag} from '../cli/base.js'
import {sha256Hex} from '../core/memory/hash.js'
import {signConfig} from '../core/trust/configsign.js'
import {ownerKey} from '../core/review/review.js'
import {detachHistory} from '../core/store/detach.js'
import {EngramError} from '../core/store/errors.js'
import {Store} from '../core/store/store.js'
import {loadKeyring} from '../core/trust/keys.js'
import {verifyStore} from '../core/trust/verify.js'

export default class Detach extends EngramCommand {
  static override ownerOnly = true
  static override summary = 'Move a store that shares its project\'s repository into a repository of its own, keeping its history (the owner, once).'
  static override description = 'The commits that touched the store\'s folder become the store\'s own history (git subtree split: same messages, trailers and dates, new ids); everything verifies as before. The project stops tracking the folder (staged for you to commit) and its .gitignore leaves it out; the project\'s history is not rewritten. A store that already has its own repository: nothing to do (exit 0).'
  static override examples = ['<%= config.bin %> detach --base memory']
  static override flags = {'passphrase-file': passphraseFileFlag, key: Flags.string({description: 'owner key name (to re-sign config.yml, whose signature names the store\'s place in its repository)'})}

  async run() {
    const {flags} = await this.parse(Detach)
    const store = await Store.open(flags.base)
    // config.yml's signature names the store's folder in its repository, which detach
    // changes: the signed bytes in force are signed again for the new place, by the owner
    const signed = store.policy.state === 'signed' ? store.policy.text : undefined
    // unlocked before anything moves: a wrong passphrase leaves the store as it was
    const key = signed !== undefined && store.top !== store.root ? (await ownerKey(store, flags.key)).key : undefined
    const r = await detachHistory(store)
    if (!r) {
      this.note(`nothing to do: ${store.root} is a git repository of its own`)
      return {store: store.root, detached: false}
    }
    let again = await Store.open(r.store, {config: false})
    if (signed !== undefined && again.readText('.engram/config.yml') === signed) {
      // its signature names the old place until it is signed again just below: no warning for that
      const warn = Store.onWarning
      Store.onWarning = () => {}
      try {
        await again.loadPolicy()
      } finally {
        Store.onWarning = warn
      }
      if (again.policy.state !== 'signed') await signConfig(again, {digest: sha256Hex(signed), unlocked: key})
      again = await Store.open(r.store)
    }
    const report = await verifyStore(again, await loadKeyring(again), {})
    if (report.problems.length > 0) {
      throw new EngramError('verification', `The store moved into its own repository, but ${report.problems.length} problem(s) now fail verify.`, {nextStep: '`engram verify` names each', output: {...r, detached: true}})
    }
    this.note(`${r.store} is now a git repository of its own (${r.commits} commits of history carried over; verify: ${report.checked} curated file(s) ok)`)
    this.note(`the project at ${r.project} no longer tracks it; commit that there: ${r.staged}`)
    if (!this.jsonEnabled()) this.log(r.store)
    return {...r, detached: true}
  }
}
