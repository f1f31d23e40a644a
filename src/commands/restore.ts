import {Args, Flags} from '@oclif/core'

import {EngramCommand, passphraseFileFlag} from '../cli/base.js'
import {restoreMemory} from '../core/review/review.js'
import {Store} from '../core/store/store.js'

export default class Restore extends EngramCommand {
  static override ownerOnly = true
  static override summary = 'Restore a curated memory to its content at an earlier revision, as a new signed version.'
  static override examples = ['<%= config.bin %> restore billing.md --scope tenant:acme --to HEAD~3']
  static override args = {path: Args.string({description: 'memory path inside the scope', required: true})}
  static override flags = {'passphrase-file': passphraseFileFlag, 
    scope: Flags.string({description: 'scope', required: true}),
    to: Flags.string({description: 'revision to restore from (commit id, HEAD~N)', required: true}),
    key: Flags.string({description: 'owner key name'}),
  }

  async run() {
    const {args, flags} = await this.parse(Restore)
    const store = await Store.open(flags.base)
    const r = await restoreMemory(store, flags.scope, args.path, flags.to, {keyName: flags.key})
    if (!this.jsonEnabled()) this.log(`restored ${r.scope}/${r.path} from ${r.restored_from.slice(0, 10)} as v${r.version}, commit ${r.commit?.slice(0, 10)}`)
    return r
  }
}
