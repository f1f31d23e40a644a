import {EngramCommand} from '../base.js'
import {startServer} from '../core/server.js'
import {Store} from '../core/store.js'

export default class Serve extends EngramCommand {
  static override ownerOnly = true
  static override summary = 'Keep the search index warm for this store on a private local socket (outside the store, owner-only).'
  static override description = '`engram search` inside a session uses it automatically when it is running and ENGRAM_SESSION_TOKEN holds the session\'s token; it answers sessions only, never the owner\'s view. Stop it with Ctrl-C or SIGTERM.'

  async run() {
    const {flags} = await this.parse(Serve)
    const store = await Store.open(flags.base)
    const server = await startServer(store, {onLog: (m) => this.note(m)})
    await new Promise<void>((resolve) => {
      const stop = () => server.close(() => resolve())
      process.once('SIGINT', stop)
      process.once('SIGTERM', stop)
    })
    return {stopped: true}
  }
}
