import type {EngramError} from '../store/errors.js'

/** An error's message and next step, redacted like stored text (they can echo input): for stderr, --json and the MCP server's tool errors. */
export async function cleanError(err: EngramError): Promise<{code: string; exitCode: number; message: string; nextStep?: string}> {
  const {redact} = await import('../write/redact/index.js')
  return {code: err.code, exitCode: err.exitCode, message: redact(err.message).text, ...(err.nextStep === undefined ? {} : {nextStep: redact(err.nextStep).text})}
}

/** An unexpected error's message, redacted: never its stack (that only with DEBUG, on stderr). */
export async function cleanUnexpected(err: Error): Promise<string> {
  const {redact} = await import('../write/redact/index.js')
  return redact(err.message ?? '').text
}
