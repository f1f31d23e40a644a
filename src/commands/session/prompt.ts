import {Args} from '@oclif/core'

import {EngramCommand} from '../../cli/base.js'
import {recordPrompt} from '../../core/session/prompts.js'
import {loadSession, refuseEndedSession} from '../../core/session/sessions.js'
import {readLimited} from '../../core/store/content.js'
import {badInput, isEngramError} from '../../core/store/errors.js'
import {Store} from '../../core/store/store.js'

/** What a prompt may be at most, in bytes (a harness hands the user's text, not what it attached). */
const MAX_PROMPT_BYTES = 16 * 1024 * 1024

export default class SessionPrompt extends EngramCommand {
  static override ownerOnly = true
  static override summary = 'Record what the user typed in a session (run by the harness for each prompt, on stdin), so its direct_chat writes are checked against it.'
  static override description =
    'For a harness other than Claude Code\'s hooks (which do this themselves): a session started with `session start --record-prompts` has every direct_chat write ' +
    'checked against the values (links, hosts, mail addresses, IBANs, numbers…) its user\'s prompts state; a value no prompt holds makes the write third-party text ' +
    '(README "What the user typed"). Only MACs made with the session secret are kept, in the private folder; neither the prompt nor a value is stored or printed. ' +
    'An owner action: refused inside an agent session, so the agent cannot put words in its user\'s mouth.'
  static override examples = [
    'printf \'%s\' "$PROMPT" | <%= config.bin %> session prompt $S',
    '<%= config.bin %> session prompt s-7f3kq2ab < prompt.txt --json',
  ]
  // never the prompt on stdin taken for a missing id (and echoed in the error)
  static override args = {id: Args.string({description: 'session id (started with --record-prompts)', required: true, ignoreStdin: true})}

  async run() {
    const {args, flags} = await this.parse(SessionPrompt)
    const store = await Store.open(flags.base)
    const session = await loadSession(store, args.id)
    refuseEndedSession(session)
    if (session.prompts !== 'recorded') {
      throw badInput(
        `Session ${session.id} was not started to record prompts: its writes are not checked against them, so none is recorded.`,
        'start the session with `engram session start --record-prompts` (a session cannot gain the mark later)',
      )
    }
    if (process.stdin.isTTY) throw badInput('No prompt on stdin.', `pipe the prompt in: printf '%s' "$PROMPT" | engram session prompt ${session.id}`)
    // a prompt is read as UTF-8, to a bound far past any prompt (recordPrompt reads its first MiB for values)
    let bytes: Buffer
    try {
      bytes = await readLimited(process.stdin, MAX_PROMPT_BYTES)
    } catch (error) {
      if (isEngramError(error)) throw badInput(`The prompt is too large (more than ${MAX_PROMPT_BYTES} bytes); nothing recorded.`, 'hand it the prompt the user typed, not a file it attached')
      throw error
    }
    const prompt = bytes.toString('utf8')
    const values = recordPrompt(store.root, session.id, prompt)
    if (!this.jsonEnabled()) this.log(`session ${session.id}: recorded a prompt stating ${values} value${values === 1 ? '' : 's'}`)
    return {session: session.id, values}
  }
}
