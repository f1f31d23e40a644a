import {Args, Flags} from '@oclif/core'

import {EngramCommand, passphraseFileFlag} from '../../cli/base.js'
import {releaseQuarantined} from '../../core/review/quarantine.js'
import {Store} from '../../core/store/store.js'

export default class QuarantineRelease extends EngramCommand {
  static override ownerOnly = true
  static override summary = 'Release a quarantined write into the review queue (owner; it is never promoted directly).'
  static override examples = ['<%= config.bin %> quarantine release q-4k2 --reason "confirmed with the customer" --digest 9c1e4b7a0d2f8e31']
  static override args = {id: Args.string({description: 'quarantine id or unambiguous prefix', required: true})}
  static override flags = {'passphrase-file': passphraseFileFlag, 
    reason: Flags.string({description: 'why it is safe to review', required: true}),
    digest: Flags.string({description: 'the digest `quarantine show` printed (at least 16 hex characters)', required: true}),
    key: Flags.string({description: 'owner key name'}),
  }

  async run() {
    const {args, flags} = await this.parse(QuarantineRelease)
    const store = await Store.open(flags.base)
    const r = await releaseQuarantined(store, args.id, flags.reason, flags.digest, {keyName: flags.key})
    if (!this.jsonEnabled()) this.log(`released ${r.id} as proposal ${r.proposal}; review it with \`engram review show ${r.proposal}\``)
    return r
  }
}
