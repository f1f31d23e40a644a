import {Args, Flags} from '@oclif/core'

import {EngramCommand, sessionFlag} from '../cli/base.js'
import {syncAfter, syncFlag, syncLine} from '../cli/sync.js'
import {runWrite} from '../cli/write.js'
import {EXIT_QUARANTINED} from '../core/store/errors.js'
import {AGENT_ORIGINS} from '../core/memory/memory.js'

export default class Write extends EngramCommand {
  static override summary = 'Write a memory: to your run: scope at once, to your assigned scope as a proposal for review.'
  static override description = `Content comes from --file or stdin. The write is redacted, flagged and voted on before anything is stored; the result's status is committed, pending or quarantined. A quarantined write exits ${EXIT_QUARANTINED} (kept for the owner's audit, not served).`
  static override examples = [
    'echo "The user prefers short answers" | ENGRAM_SESSION=$S <%= config.bin %> write prefs.md --scope run:$S',
    'echo "Acme renews in March" | ENGRAM_SESSION=$S <%= config.bin %> write billing.md --scope tenant:acme --origin email',
    'echo "The spring sale runs until June" | ENGRAM_SESSION=$S <%= config.bin %> write sale.md --scope tenant:acme --expires 2027-06-30',
  ]
  static override args = {path: Args.string({description: 'memory path inside the scope, ending in .md', required: true})}
  static override flags = {
    scope: Flags.string({description: 'target scope', required: true}),
    file: Flags.string({description: 'read the content from this file (default: stdin)'}),
    title: Flags.string({description: 'title (default: the first line)'}),
    tags: Flags.string({description: 'comma-separated tags (default: an update keeps the file\'s tags; "" clears them)'}),
    origin: Flags.string({description: `how the content reached the agent: ${AGENT_ORIGINS.join(', ')}`, default: 'direct_chat'}),
    expires: Flags.string({description: 'when the memory expires: a future date (2027-06-30), a time to live (90d, 12w), or "none"; the dream job proposes to retire it from that day (default: an update keeps the file\'s expiry)'}),
    'base-blob': Flags.string({description: 'the git blob id of the version you are changing, or "none" for a new file (default: the file as it is now)'}),
    session: sessionFlag,
    sync: syncFlag,
  }

  async run() {
    const {args, flags} = await this.parse(Write)
    const out = {json: this.jsonEnabled(), log: (l: string) => this.log(l), note: (l: string) => this.note(l), warn: (l: string) => this.warnLine(l)}
    const {store, result: r} = await runWrite({
      path: args.path, scope: flags.scope, file: flags.file, title: flags.title, tags: flags.tags, origin: flags.origin, expires: flags.expires,
      baseBlob: flags['base-blob'], session: flags.session, base: flags.base,
    }, out)
    if (flags.sync) {
      const synced = await syncAfter(store, `${r.status} ${r.scope}/${r.path}${r.proposal ? ` as ${r.proposal}` : ''}`)
      this.note(syncLine(synced))
      return {...r, sync: synced}
    }
    return r
  }
}
