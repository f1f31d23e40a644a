import {parseArgs, ParseArgsConfig} from 'node:util'

type Options = NonNullable<ParseArgsConfig['options']>

/**
 * A fast entry's command line (fast.ts, fast-write.ts), when it is plainly one the entry
 * can take: it parses strictly against `options`, names no option twice and has no `--`.
 * Anything else is undefined, and bin/run.js hands the whole command line to oclif, which
 * says what is wrong with it.
 */
export function plainArgs<O extends Options>(argv: string[], options: O) {
  let parsed
  try {
    parsed = parseArgs({args: argv, strict: true, allowPositionals: true, tokens: true, options})
  } catch {
    return undefined
  }
  const given = parsed.tokens.filter((t) => t.kind === 'option') as {name: string; value?: string}[]
  const names = given.map((t) => t.name)
  if (new Set(names).size !== names.length || parsed.tokens.some((t) => t.kind === 'option-terminator')) return undefined
  return {values: parsed.values, positionals: parsed.positionals, given}
}
