/**
 * One error hierarchy for the whole tool. Every expected failure is an EngramError
 * with a stable exit code and a next step; anything else is a bug (exit 1).
 */
export type ErrorCode =
  | 'usage'
  | 'bad-input'
  | 'refused'
  | 'not-found'
  | 'conflict'
  | 'stale-digest'
  | 'digest-mismatch'
  | 'verification'

export const EXIT_CODES: Record<ErrorCode, number> = {
  usage: 2,
  'bad-input': 2,
  refused: 3,
  'not-found': 4,
  conflict: 5,
  'stale-digest': 6,
  'digest-mismatch': 6,
  verification: 7,
}

/**
 * Exit code of a write that was kept but quarantined (the vote refused it): not an error,
 * the entry is stored for audit and the JSON output is the same, but a script must be able
 * to tell it from an accepted write without parsing stdout (README "Exit codes", STANDARD §5).
 */
export const EXIT_QUARANTINED = 8

export class EngramError extends Error {
  readonly code: ErrorCode
  readonly nextStep?: string
  /** Extra machine-readable detail for --json (never secrets: callers pass redacted data). */
  readonly data?: Record<string, unknown>
  /**
   * The command's own --json output, printed at the root beside `error` (a list command
   * that fails, like `verify`, keeps its success shape: README "JSON output").
   */
  readonly output?: Record<string, unknown>

  constructor(code: ErrorCode, message: string, opts: {nextStep?: string; data?: Record<string, unknown>; output?: Record<string, unknown>} = {}) {
    super(message)
    this.name = 'EngramError'
    this.code = code
    this.nextStep = opts.nextStep
    this.data = opts.data
    this.output = opts.output
  }

  get exitCode(): number {
    return EXIT_CODES[this.code]
  }
}

export const usageError = (message: string, nextStep?: string) => new EngramError('usage', message, {nextStep})
export const badInput = (message: string, nextStep?: string) => new EngramError('bad-input', message, {nextStep})
export const refused = (message: string, nextStep?: string) => new EngramError('refused', message, {nextStep})
export const notFound = (message: string, nextStep?: string) => new EngramError('not-found', message, {nextStep})
export const verificationFailed = (message: string, nextStep?: string, data?: Record<string, unknown>) =>
  new EngramError('verification', message, {nextStep, data})

export function isEngramError(err: unknown): err is EngramError {
  return err instanceof EngramError
}
