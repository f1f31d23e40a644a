import {plainArgs} from './fast-args.js'
import {writeWarning} from './output.js'
import {runSearch, searchLines} from './search.js'
import {safeJson} from '../core/text/visible.js'

/** `--limit` of `engram search`, shared with the oclif command's flag definition. */
export const SEARCH_LIMIT = {default: 10, min: 1, max: 1000} as const

/**
 * `engram search` without loading oclif (about 90 ms of a search's start, README "Performance"):
 * it is what an agent runs most, and each run is a fresh process. Only the plain,
 * well-formed case is handled here: any help request, a flag this does not know or a
 * repeated one, a value that is not plainly valid, or any error at all returns false, and
 * bin/run.js hands the whole command line to oclif, which runs the command from the start.
 * Messages and exit codes for everything but success therefore come from one place, and a
 * search is read-only, so running it again changes nothing. ENGRAM_NO_FAST=1 turns this off.
 */
export async function fastSearch(argv: string[]): Promise<boolean> {
  const parsed = plainArgs(argv, {scope: {type: 'string'}, limit: {type: 'string'}, session: {type: 'string'}, base: {type: 'string'}, json: {type: 'boolean'}})
  if (!parsed) return false
  const {values, positionals} = parsed
  // several words are one query, as in the command (cli/query-words.ts); -word and -- go to oclif
  if (positionals.length === 0 || positionals.includes('')) return false
  for (const v of [values.scope, values.limit, values.session, values.base, process.env.ENGRAM_BASE, process.env.ENGRAM_SESSION]) if (v === '') return false
  let limit: number = SEARCH_LIMIT.default
  if (values.limit !== undefined) {
    if (!/^[0-9]{1,4}$/.test(values.limit)) return false
    limit = Number(values.limit)
    if (limit < SEARCH_LIMIT.min || limit > SEARCH_LIMIT.max) return false
  }
  let result
  try {
    result = await runSearch(
      {query: positionals.join(' '), scope: values.scope, limit, session: values.session, base: values.base ?? process.env.ENGRAM_BASE},
      writeWarning,
    )
  } catch {
    return false
  }
  // a reader that stops early (`| head`) is not an error, as with oclif: the rest of the
  // output goes nowhere and the exit code stays the command's own (a refused or quarantined
  // write must not exit 0 because nobody read its answer)
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error
  })
  if (values.json) {
    process.stdout.write(`${safeJson(result)}\n`)
  } else {
    const lines = searchLines(result.hits)
    if (lines.length > 0) process.stdout.write(`${lines.join('\n')}\n`)
    else process.stderr.write('no results\n')
  }
  return true
}
