import {Args, Flags} from '@oclif/core'

import {EngramCommand, sessionFlag} from '../base.js'
import {memoryHistory} from '../core/read.js'
import {currentSession} from '../core/sessions.js'
import {Store} from '../core/store.js'

export default class History extends EngramCommand {
  static override summary = 'Show the commits that changed a memory, with provenance (author, session, origin, taint, reviewer, digest).'
  static override examples = ['<%= config.bin %> history prefs.md --scope run:$S', '<%= config.bin %> history billing.md --scope tenant:acme --json']
  static override args = {path: Args.string({description: 'memory path inside the scope', required: true})}
  static override flags = {scope: Flags.string({description: 'scope', required: true}), session: sessionFlag}

  async run() {
    const {args, flags} = await this.parse(History)
    const store = await Store.open(flags.base)
    const session = await currentSession(store, flags.session)
    const entries = await memoryHistory(store, session, flags.scope, args.path)
    if (!this.jsonEnabled()) {
      for (const e of entries) {
        this.log(`${e.commit.slice(0, 10)}  ${e.date}  ${e.subject}`)
        const prov = [
          e.author && `author ${e.author}`, e.session && `session ${e.session}`, e.origin && `origin ${e.origin}`,
          e.tainted !== null && (e.tainted ? 'tainted' : 'clean'), e.reviewed_by && `reviewed by ${e.reviewed_by}`,
          e.proposal && `proposal ${e.proposal}`, e.digest && `digest ${e.digest.slice(0, 16)}`, e.restored_from && `restored from ${e.restored_from}`,
        ].filter(Boolean)
        if (prov.length) this.log(`            ${prov.join(', ')}`)
      }
    }
    return {scope: flags.scope, path: args.path, entries}
  }
}
