import {Args, Flags} from '@oclif/core'

import {EngramCommand, passphraseFileFlag} from '../cli/base.js'
import {forgetMemory} from '../core/review/forget.js'
import {currentSession} from '../core/session/sessions.js'
import {Store} from '../core/store/store.js'

export default class Forget extends EngramCommand {
  static override summary = 'Propose deleting a curated memory, for review by digest (an agent session, in its assigned scope; or the owner); the owner may delete at once with --now.'
  static override description = 'The deletion is one reviewed change: `engram review show` shows the file\'s text as removed lines, `engram review accept` removes it and re-signs the scope\'s manifest in one commit. History keeps the deleted version; `engram restore <path> --scope S --to <commit>^` brings it back.'
  static override examples = [
    'ENGRAM_SESSION=$S <%= config.bin %> forget billing.md --scope tenant:acme --reason "wrong: renewal is in April"',
    '<%= config.bin %> forget billing.md --scope tenant:acme --reason "superseded" --now',
  ]
  static override args = {path: Args.string({description: 'memory path inside the scope', required: true})}
  static override flags = {
    'passphrase-file': passphraseFileFlag,
    scope: Flags.string({description: 'scope of the memory', required: true}),
    reason: Flags.string({description: 'why the memory should go (stored, redacted, in the proposal and the commit)', required: true}),
    now: Flags.boolean({description: 'owner only: delete at once (signed manifest, committed), without a proposal'}),
    key: Flags.string({description: 'owner key name (default: ENGRAM_KEY or the only key in your key folder)'}),
  }

  async run() {
    const {args, flags} = await this.parse(Forget)
    const store = await Store.open(flags.base)
    const session = await currentSession(store)
    const r = await forgetMemory(store, session, {scope: flags.scope, path: args.path, reason: flags.reason, now: flags.now, keyName: flags.key})
    if (!this.jsonEnabled()) {
      if (r.status === 'deleted') this.log(`deleted\t${r.scope}/${r.path}\tcommit ${r.commit?.slice(0, 10) ?? ''}`)
      else {
        this.log(`pending\t${r.scope}/${r.path}\t${r.proposal}`)
        this.note(`the owner reviews it with \`engram review show ${r.proposal}\``)
      }
    }
    return r
  }
}
