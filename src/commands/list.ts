import {Flags} from '@oclif/core'

import {EngramCommand, sessionFlag} from '../cli/base.js'
import {listMemories} from '../core/serve/read.js'
import {currentSession} from '../core/session/sessions.js'
import {Store} from '../core/store/store.js'

export default class List extends EngramCommand {
  static override summary = 'List the memories you may read (verified curated memory and your run: scratchpad).'
  static override examples = ['<%= config.bin %> list', '<%= config.bin %> list --scope tenant:acme --json']
  static override flags = {scope: Flags.string({description: 'only this scope'}), session: sessionFlag}

  async run() {
    const {flags} = await this.parse(List)
    const store = await Store.open(flags.base)
    const session = await currentSession(store, flags.session)
    const notice = await this.rootNotice(store)
    const r = await listMemories(store, session, flags.scope)
    if (!this.jsonEnabled()) {
      for (const m of r.memories) this.log(`${m.scope}\t${m.path}\t${m.title}${m.tainted ? '\t[tainted]' : ''}`)
      if (r.memories.length === 0) this.note('no memories')
      if (r.skipped > 0) this.warnLine(`${r.skipped} curated file(s) not served because they do not verify; run \`engram verify\``)
    }
    // A session never learns which files were skipped, only how many, in the scopes it reads.
    return {memories: r.memories, skipped: r.skipped, ...(notice ? {root_not_pinned: notice} : {})}
  }
}
