import {redactText} from '../write/redact/index.js'
import {visible} from './visible.js'

/**
 * A warning line on stderr, the same from the core, the oclif commands and the fast search
 * entry (stdout stays pure with --json).
 */
export function writeWarning(message: string): void {
  // a warning can echo a path or a query: redacted like every message, then made terminal-safe
  process.stderr.write(`engram: warning: ${visible(redactText(message))}\n`)
}
