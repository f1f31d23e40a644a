import {Flags} from '@oclif/core'

import {EngramCommand} from '../cli/base.js'
import {writeWarning} from '../cli/output.js'
import {basename} from 'node:path'

import {projectScopeFor} from '../core/store/scope.js'
import {Store} from '../core/store/store.js'
import {visible} from '../core/text/visible.js'
import {buildMcpServer, MCP_TAINT_REASON, mcpSession} from '../mcp/server.js'

export default class Mcp extends EngramCommand {
  static override summary = 'Serve one agent session over MCP on stdin/stdout: the tools search, read, write and list, with exactly the session\'s powers.'
  static override description =
    'For an MCP client such as Claude Code (declare it in .mcp.json). Run inside a session (ENGRAM_SESSION set) it serves that one; started by a Claude Code ' +
    'process whose SessionStart hook (engram hook session-start) bound its session, it serves that session, found again at every tool call (its taint, its end, ' +
    'the next one after a /clear), and --agent/--assigned/--reads must agree with it; otherwise it starts a session for --agent and --assigned, tainted unless --untainted. ' +
    'The session id goes to stderr; stdout is the protocol. It exits when stdin closes.'
  static override examples = [
    '<%= config.bin %> mcp --agent claude-code --assigned tenant:acme --base ./memory',
    '<%= config.bin %> mcp --agent researcher --assigned project:web --reads org --reason "browses the web"',
    'ENGRAM_SESSION=$S ENGRAM_SESSION_TOKEN=$T <%= config.bin %> mcp',
  ]
  static override flags = {
    agent: Flags.string({description: 'agent name of the session it starts (the author of its writes)'}),
    assigned: Flags.string({description: 'the scope the session it starts may propose writes to (default: env ENGRAM_ASSIGNED, else project:<name of $CLAUDE_PROJECT_DIR> when Claude Code starts it, as the hooks do)'}),
    reads: Flags.string({description: 'extra scope it may read (org or project:<name>); repeatable', multiple: true}),
    untainted: Flags.boolean({description: 'start the session untainted (default: tainted, since the agent\'s other tools may show it third-party text)', exclusive: ['reason']}),
    reason: Flags.string({description: `taint reason of the session it starts (default: "${MCP_TAINT_REASON}")`}),
  }

  async run() {
    const {flags} = await this.parse(Mcp)
    const store = await Store.open(flags.base)
    // started by a plugin (no per-project flags): the scope the hooks would assign
    if (process.env.ENGRAM_SESSION === undefined && flags.assigned === undefined) {
      const project = process.env.CLAUDE_PROJECT_DIR
      flags.assigned = process.env.ENGRAM_ASSIGNED || (project ? projectScopeFor(basename(project)) : undefined)
    }
    const {source, session, how, started} = await mcpSession(store, flags)
    // stdout is the protocol: the lines for people go to stderr
    const whose = how === 'joined' ? ', the one Claude Code\'s SessionStart hook bound' : ''
    process.stderr.write(`${visible(`engram mcp: ${started ? 'started' : 'serving'} session ${session.id} (agent ${session.agent}, assigned ${session.assigned}${session.tainted ? ', tainted' : ''}${whose}); tools: search, read, write, list`)}\n`)
    const notice = (m: string) => process.stderr.write(`${visible(m)}\n`)
    const {serveStdio} = buildMcpServer(store, session, {version: this.config.version, source, onWarning: writeWarning, onNotice: notice})
    await serveStdio()
  }
}
