import {Command, Flags, Interfaces} from '@oclif/core'

import {writeWarning} from './cli/output.js'
import {EngramError} from './core/errors.js'

export type BaseFlags<T extends typeof Command> = Interfaces.InferredFlags<(typeof EngramCommand)['baseFlags'] & T['flags']>

/**
 * Every engram command: `--json` (oclif's own flag: run() returns the data), `--base`
 * (env ENGRAM_BASE), and one mapping of the error hierarchy to exit codes. Results go to
 * stdout, chatter to stderr.
 */
export abstract class EngramCommand extends Command {
  static override enableJsonFlag = true
  /** An owner action: refused inside an agent session (ENGRAM_SESSION set, even empty), before anything runs. */
  static ownerOnly = false
  static override baseFlags = {
    base: Flags.string({
      description: 'store folder (default: nearest folder upward holding .engram/)',
      env: 'ENGRAM_BASE',
      helpGroup: 'GLOBAL',
    }),
  }

  override async init(): Promise<void> {
    await super.init()
    if ((this.constructor as typeof EngramCommand).ownerOnly) {
      const {refuseInsideSession} = await import('./core/sessions.js')
      refuseInsideSession()
    }
  }

  /** Chatter for people: stderr, silenced by --json. */
  note(message: string): void {
    if (!this.jsonEnabled()) process.stderr.write(`${message}\n`)
  }

  /** A warning always goes to stderr (also with --json, where stdout stays pure JSON). */
  warnLine(message: string): void {
    writeWarning(message)
  }

  protected override async catch(err: Error & {exitCode?: number; oclif?: {exit?: number}; code?: string}): Promise<void> {
    // Error messages can echo user input (a path, a flag value): redact them like stored
    // text, so that no secret reaches the terminal or a log through an error.
    const {redact} = await import('./core/redact/index.js')
    const clean = (text: string | undefined) => (text === undefined ? undefined : redact(text).text)
    if (err instanceof EngramError) {
      process.exitCode = err.exitCode
      const message = clean(err.message)!
      const nextStep = clean(err.nextStep)
      if (this.jsonEnabled()) {
        let data: unknown
        try {
          data = err.data ? JSON.parse(clean(JSON.stringify(err.data))!) : undefined
        } catch {
          data = undefined // redaction broke the JSON: leave the detail out rather than risk a secret
        }
        this.logJson({error: {code: err.code, exitCode: err.exitCode, message, nextStep, ...(data ? {data} : {})}})
      } else {
        process.stderr.write(`engram: ${message}\n`)
        if (nextStep) process.stderr.write(`  next: ${nextStep}\n`)
      }
      return
    }
    err.message = clean(err.message ?? '')!
    // oclif's own exits (this.exit) and help requests pass through.
    if (err.code === 'EEXIT' || err.message?.startsWith('EEXIT')) throw err
    // Flag and argument parsing errors are usage errors: exit 2, one clear message.
    const parse = err.oclif?.exit === 2 || /Parse|Flag|Arg|Unexpected argument|Missing required/i.test(err.name + err.message)
    if (parse) {
      process.exitCode = 2
      const message = err.message.split('\n').filter((l) => !/^\s*See more help/.test(l)).join('\n').trim()
      if (this.jsonEnabled()) this.logJson({error: {code: 'usage', exitCode: 2, message}})
      else process.stderr.write(`engram: ${message}\n  next: see \`engram ${this.id?.replace(/:/g, ' ') ?? ''} --help\`\n`)
      return
    }
    process.exitCode = 1
    if (this.jsonEnabled()) this.logJson({error: {code: 'unexpected', exitCode: 1, message: err.message}})
    else {
      process.stderr.write(`engram: unexpected error: ${err.message}\n  this is a bug; please report it with the output of the command run with DEBUG=engram\n`)
      if (process.env.DEBUG) process.stderr.write(`${err.stack}\n`)
    }
  }
}

// No `env:` here: ENGRAM_SESSION is read by sessionIdInUse (sessions.ts), which refuses a
// flag that differs from it; oclif would let the flag silently win over the variable.
export const sessionFlag = Flags.string({description: 'view as this agent session (owner only; inside a session ENGRAM_SESSION decides)'})
export const scopeFlag = (required = false) =>
  Flags.string({description: 'scope: org, project:<name>, tenant:<id> or run:<session>', required})
