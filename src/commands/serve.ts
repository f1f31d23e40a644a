import {EngramCommand} from '../base.js'
import {startServer} from '../core/server.js'
import {Store} from '../core/store.js'

export default class Serve extends EngramCommand {
  static override summary = 'Keep the search index warm for this store on a local socket (.engram/serve.sock, owner-only).'
  static override description = '`engram search` uses it automatically when it is running. Stop it with Ctrl-C or SIGTERM.'

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
