import {createReadStream} from 'node:fs'

import {writeRoute} from '../core/session/access.js'
import {currentSession, refuseWithoutSession} from '../core/session/sessions.js'
import {parseExpires, parseTags, readLimited} from '../core/store/content.js'
import {badInput, EXIT_QUARANTINED} from '../core/store/errors.js'
import {formatScope, parseScope} from '../core/store/scope.js'
import {Store} from '../core/store/store.js'
import {writeMemory, WriteResult} from '../core/write/write.js'

/** The flags of `engram write` that do the write (`--sync` is the oclif command's). */
export interface WriteFlags {
  path: string
  scope: string
  file?: string
  title?: string
  tags?: string
  origin: string
  expires?: string
  baseBlob?: string
  session?: string
  base?: string
}

/** Where a command's words go: result lines, chatter for people (silent with --json), warnings. */
export interface WriteOutput {
  json: boolean
  log(line: string): void
  note(line: string): void
  warn(line: string): void
}

/**
 * `engram write` itself, shared by the oclif command (commands/write.ts) and the fast entry
 * (cli/fast-write.ts), so the two cannot differ in what they check, store or print.
 */
export async function runWrite(f: WriteFlags, out: WriteOutput): Promise<{store: Store; result: WriteResult}> {
  const store = await Store.open(f.base)
  const session = await currentSession(store, f.session)
  if (!session) refuseWithoutSession()
  // no --tags: an update keeps the file's tags; --tags "" clears them
  const tags = f.tags === undefined ? undefined : parseTags(f.tags)
  // a write that will be refused is refused before any content is read
  writeRoute(session, formatScope(parseScope(f.scope)), store.config)
  if (f.expires !== undefined) parseExpires(f.expires)
  const content = await readContent(f.file, store.config.max_body_bytes)
  const r = await writeMemory(store, session, {
    scope: f.scope, path: f.path, content, title: f.title, tags, origin: f.origin, base: f.baseBlob, expires: f.expires,
  })
  for (const w of r.warnings) out.warn(w)
  // already said on stderr when the store opened; --json also carries it
  if (store.policy.warning) r.warnings.push(store.policy.warning)
  if (!out.json) {
    const where = r.status === 'committed' ? `committed ${r.commit?.slice(0, 8) ?? ''}` : `${r.status} as ${r.proposal}`
    out.log(`${r.status}\t${r.scope}/${r.path}${r.proposal ? `\t${r.proposal}` : ''}`)
    out.note(`${where}${r.vote ? ` — vote: ${r.vote.summary}` : ''}`)
    for (const fl of r.flags) out.note(`  flag ${fl.flag}: ${fl.reason}`)
    for (const [k, n] of Object.entries(r.redactions)) out.note(`  redacted ${n} × ${k}`)
    if (r.status === 'quarantined') out.warn(`write quarantined (${r.proposal}); the owner sees it in \`engram quarantine list\``)
  }
  // kept, but refused by the vote: its own exit code, so a script need not parse stdout
  if (r.status === 'quarantined') process.exitCode = EXIT_QUARANTINED
  return {store, result: r}
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
