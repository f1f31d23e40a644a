import {Args, Flags} from '@oclif/core'
import {createReadStream} from 'node:fs'

import {EngramCommand, sessionFlag} from '../cli/base.js'
import {syncAfter, syncFlag, syncLine} from '../cli/sync.js'
import {writeRoute} from '../core/session/access.js'
import {parseExpires, parseTags, readLimited} from '../core/store/content.js'
import {formatScope, parseScope} from '../core/store/scope.js'
import {badInput, EXIT_QUARANTINED} from '../core/store/errors.js'
import {currentSession, refuseWithoutSession} from '../core/session/sessions.js'
import {Store} from '../core/store/store.js'
import {AGENT_ORIGINS} from '../core/memory/memory.js'
import {writeMemory} from '../core/write/write.js'

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
    const store = await Store.open(flags.base)
    const session = await currentSession(store, flags.session)
    if (!session) refuseWithoutSession()
    // no --tags: an update keeps the file's tags; --tags "" clears them
    const tags = flags.tags === undefined ? undefined : parseTags(flags.tags)
    // a write that will be refused is refused before any content is read
    writeRoute(session, formatScope(parseScope(flags.scope)), store.config)
    if (flags.expires !== undefined) parseExpires(flags.expires)
    const content = await readContent(flags.file, store.config.max_body_bytes)
    const r = await writeMemory(store, session, {
      scope: flags.scope, path: args.path, content, title: flags.title, tags, origin: flags.origin, base: flags['base-blob'], expires: flags.expires,
    })
    for (const w of r.warnings) this.warnLine(w)
    // already said on stderr when the store opened; --json also carries it
    if (store.policy.warning) r.warnings.push(store.policy.warning)
    if (!this.jsonEnabled()) {
      const where = r.status === 'committed' ? `committed ${r.commit?.slice(0, 8) ?? ''}` : `${r.status} as ${r.proposal}`
      this.log(`${r.status}\t${r.scope}/${r.path}${r.proposal ? `\t${r.proposal}` : ''}`)
      this.note(`${where}${r.vote ? ` — vote: ${r.vote.summary}` : ''}`)
      for (const f of r.flags) this.note(`  flag ${f.flag}: ${f.reason}`)
      for (const [k, n] of Object.entries(r.redactions)) this.note(`  redacted ${n} × ${k}`)
      if (r.status === 'quarantined') this.warnLine(`write quarantined (${r.proposal}); the owner sees it in \`engram quarantine list\``)
    }
    // kept, but refused by the vote: its own exit code, so a script need not parse stdout
    if (r.status === 'quarantined') process.exitCode = EXIT_QUARANTINED
    if (flags.sync) {
      const synced = await syncAfter(store, `${r.status} ${r.scope}/${r.path}${r.proposal ? ` as ${r.proposal}` : ''}`)
      this.note(syncLine(synced))
      return {...r, sync: synced}
    }
    return r
  }
}

/** The content from --file or stdin, read to its end but never past the size limit (content.ts readLimited). */
async function readContent(file: string | undefined, maxBytes: number): Promise<Buffer> {
  if (file !== undefined) {
    let stream
    try {
      stream = createReadStream(file)
      await new Promise((resolve, reject) => stream!.once('open', resolve).once('error', reject))
    } catch {
      throw badInput(`Cannot read ${file}.`, 'give a readable file with --file, or pipe the content on stdin')
    }
    return readLimited(stream, maxBytes)
  }
  if (process.stdin.isTTY) throw badInput('No content: pipe the memory on stdin or give --file.', 'e.g. echo "fact" | engram write notes.md --scope run:$ENGRAM_SESSION')
  return readLimited(process.stdin, maxBytes)
}
