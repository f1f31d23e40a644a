import {Flags} from '@oclif/core'

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
    'When one already runs for this store, says so and exits 0 (nothing to do), so a harness may start it at every session. ' +
    'A session\'s search of a large store (2000 memories or more in the scopes it reads) starts it in the background with --idle-timeout 900 when none runs; ENGRAM_NO_AUTOSERVE=1 turns that off.'
  static override examples = ['<%= config.bin %> serve &', '<%= config.bin %> serve --base ~/memory', '<%= config.bin %> serve --idle-timeout 900 &']
  static override flags = {
    'idle-timeout': Flags.integer({description: 'stop after this many seconds without a request (0: run until stopped); a search of a large store starts the server with 900', default: 0, min: 0, max: 86_400}),
  }

  async run() {
    const {flags} = await this.parse(Serve)
    const store = await Store.open(flags.base)
    let server
    try {
      server = await startServer(store, {onLog: (m) => this.note(m), idleMs: flags['idle-timeout'] * 1000})
    } catch (error) {
      // startServer's only conflict: a live server answers on the socket. Like most daemons, not an error.
      if (!(error instanceof EngramError && error.code === 'conflict')) throw error
      const socket = socketPath(store.root).path
      this.note(`engram serve is already running for this store (${socket}); nothing to do`)
      return {already_running: true, socket}
    }
    await new Promise<void>((resolve) => {
      const stop = () => server.close()
      process.once('SIGINT', stop)
      process.once('SIGTERM', stop)
      // stopped by a signal or by the idle timeout
      server.once('close', () => resolve())
    })
    return {stopped: true}
  }
}
