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
    'For an MCP client such as Claude Code (declare it in .mcp.json). It starts a session for --agent and --assigned, tainted unless --untainted, ' +
    'or, run inside a session (ENGRAM_SESSION set), serves that one. The session id goes to stderr; stdout is the protocol. It exits when stdin closes.'
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
    const {session, started} = await mcpSession(store, flags)
    // stdout is the protocol: the one line for people goes to stderr
    process.stderr.write(`${visible(`engram mcp: ${started ? 'started' : 'serving'} session ${session.id} (agent ${session.agent}, assigned ${session.assigned}${session.tainted ? ', tainted' : ''}); tools: search, read, write, list`)}\n`)
    const {serveStdio} = buildMcpServer(store, session, {version: this.config.version, onWarning: writeWarning})
    await serveStdio()
  }
}
