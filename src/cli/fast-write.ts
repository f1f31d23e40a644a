import {plainArgs} from './fast-args.js'
import {writeWarning} from './output.js'
import {reportError, reportUnexpected} from './report.js'
import {runWrite} from './write.js'
import {EngramError} from '../core/store/errors.js'
import {Store} from '../core/store/store.js'
import {safeJson, visible} from '../core/text/visible.js'

/**
 * `engram write` without loading oclif (README "Load on one host"): each write an agent
 * makes through a hook or its shell is a fresh process, and loading oclif and the
 * command's modules was most of a write's own work. Only a plain, well-formed command line
 * is taken here — a help request, a flag this does not know (`--sync` among them), a
 * repeated one, an empty value or one that looks like a flag, anything after `--`: false,
 * and bin/run.js hands the whole command line to oclif before anything has run. Once taken,
 * the write runs the command's own code (cli/write.ts) and its errors are reported as the
 * command reports them (cli/report.ts), so both ways give the same output and exit codes
 * (a test compares them). ENGRAM_NO_FAST=1 turns this off.
 */
export async function fastWrite(argv: string[]): Promise<boolean> {
  const parsed = plainArgs(argv, {
    scope: {type: 'string'}, file: {type: 'string'}, title: {type: 'string'}, tags: {type: 'string'}, origin: {type: 'string'},
    expires: {type: 'string'}, 'base-blob': {type: 'string'}, session: {type: 'string'}, base: {type: 'string'}, json: {type: 'boolean'},
  })
  if (!parsed) return false
  const {values: v, positionals, given: options} = parsed
  if (options.some((t) => t.value !== undefined && (t.value === '' || t.value.startsWith('-')))) return false
  if (positionals.length !== 1 || positionals[0] === '' || positionals[0].startsWith('-') || v.scope === undefined) return false
  for (const e of [process.env.ENGRAM_BASE, process.env.ENGRAM_SESSION]) if (e === '') return false
  const json = v.json === true
  Store.onWarning = writeWarning
  // a reader that stops early (`| head`) is not an error, as with oclif: the rest of the
  // output goes nowhere and the exit code stays the command's own (a refused or quarantined
  // write must not exit 0 because nobody read its answer)
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error
  })
  try {
    const {result} = await runWrite({
      path: positionals[0], scope: v.scope, file: v.file, title: v.title, tags: v.tags, origin: v.origin ?? 'direct_chat', expires: v.expires,
      baseBlob: v['base-blob'], session: v.session, base: v.base ?? process.env.ENGRAM_BASE,
    }, {
      json,
      log: (l) => process.stdout.write(`${visible(l)}\n`),
      note: (l) => {
        if (!json) process.stderr.write(`${visible(l)}\n`)
      },
      warn: writeWarning,
    })
    if (json) process.stdout.write(`${safeJson(result)}\n`)
  } catch (error) {
    if (error instanceof EngramError) await reportError(error, json)
    else await reportUnexpected(error as Error, json)
  }
  return true
}
