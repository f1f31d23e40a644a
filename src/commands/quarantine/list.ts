import {Flags} from '@oclif/core'

import {EngramCommand, sessionFlag} from '../../cli/base.js'
import {listQueue} from '../../core/review/review.js'
import {currentSession} from '../../core/session/sessions.js'
import {Store} from '../../core/store/store.js'
import {visible} from '../../cli/render.js'

export default class QuarantineList extends EngramCommand {
  static override summary = 'List writes the vote refused, newest first.'
  static override examples = ['<%= config.bin %> quarantine list', '<%= config.bin %> quarantine list --scope tenant:acme --json']
  static override flags = {scope: Flags.string({description: 'only this scope'}), session: sessionFlag}

  async run() {
    const {flags} = await this.parse(QuarantineList)
    const store = await Store.open(flags.base)
    const session = await currentSession(store, flags.session)
    const q = listQueue(store, 'quarantined', {scope: flags.scope, session})
    if (!this.jsonEnabled()) {
      for (const i of q.items) this.log(visible(`${i.id}\t${i.scope}/${i.path}\t${i.author}\t${i.origin}\t${i.vote?.summary ?? ''}`))
      if (q.items.length === 0) this.note('quarantine is empty')
      for (const b of q.broken) this.warnLine(`${b.file}: ${b.error}`)
    }
    return q
  }
}
