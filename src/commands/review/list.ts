import {Flags} from '@oclif/core'

import {EngramCommand, sessionFlag} from '../../cli/base.js'
import {listQueue} from '../../core/review/review.js'
import {currentSession} from '../../core/session/sessions.js'
import {Store} from '../../core/store/store.js'
import {visible} from '../../cli/render.js'

export default class ReviewList extends EngramCommand {
  static override summary = 'List the review queue, newest first.'
  static override examples = ['<%= config.bin %> review list', '<%= config.bin %> review list --scope tenant:acme --json']
  static override flags = {scope: Flags.string({description: 'only this scope'}), session: sessionFlag}

  async run() {
    const {flags} = await this.parse(ReviewList)
    const store = await Store.open(flags.base)
    const session = await currentSession(store, flags.session)
    const q = listQueue(store, 'pending', {scope: flags.scope, session})
    if (!this.jsonEnabled()) {
      for (const i of q.items) {
        const marks = [i.kind !== 'write' ? i.kind : '', i.tainted ? 'tainted' : '', i.vote?.dissent ? 'dissent' : '', ...i.flags].filter(Boolean)
        this.log(visible(`${i.id}\t${i.operation}\t${i.scope}/${i.path}\t${i.author}\t${i.origin}${marks.length ? `\t[${marks.join(', ')}]` : ''}`))
      }
      if (q.items.length === 0) this.note('the review queue is empty')
      for (const b of q.broken) this.warnLine(`${b.file}: ${b.error}`)
    }
    return q
  }
}
