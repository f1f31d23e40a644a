import {Flags} from '@oclif/core'

import {EngramCommand} from '../../cli/base.js'
import {startSession} from '../../core/session/sessions.js'
import {Store} from '../../core/store/store.js'

export default class SessionStart extends EngramCommand {
  static override ownerOnly = true
  static override summary = 'Start an agent session (run by the harness, not the agent) and print its record.'
  static override examples = [
    'J=$(<%= config.bin %> session start --agent claude-code --assigned tenant:acme --json); S=$(echo "$J" | jq -r .id); T=$(echo "$J" | jq -r .token)',
    '<%= config.bin %> session start --agent researcher --assigned project:web --tainted --reason "browses the web"',
    '<%= config.bin %> session start --agent my-harness --assigned tenant:acme --record-prompts',
  ]
  static override flags = {
    agent: Flags.string({description: 'agent name (becomes the author of its writes)', required: true}),
    assigned: Flags.string({description: 'the scope this session may propose writes to', required: true}),
    reads: Flags.string({description: 'extra scope it may read (org or project:<name>); repeatable', multiple: true}),
    tainted: Flags.boolean({description: 'mark the session tainted from the start'}),
    reason: Flags.string({description: 'taint reason; repeatable', multiple: true}),
    'record-prompts': Flags.boolean({description: 'the harness will record each prompt the user types (`session prompt`): the session\'s direct_chat writes are checked against them'}),
  }

  async run() {
    const {flags} = await this.parse(SessionStart)
    // A session is made by the harness; an agent already inside one (ENGRAM_SESSION set,
    // even to an empty string) cannot mint another: ownerOnly refuses it before this runs.
    const store = await Store.open(flags.base)
    const s = await startSession(store, {agent: flags.agent, assigned: flags.assigned, reads: flags.reads, tainted: flags.tainted, reasons: flags.reason, recordPrompts: flags['record-prompts']})
    if (!this.jsonEnabled()) this.log(s.id)
    this.note(`token (hand it to the agent as ENGRAM_SESSION_TOKEN; \`engram serve\` answers only with it): ${s.token}`)
    this.note(`session ${s.id}: agent ${s.agent}, assigned ${s.assigned}${s.tainted ? `, tainted (${s.taint_reasons.join('; ')})` : ''}${s.prompts === 'recorded' ? ', prompts recorded (feed each one to `engram session prompt`)' : ''}`)
    return s
  }
}
