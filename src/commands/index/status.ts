import {EngramCommand} from '../../cli/base.js'
import {canRead} from '../../core/session/access.js'
import {currentSession} from '../../core/session/sessions.js'
import {Store} from '../../core/store/store.js'

export default class IndexStatus extends EngramCommand {
  static override summary = 'Show the derived search index: one MiniSearch index per scope, its documents, size, freshness and pending delta (inside a session: the scopes it may read).'
  static override examples = ['<%= config.bin %> index status', '<%= config.bin %> index status --json']

  async run() {
    const {flags} = await this.parse(IndexStatus)
    const store = await Store.open(flags.base)
    const {status} = await import('../../core/index/index.js')
    const session = await currentSession(store)
    const shards = (await status(store)).filter((s) => canRead(session, s.scope))
    if (!this.jsonEnabled()) {
      for (const s of shards) this.log(`${s.scope}\t${s.docs} docs\t${(s.bytes / 1024).toFixed(0)} KiB\t${s.tree === null ? 'not built yet (built on the first search)' : s.fresh ? 'fresh' : 'stale (updated on next search)'}${s.delta ? `\tdelta ${s.delta}` : ''}`)
      if (shards.length === 0) this.note('no index yet; each scope\'s is built on its first search')
    }
    return {shards}
  }
}
