import {visible} from '../visible.js'

/** A warning line on stderr, the same from the oclif commands and the fast search entry (stdout stays pure with --json). */
export function writeWarning(message: string): void {
  process.stderr.write(`engram: warning: ${visible(message)}\n`)
}
