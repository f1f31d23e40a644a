import {Command, Flags, Interfaces} from '@oclif/core'
import {format} from 'node:util'

import {writeWarning} from './cli/output.js'
import {parseError, reportError, reportUnexpected} from './cli/report.js'
import {EngramError} from './core/errors.js'
import {RootNotPinned, rootNotPinned} from './core/keys.js'
import {Store} from './core/store.js'
import {safeJson, visible} from './visible.js'

export type BaseFlags<T extends typeof Command> = Interfaces.InferredFlags<(typeof EngramCommand)['baseFlags'] & T['flags']>

/**
 * Every engram command: `--json` (oclif's own flag: run() returns the data), `--base`
 * (env ENGRAM_BASE), and one mapping of the error hierarchy to exit codes. Results go to
 * stdout, chatter to stderr. Every line printed goes through the terminal-safe renderer
 * (visible.ts, STANDARD.md R16): stored strings cannot carry an escape sequence to the
 * screen, whichever command prints them.
 */
export abstract class EngramCommand extends Command {
  static override enableJsonFlag = true
  static override baseFlags = {
    base: Flags.string({
      description: 'store folder (default: nearest folder upward holding .engram/)',
      env: 'ENGRAM_BASE',
      helpGroup: 'GLOBAL',
    }),
  }

  override async init(): Promise<void> {
    await super.init()
    // a store whose config.yml is not in force says so once, on stderr (stdout stays pure JSON)
    Store.onWarning = writeWarning
  }

  /** A result line on stdout, terminal-safe. */
  override log(message = '', ...args: unknown[]): void {
    super.log(visible(args.length > 0 ? format(message, ...args) : message))
  }

  /** Output of render.ts, which escapes every stored string itself before it colours. */
  logRendered(text: string): void {
    super.log(text)
  }

  /** --json output: the data exactly, with no raw escape, C1 or bidi character (visible.ts safeJson). */
  override logJson(json: unknown): void {
    process.stdout.write(`${safeJson(json)}\n`)
  }

  /** Chatter for people: stderr, silenced by --json. */
  note(message: string): void {
    if (!this.jsonEnabled()) process.stderr.write(`${visible(message)}\n`)
  }

  /** A warning always goes to stderr (also with --json, where stdout stays pure JSON). */
  warnLine(message: string): void {
    writeWarning(message)
  }

  /**
   * Commands that serve memory say plainly when the store's root is not pinned on this
   * machine (a fresh clone): nothing curated is served until it is. A warning on stderr;
   * the caller also puts the returned notice in its JSON as `root_not_pinned`.
   */
  async rootNotice(store: Store): Promise<RootNotPinned | undefined> {
    const notice = await rootNotPinned(store)
    if (notice) this.warnLine(notice.message)
    return notice
  }

  /** An error from a command that served nothing because the root is not pinned: say so in its next step and JSON. */
  withRootNotice(error: unknown, notice: RootNotPinned | undefined): unknown {
    if (!notice || !(error instanceof EngramError)) return error
    return new EngramError(error.code, error.message, {nextStep: `this store's root is not pinned here: check its fingerprint with the owner, then run \`${notice.command}\``, data: {...error.data, root_not_pinned: notice}})
  }

  protected override async catch(err: Error & {exitCode?: number; oclif?: {exit?: number}; code?: string}): Promise<void> {
    // Error messages can echo user input (a path, a flag value): redacted like stored text (cli/report.ts)
    // it did parse, or tried: oclif's "did not parse its arguments" warning would only be noise
    this.parsed = true
    if (err instanceof EngramError) return reportError(err, this.jsonEnabled())
    // oclif's own exits (this.exit) and help requests pass through.
    if (err.code === 'EEXIT' || err.message?.startsWith('EEXIT')) throw err
    // Flag and argument parsing errors are usage errors: exit 2, one clear message.
    const parse = err.oclif?.exit === 2 || /Parse|Flag|Arg|Unexpected argument|Missing required/i.test(err.name + err.message)
    if (parse) return reportError(parseError(err.message, this.id), this.jsonEnabled())
    return reportUnexpected(err, this.jsonEnabled())
  }
}

export const sessionFlag = Flags.string({description: 'agent session id (default: env ENGRAM_SESSION)', env: 'ENGRAM_SESSION'})
export const scopeFlag = (required = false) =>
  Flags.string({description: 'scope: org, project:<name>, tenant:<id> or run:<session>', required})
