import {Flags} from '@oclif/core'

import {EngramCommand, passphraseFileFlag} from '../cli/base.js'
import {syncLine} from '../cli/sync.js'
import {ownerKey} from '../core/review/review.js'
import {insideSession} from '../core/session/sessions.js'
import {Store} from '../core/store/store.js'
import {syncStore} from '../core/sync/sync.js'

export default class Sync extends EngramCommand {
  static override summary = 'Exchange memory with a git remote: fetch, integrate, verify, push (retrying when the remote moved on).'
  static override description = `The remote is any git repository this machine can reach (a path, file://, ssh:// or https://); the owner sets it once with --remote and this machine remembers it (outside the store). The remote's history is verified before the store moves: a remote that serves unsigned or rolled-back memory, or no longer holds what this host last synced with, is refused (exit 7) and the store is left as it was. When both hosts accepted into one scope, the owner's sync merges and re-signs the scope's manifest; an accept both hosts made differently keeps the remote's version and turns this host's into a proposal. An agent session may sync with the remote the owner set, and never signs.`
  static override examples = [
    '<%= config.bin %> sync --remote /srv/git/memory.git',
    '<%= config.bin %> sync',
    '<%= config.bin %> sync --json',
  ]
  static override flags = {
    'passphrase-file': passphraseFileFlag,
    remote: Flags.string({description: 'the remote repository (owner only when it sets or changes what this machine remembers)'}),
    branch: Flags.string({description: 'the remote branch (default: the one remembered, else the store\'s current branch)'}),
    key: Flags.string({description: 'owner key name, for a merge that re-signs a manifest (default: ENGRAM_KEY or the only key in your key folder)'}),
  }

  async run() {
    const {flags} = await this.parse(Sync)
    const store = await Store.open(flags.base)
    const session = insideSession()
    const r = await syncStore(store, {
      remote: flags.remote, branch: flags.branch, session,
      unlock: session ? undefined : async () => (await ownerKey(store, flags.key)).key,
    })
    if (!this.jsonEnabled()) {
      this.log(syncLine(r))
      for (const s of r.resigned) this.note(`  manifest of ${s.scope} merged and re-signed at serial ${s.serial}`)
      for (const d of r.demoted) this.note(`  ${d.scope}/${d.path}: the remote's version stays; this host's ${d.ours === 'delete' ? 'deletion' : 'version'} is proposal ${d.proposal} (review it with \`engram review show ${d.proposal}\`)`)
    }
    return r
  }
}
