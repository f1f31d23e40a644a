import {Flags} from '@oclif/core'

import {EngramCommand} from '../../cli/base.js'
import {resignManifest} from '../../core/review/review.js'
import {Store} from '../../core/store/store.js'

export default class ManifestResign extends EngramCommand {
  static override ownerOnly = true
  static override summary = 'Re-sign a scope\'s manifest, as it stands, above the highest serial seen (owner).'
  static override description =
    'For the case `verify` explains: an owner-signed manifest with a higher serial than the scope\'s real one was committed by mistake, ' +
    'so the current manifest reads as a rollback. Check what the commit `verify` names held first: if it was a real rollback, restore from git instead. ' +
    'Refused unless every file the manifest lists is present with exactly the listed content.'
  static override examples = ['<%= config.bin %> manifest resign --scope tenant:acme']
  static override flags = {
    scope: Flags.string({description: 'scope', required: true}),
    key: Flags.string({description: 'owner key name'}),
  }

  async run() {
    const {flags} = await this.parse(ManifestResign)
    const store = await Store.open(flags.base)
    const r = await resignManifest(store, flags.scope, {keyName: flags.key})
    if (!this.jsonEnabled()) this.log(`re-signed the manifest of ${r.scope} at serial ${r.serial} (was ${r.previous}), commit ${r.commit?.slice(0, 10)}`)
    return r
  }
}
