import {Command, Flags} from '@oclif/core'
import {format} from 'node:util'

import {writeWarning} from './output.js'
import {parseError, reportError, reportUnexpected} from './report.js'
import {EngramError} from '../core/store/errors.js'
import {RootNotPinned, rootNotPinned} from '../core/trust/keys.js'
import {setPassphraseFile} from '../core/trust/privatekey.js'
import {Store} from '../core/store/store.js'
import {safeJson, visible} from '../core/text/visible.js'

/**
 * Every engram command: `--json` (oclif's own flag: run() returns the data), `--base`
 * (env ENGRAM_BASE), and one mapping of the error hierarchy to exit codes. Results go to
 * stdout, chatter to stderr. Every line printed goes through the terminal-safe renderer
 * (visible.ts, STANDARD.md R16): stored strings cannot carry an escape sequence to the
 * screen, whichever command prints them.
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

  /** Commands that open a private key take `--passphrase-file`; core reads it from here. */
  override async init(): Promise<void> {
    await super.init()
    if ((this.constructor as typeof EngramCommand).ownerOnly) {
      const {refuseInsideSession} = await import('../core/session/sessions.js')
      refuseInsideSession()
    }
    // a store whose config.yml is not in force says so once, on stderr (stdout stays pure JSON)
    Store.onWarning = writeWarning
    const ctor = this.ctor as typeof EngramCommand & {flags?: Record<string, unknown>}
    if (ctor.flags && 'passphrase-file' in ctor.flags) {
      let file: string | undefined
      try {
        file = ((await this.parse(ctor)).flags as {'passphrase-file'?: string})['passphrase-file']
      } catch {
        // bad arguments: run() parses again and reports them
      }
      setPassphraseFile(file)
    }
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

/**
 * The file holding the passphrase of the owner key (its first line), for scripted owners:
 * mode 0600, outside every store. Without it (and without ENGRAM_PASSPHRASE_FILE) the
 * passphrase is asked at the terminal, never taken from an argument or the environment.
 */
export const passphraseFileFlag = Flags.string({description: 'file (mode 0600) whose first line is the key\'s passphrase (default: env ENGRAM_PASSPHRASE_FILE, else ask at the terminal)'})

// No `env:` here: ENGRAM_SESSION is read by sessionIdInUse (sessions.ts), which refuses a
// flag that differs from it; oclif would let the flag silently win over the variable.
export const sessionFlag = Flags.string({description: 'view as this agent session (owner only; inside a session ENGRAM_SESSION decides)'})
/** `--full` of the commands that show an entry: the whole files' diff, bookkeeping fields included (render.ts renderReviewDiff). */
export const fullFlag = Flags.boolean({description: 'diff the whole files, reviewer, digest, signature, version and dates included (default: the fields that change, then the body)'})
