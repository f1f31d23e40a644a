import {Flags} from '@oclif/core'

import {EngramCommand, sessionFlag} from '../cli/base.js'
import {limitFlag, listEnvelope, moreLine, table} from '../cli/list.js'
import {listMemories} from '../core/serve/read.js'
import {currentSession} from '../core/session/sessions.js'
import {Store} from '../core/store/store.js'

export default class List extends EngramCommand {
  static override summary = 'List the memories you may read (verified curated memory and your run: scratchpad).'
  static override examples = ['<%= config.bin %> list', '<%= config.bin %> list --scope tenant:acme --json', '<%= config.bin %> list --limit 20']
  static override flags = {scope: Flags.string({description: 'only this scope'}), limit: limitFlag, session: sessionFlag}

  async run() {
    const {flags} = await this.parse(List)
    const store = await Store.open(flags.base)
    const session = await currentSession(store, flags.session)
    const notice = await this.rootNotice(store)
    const r = await listMemories(store, session, flags.scope)
    // A session never learns which files were skipped, only how many, in the scopes it reads.
    const out = listEnvelope(r.memories, {skipped: r.skipped, ...(notice ? {root_not_pinned: notice} : {})}, flags.limit)
    if (!this.jsonEnabled()) {
      for (const line of table(['SCOPE', 'PATH', 'TITLE', 'MARKS'], out.items.map((m) => [m.scope, m.path, m.title, m.tainted ? '[tainted]' : '']))) this.log(line)
      if (out.total === 0) this.note('no memories')
      const more = moreLine(out.items.length, out.total)
      if (more) this.note(more)
      if (r.skipped > 0) this.warnLine(`${r.skipped} curated file(s) not served because they do not verify; run \`engram verify\``)
    }
    return out
  }
}
