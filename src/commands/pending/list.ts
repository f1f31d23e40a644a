import {Flags} from '@oclif/core'

import {EngramCommand, sessionFlag} from '../../cli/base.js'
import {listQueue} from '../../core/review/review.js'
import {currentSession} from '../../core/session/sessions.js'
import {Store} from '../../core/store/store.js'
import {visible} from '../../cli/render.js'

export default class PendingList extends EngramCommand {
  static override summary = 'Agent writes awaiting promotion (the review queue, by path and session).'
  static override examples = ['<%= config.bin %> pending list --scope tenant:acme']
  static override flags = {scope: Flags.string({description: 'only this scope'}), session: sessionFlag}

  async run() {
    const {flags} = await this.parse(PendingList)
    const store = await Store.open(flags.base)
    const session = await currentSession(store, flags.session)
    const q = listQueue(store, 'pending', {scope: flags.scope, session})
    if (!this.jsonEnabled()) {
      for (const i of q.items) this.log(visible(`${i.scope}\t${i.path}\t${i.session ?? '-'}\t${i.id}\t${i.created}`))
      if (q.items.length === 0) this.note('nothing pending')
      for (const b of q.broken) this.warnLine(`${b.file}: ${b.error}`)
    }
    return {pending: q.items, broken: q.broken}
  }
}
