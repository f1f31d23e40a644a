import {Args, Flags} from '@oclif/core'

import {EngramCommand} from '../cli/base.js'
import {HookInput, runHook} from '../agent/claude-code/hook.js'
import {discardRest, readUpTo} from '../core/store/content.js'
import {HOOK_EVENTS, HookEvent, MAX_PAYLOAD_BYTES} from '../agent/claude-code/payload.js'
import {safeJson, visible} from '../core/text/visible.js'

/** How long a hook goes on reading off a payload past its bound before it closes stdin (a writer of 100 MiB is done in well under this). */
const DISCARD_MS = 5000

export default class Hook extends EngramCommand {
  static override summary = 'Run one Claude Code hook event: read its JSON on stdin, answer in Claude Code\'s hook format (README "Claude Code hooks").'
  static override description =
    'session-start binds the Claude Code session to one engram session (a resumed, compacted or cleared one keeps it, taint and all) and prints the context block; ' +
    'user-prompt-submit recalls memory for the prompt; post-tool-use and post-tool-use-failure taint the session after a web fetch, an outside (MCP) tool or a fetching shell command; ' +
    'session-end closes the session. Reading fails open (exit 1, never blocking); a taint that cannot be recorded is kept outside the store and counts (exit 1).'
  static override examples = [
    'engram hook session-start',
    'engram hook post-tool-use --taint-tool mcp__github__* --taint-command aria2c',
  ]
  // the answer is Claude Code's JSON on stdout, never engram's envelope
  static override enableJsonFlag = false
  static override args = {event: Args.string({description: 'the hook event', required: true, options: [...HOOK_EVENTS]})}
  static override baseFlags = {
    // no env: here a relative ENGRAM_BASE is taken from CLAUDE_PROJECT_DIR (agent/claude-code/hook.ts storeLocation)
    base: Flags.string({description: 'store folder (default: ENGRAM_BASE from the project root, else $CLAUDE_PROJECT_DIR/memory, else the nearest store above the payload\'s cwd)', helpGroup: 'GLOBAL'}),
  }
  static override flags = {
    agent: Flags.string({description: 'agent name of the sessions it starts', default: 'claude-code'}),
    assigned: Flags.string({description: 'scope of the sessions it starts (default: ENGRAM_ASSIGNED, else project:<project folder name>)'}),
    reads: Flags.string({description: 'extra scope the sessions it starts may read (org or project:<name>); repeatable', multiple: true}),
    budget: Flags.integer({description: 'token budget of the session-start context block', default: 2000, min: 100, max: 200000}),
    'taint-tool': Flags.string({description: 'another tool whose use taints the session (a trailing * matches a prefix); repeatable', multiple: true}),
    'taint-command': Flags.string({description: 'another shell command word whose use taints the session; repeatable', multiple: true}),
    'lock-timeout': Flags.integer({description: 'milliseconds a taint waits for the store lock before it is kept outside the store', default: 5000, min: 0, max: 600000}),
  }

  async run() {
    const {args, flags} = await this.parse(Hook)
    // read as a stream (a synchronous read of fd 0 fails with EAGAIN on a non-blocking pipe), never past the bound;
    // a payload cut there is read off (and dropped) after the answer, so that Claude Code's write of it does not
    // break on a closed pipe, and the answer, a taint among it, never waits on that
    const read = process.stdin.isTTY ? {bytes: Buffer.alloc(0), cut: false} : await readUpTo(process.stdin, MAX_PAYLOAD_BYTES, {keepOpen: true})
    try {
      const input: HookInput = read.cut ? {head: read.bytes.toString('utf8'), cut: true} : read.bytes.toString('utf8')
      const answer = await runHook(args.event as HookEvent, input, {
        base: flags.base,
        agent: flags.agent,
        assigned: flags.assigned,
        reads: flags.reads ?? [],
        budget: flags.budget,
        taintTools: flags['taint-tool'] ?? [],
        taintCommands: flags['taint-command'] ?? [],
        lockTimeoutMs: flags['lock-timeout'],
      })
      if (answer.stdout !== undefined) process.stdout.write(`${safeJson(answer.stdout, 0)}\n`)
      for (const l of answer.stderr) process.stderr.write(`${visible(l)}\n`)
      process.exitCode = answer.exit
    } finally {
      if (read.cut) await discardRest(process.stdin, DISCARD_MS)
    }
  }
}
