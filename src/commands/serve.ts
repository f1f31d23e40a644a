import {EngramCommand} from '../cli/base.js'
import {EngramError} from '../core/store/errors.js'
import {socketPath} from '../core/store/private.js'
import {startServer} from '../core/serve/server.js'
import {Store} from '../core/store/store.js'

export default class Serve extends EngramCommand {
  static override ownerOnly = true
  static override summary = 'Keep the search index warm for this store on a private local socket (outside the store, owner-only).'
  static override description =
    '`engram search` inside a session uses it automatically when it is running and ENGRAM_SESSION_TOKEN holds the session\'s token; it answers sessions only, never the owner\'s view. Stop it with Ctrl-C or SIGTERM. ' +
    'When one already runs for this store, says so and exits 0 (nothing to do), so a harness may start it at every session.'
  static override examples = ['<%= config.bin %> serve &', '<%= config.bin %> serve --base ~/memory']

  async run() {
    const {flags} = await this.parse(Serve)
    const store = await Store.open(flags.base)
    let server
    try {
      server = await startServer(store, {onLog: (m) => this.note(m)})
    } catch (error) {
      // startServer's only conflict: a live server answers on the socket. Like most daemons, not an error.
      if (!(error instanceof EngramError && error.code === 'conflict')) throw error
      const socket = socketPath(store.root).path
      this.note(`engram serve is already running for this store (${socket}); nothing to do`)
      return {already_running: true, socket}
    }
    await new Promise<void>((resolve) => {
      const stop = () => server.close(() => resolve())
      process.once('SIGINT', stop)
      process.once('SIGTERM', stop)
    })
    return {stopped: true}
  }
}
