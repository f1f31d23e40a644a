import {Args, Flags} from '@oclif/core'

import {EngramCommand, sessionFlag} from '../cli/base.js'
import {readMemory} from '../core/serve/read.js'
import {currentSession} from '../core/session/sessions.js'
import {Store} from '../core/store/store.js'
import {visible} from '../core/text/visible.js'

export default class Read extends EngramCommand {
  static override summary = 'Print one memory (only verified curated memory, or your own run: scratchpad).'
  static override examples = ['<%= config.bin %> read billing.md --scope tenant:acme', '<%= config.bin %> read prefs.md --scope run:$ENGRAM_SESSION --json']
  static override args = {path: Args.string({description: 'memory path inside the scope', required: true})}
  static override flags = {scope: Flags.string({description: 'scope', required: true}), session: sessionFlag}

  async run() {
    const {args, flags} = await this.parse(Read)
    const store = await Store.open(flags.base)
    const session = await currentSession(store, flags.session)
    const notice = await this.rootNotice(store)
    let r
    try {
      r = await readMemory(store, session, flags.scope, args.path)
    } catch (error) {
      throw this.withRootNotice(error, notice)
    }
    if (!this.jsonEnabled()) {
      const fm = r.frontmatter
      this.note(`# ${r.scope}/${r.path} — v${fm.version}, by ${fm.author} via ${fm.origin}${fm.tainted ? ', TAINTED' : ''}${fm.reviewed_by ? `, reviewed by ${fm.reviewed_by}` : ''}`)
      // terminal-safe like every stored string (R16); --json gives the exact bytes
      process.stdout.write(visible(r.body))
    }
    return notice ? {...r, root_not_pinned: notice} : r
  }
}
