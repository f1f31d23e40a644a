import type {Hook} from '@oclif/core'

import {usageError} from '../core/store/errors.js'
import {suggestCommands} from '../cli/suggest.js'

/**
 * An unknown command or topic: one engram error (exit 2, JSON with --json, reported by
 * main.ts) naming the likeliest command(s). It never asks "did you mean …? (y/n)" as
 * @oclif/plugin-not-found does on a terminal: an agent would wait on it for ever.
 */
const hook: Hook<'command_not_found'> = async function (opts) {
  const words = opts.id.split(':')
  const typed = words.join(' ')
  if (words[0] === '--json' || words[0] === '--base' || words[0].startsWith('--base=')) {
    throw usageError(`${words[0].replace(/=.*/, '')} needs a command after it.`, 'e.g. `engram --json status` or `engram --base <folder> status`; `engram help` lists the commands')
  }
  if (typed.startsWith('-')) {
    throw usageError(`${words[0]} is not an engram command or global flag (global flags: --json, --base <folder>, --help, --version).`, 'run `engram --help` for the commands')
  }
  const hidden = new Set(this.config.commands.filter((c) => c.hidden).map((c) => c.id))
  const suggestions = suggestCommands(words, this.config.commandIDs.filter((id) => !hidden.has(id)))
  const next =
    suggestions.length > 0
      ? `did you mean ${suggestions.map((s) => `\`engram ${s}\``).join(' or ')}? (\`engram help\` lists every command)`
      : '`engram help` lists every command'
  throw usageError(`"${typed}" is not an engram command.`, next)
}

export default hook
