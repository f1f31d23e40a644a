import {usageError} from '../core/store/errors.js'

/**
 * `engram search` reads every word that is not one of its flags as a search word, so
 * `engram search billing -draft` asks the same as `engram search "billing -draft"`. oclif
 * would read `-draft` as an unknown flag, so the command line is put in order first:
 * the flags (and their values), then `--`, then the search words as typed. A `--word`
 * that is not a flag stays a (mistyped) flag; after `--` every word is a search word.
 *
 * `valueFlags` are the flags that take a value (their next word is that value).
 */
export function searchArgv(argv: string[], valueFlags: string[]): string[] {
  const takesValue = new Set(valueFlags.map((f) => `--${f}`))
  const flags: string[] = []
  const words: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--') {
      words.push(...argv.slice(i + 1))
      break
    }
    if (takesValue.has(a)) {
      if (i + 1 === argv.length) throw usageError(`Flag ${a} expects a value.`, 'see `engram search --help`')
      flags.push(a, argv[++i])
    } else if (a.startsWith('--')) flags.push(a)
    else words.push(a)
  }
  return [...flags, '--', ...words]
}

/** The query: the search words joined by spaces. */
export function queryFromArgv(words: string[]): string {
  if (words.length === 0 || words.every((w) => w.trim() === '')) throw usageError('Search needs words.', 'e.g. `engram search "deploy host"`')
  return words.join(' ')
}
