import {Errors, flush, run} from '@oclif/core'

import {EngramError} from '../core/store/errors.js'
import {parseError, reportError, reportUnexpected, wantsJson} from './report.js'

/**
 * oclif's entry with engram's error format for what happens before a command runs (an
 * unknown command from hooks/not-found.ts, `engram help nosuch`, a broken install): the
 * same `engram: …` / `  next: …` lines and JSON as a command's own errors (cli/report.ts).
 * A command reports its own errors (base.ts); what reaches here is the rest.
 */
export async function main(argv: string[], dir: string): Promise<void> {
  try {
    await run(argv, oclifOptions(dir))
    await flush()
  } catch (error) {
    await reportTopLevel(error, argv)
  }
}

/**
 * How engram loads oclif: from its own package only. oclif would also load "user" and
 * "link" plugins named in a package.json in its data folder (~/.local/share/engram, or
 * $XDG_DATA_HOME/engram, or $ENGRAM_DATA_DIR), and "dev" plugins outside production: code
 * whose hooks run in every command, the owner's `review accept` among them, from a file
 * anyone running as the owner — an agent with a shell — could write. engram has no plugins
 * of its own to install, so neither kind is ever loaded.
 */
export function oclifOptions(root: string): {root: string; userPlugins: false; devPlugins: false} {
  return {root, userPlugins: false, devPlugins: false}
}

/**
 * What reaches the top of a run, outside a command's own error handling: an exit code
 * (`this.exit(n)`, oclif's exits), an engram error, a parse or not-found error, or a bug.
 * Shared by oclif's path above and the bundled one (cli/bundled.ts).
 */
export async function reportTopLevel(error: unknown, argv: string[]): Promise<void> {
  const err = error as Error & {oclif?: {exit?: number}; code?: string}
  // this.exit(n) and oclif's own exits: the code, no message
  if (err instanceof Errors.ExitError || err.code === 'EEXIT') {
    process.exitCode = err.oclif?.exit ?? 0
    return
  }
  if (err instanceof EngramError) return reportError(err, wantsJson(argv))
  if (err.oclif?.exit === 2 || /not found/.test(err.message ?? '')) return reportError(parseError(err.message, undefined), wantsJson(argv))
  return reportUnexpected(err, wantsJson(argv))
}
