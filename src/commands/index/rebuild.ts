import {Flags} from '@oclif/core'

import {EngramCommand} from '../../cli/base.js'
import {visibleScopes} from '../../core/session/access.js'
import {listScopes} from '../../core/memory/curated.js'
import {currentSession} from '../../core/session/sessions.js'
import {Store} from '../../core/store/store.js'

export default class IndexRebuild extends EngramCommand {
  static override summary = 'Rebuild the search index from scratch (same results as the incremental index), with a progress bar.'
  static override examples = ['<%= config.bin %> index rebuild', '<%= config.bin %> index rebuild --scope tenant:acme']
  static override flags = {scope: Flags.string({description: 'only this scope; repeatable', multiple: true})}

  async run() {
    const {flags} = await this.parse(IndexRebuild)
    const store = await Store.open(flags.base)
    const {rebuild} = await import('../../core/index/index.js')
    const session = await currentSession(store)
    // a session rebuilds (and hears about) only scopes it may read that hold memory
    const present = new Set(listScopes(store))
    const scopes = flags.scope
      ? flags.scope.flatMap((s) => visibleScopes(store, session, s))
      : session ? visibleScopes(store, session).filter((s) => present.has(s)) : undefined
    const tty = process.stderr.isTTY && !this.jsonEnabled()
    let last = 0
    const started = Date.now()
    const shards = await rebuild(store, {
      scopes,
      onWarning: (m) => this.warnLine(m),
      onProgress: (done, total) => {
        if (!tty || (done !== total && Date.now() - last < 100)) return
        last = Date.now()
        const width = 30
        const filled = total ? Math.round((done / total) * width) : width
        process.stderr.write(`\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total} memories`)
        if (done === total) process.stderr.write('\n')
      },
    })
    const seconds = (Date.now() - started) / 1000
    this.note(`rebuilt ${shards.length} scope index(es), ${shards.reduce((n, s) => n + s.docs, 0)} memories in ${seconds.toFixed(1)} s`)
    return {shards, seconds}
  }
}
