import {Args, Flags} from '@oclif/core'

import {EngramCommand, sessionFlag} from '../cli/base.js'
import {limitFlag, listEnvelope, moreLine} from '../cli/list.js'
import {memoryHistory} from '../core/serve/history.js'
import {currentSession} from '../core/session/sessions.js'
import {Store} from '../core/store/store.js'
import {visible} from '../core/text/visible.js'

export default class History extends EngramCommand {
  static override summary = 'Show the commits that changed a memory: who signed each version (verified now), and what the commit claims.'
  static override description = 'A version is "reviewed by" a key only when that version of the file carries a valid signature by an owner key trusted now. Commit trailers (author, session, origin, taint, reviewer, digest) are anyone\'s to write and are shown as unverified claims.'
  static override examples = ['<%= config.bin %> history prefs.md --scope run:$S', '<%= config.bin %> history billing.md --scope tenant:acme --json']
  static override args = {path: Args.string({description: 'memory path inside the scope', required: true})}
  static override flags = {scope: Flags.string({description: 'scope', required: true}), limit: limitFlag, session: sessionFlag}

  async run() {
    const {args, flags} = await this.parse(History)
    const store = await Store.open(flags.base)
    const session = await currentSession(store, flags.session)
    const out = listEnvelope(await memoryHistory(store, session, flags.scope, args.path), {scope: flags.scope, path: args.path}, flags.limit)
    if (!this.jsonEnabled()) {
      for (const e of out.items) {
        this.log(visible(`${e.commit.slice(0, 10)}  ${e.date}  ${e.subject}`))
        const c = e.claims
        if (e.reviewed_by) this.log(visible(`            reviewed by ${e.reviewed_by} (signature verified)`))
        else if (e.session_write) this.log(visible(`            written by session ${c.session}'s own scratchpad write`))
        else this.log(visible(`            not reviewed: ${e.signature}`))
        const claims = [
          c.operation && `operation ${c.operation}`, c.author && `author ${c.author}`, c.session && `session ${c.session}`, c.origin && `origin ${c.origin}`,
          c.tainted !== null && (c.tainted ? 'tainted' : 'clean'), c.reviewed_by && `reviewer ${c.reviewed_by}`,
          c.proposal && `proposal ${c.proposal}`, c.digest && `digest ${c.digest.slice(0, 16)}`, c.restored_from && `restored from ${c.restored_from}`,
        ].filter(Boolean)
        if (claims.length) this.log(visible(`            unverified claims: ${claims.join(', ')}`))
      }
      const more = moreLine(out.items.length, out.total)
      if (more) this.note(more)
    }
    return out
  }
}
