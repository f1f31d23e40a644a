import {EngramError} from '../core/store/errors.js'
import {cleanError, cleanUnexpected} from '../core/text/error-text.js'
import {safeJson, visible} from '../core/text/visible.js'

/**
 * The one way an error reaches the user, from a command (base.ts) or from before any
 * command runs (an unknown command, a bad global flag: main.ts): `engram: <message>` and
 * `  next: <step>` on stderr, or `{"error":{code,exitCode,message,nextStep}}` on stdout
 * with --json (beside the command's own output when the error carries it, EngramError.output). Message and next step are redacted like stored text (they can echo input).
 */
export async function reportError(err: EngramError, json: boolean): Promise<void> {
  const {redact} = await import('../core/write/redact/index.js')
  const clean = (text: string | undefined) => (text === undefined ? undefined : redact(text).text)
  process.exitCode = err.exitCode
  const {message, nextStep} = await cleanError(err)
  if (json) {
    const cleanJson = (value: Record<string, unknown> | undefined): Record<string, unknown> | undefined => {
      try {
        return value ? JSON.parse(clean(JSON.stringify(value))!) : undefined
      } catch {
        return undefined // redaction broke the JSON: leave the detail out rather than risk a secret
      }
    }
    const data = cleanJson(err.data)
    const output = cleanJson(err.output)
    process.stdout.write(`${safeJson({...output, error: {code: err.code, exitCode: err.exitCode, message, nextStep, ...(data ? {data} : {})}})}\n`)
  } else {
    // an error can quote a stored string (a broken file's field): shown terminal-safe
    process.stderr.write(`engram: ${visible(message)}\n`)
    if (nextStep) process.stderr.write(`  next: ${visible(nextStep)}\n`)
  }
}

/**
 * oclif's parse errors as one line: "The following error occurred:" headers, "See more
 * help" trailers and indentation dropped, the remaining lines joined with "; ".
 */
function parseErrorMessage(raw: string): string {
  const lines = raw
    .split('\n')
    // a "Missing required arg" list: "name   description" → "name (description)"
    .map((l) => l.trim().replace(/^(\S+)\s{2,}(\S.*)$/, '$1 ($2)'))
    .filter((l) => l !== '' && !/^See more help/i.test(l) && !/^The following errors? occurred:?$/i.test(l))
  const text = lines
    .join('; ')
    .replace(/:;/g, ':')
    .replace(/^Parsing (--\S+); /, '$1: ')
    .replace(/\s+/g, ' ')
  return text.charAt(0).toUpperCase() + text.slice(1)
}

/** A parse error of command `id` (oclif form, `review:show`) as a usage EngramError with its next step. */
export function parseError(raw: string, id: string | undefined): EngramError {
  const command = id ? `engram ${id.replace(/:/g, ' ')}` : 'engram'
  return new EngramError('usage', parseErrorMessage(raw), {nextStep: `see \`${command} --help\``})
}

/** --json asked for on a command line (before any `--`), for errors raised before a command parses its flags. */
export function wantsJson(argv: string[]): boolean {
  const end = argv.indexOf('--')
  return (end === -1 ? argv : argv.slice(0, end)).some((a) => a === '--json')
}

/** Anything that is not an EngramError is a bug: exit 1, said plainly, the stack only with DEBUG. */
export async function reportUnexpected(err: Error, json: boolean): Promise<void> {
  const {redact} = await import('../core/write/redact/index.js')
  const message = await cleanUnexpected(err)
  process.exitCode = 1
  if (json) process.stdout.write(`${safeJson({error: {code: 'unexpected', exitCode: 1, message}})}\n`)
  else {
    process.stderr.write(`engram: unexpected error: ${visible(message)}\n  this is a bug; please report it with the output of the command run with DEBUG=engram\n`)
    if (process.env.DEBUG) process.stderr.write(`${visible(redact(err.stack ?? '').text)}\n`)
  }
}
