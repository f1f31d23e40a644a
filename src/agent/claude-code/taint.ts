import {basename} from 'node:path'

import {clipRedacted} from '../../core/write/redact/index.js'

/**
 * Which tool calls bring third-party text into a Claude Code session, so that its later
 * writes are marked tainted (STANDARD.md R8): web fetches and searches, outside (MCP)
 * tools, and shell commands that fetch. engram's own MCP server serves engram's memory,
 * already wrapped and labelled, so it never taints.
 */
export const TAINT_TOOLS = ['WebFetch', 'WebSearch', 'mcp__*']
export const NEVER_TAINT_TOOLS = ['mcp__engram__*']
/** Command words (the command a shell runs, not any word of its line) that fetch from outside. */
export const TAINT_COMMANDS = [
  'curl', 'wget', 'gh', 'http', 'https', 'httpie', 'xh', 'nc', 'ncat', 'netcat', 'socat', 'telnet',
  'ssh', 'scp', 'sftp', 'rsync', 'ftp', 'lynx', 'w3m', 'elinks', 'links', 'aria2c', 'fetch',
]
/** git subcommands that fetch (`git status` does not). */
const GIT_FETCHES = new Set(['clone', 'fetch', 'pull', 'ls-remote', 'submodule', 'remote'])
/** Words that run the next word as the command. */
const WRAPPERS = new Set(['sudo', 'env', 'command', 'exec', 'time', 'nohup', 'nice', 'xargs', 'timeout', 'stdbuf', 'builtin', 'then', 'do', 'else', '!'])
const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh'])

export interface TaintList {
  tools: string[]
  commands: string[]
}

const matches = (name: string, pattern: string) => (pattern.endsWith('*') ? name.startsWith(pattern.slice(0, -1)) : name === pattern)

/** Shell words of one simple command, quotes removed (enough to find its command word; not a shell). */
function words(segment: string): string[] {
  const out: string[] = []
  for (const m of segment.matchAll(/"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g)) out.push((m[1] ?? m[2] ?? m[3]).replace(/["']/g, ''))
  return out
}

/** The command words a shell line runs: each simple command's first word, after assignments and wrappers, `sh -c` opened. */
export function commandHeads(line: string, depth = 0): string[][] {
  if (depth > 4) return []
  const heads: string[][] = []
  // a new simple command starts after ; & | && || newlines, and inside $( ) ` ` ( ) { }
  for (const segment of line.split(/\|\||&&|[;&|\n`(){}]|\$\(/)) {
    let w = words(segment)
    for (;;) {
      while (w.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(w[0])) w = w.slice(1)
      if (w.length === 0) break
      const head = basename(w[0])
      if (WRAPPERS.has(head)) {
        // the wrapper's own options and arguments (timeout 5, env -i, nice -n 5) come before the command
        w = w.slice(1)
        while (w.length > 0 && (w[0].startsWith('-') || /^\d+[smhd]?$/.test(w[0]))) w = w.slice(1)
        continue
      }
      if (SHELLS.has(head)) {
        const c = w.indexOf('-c')
        if (c >= 0 && w[c + 1] !== undefined) {
          // the quoted script was split into words above: take the segment's text after -c
          const at = segment.indexOf('-c')
          heads.push(...commandHeads(segment.slice(at + 2).trim().replace(/^["']|["']$/g, ''), depth + 1))
          break
        }
      }
      heads.push([head, ...w.slice(1)])
      break
    }
  }
  return heads
}

/** The command word of a shell line that fetches, e.g. "curl" or "git clone", or undefined. */
export function fetchingCommand(line: string, extra: string[] = []): string | undefined {
  const list = new Set([...TAINT_COMMANDS, ...extra])
  for (const [head, ...rest] of commandHeads(line)) {
    if (list.has(head)) return head
    if (head === 'git') {
      // git's own options come first; -C and -c take a value
      let i = 0
      while (i < rest.length && rest[i].startsWith('-')) i += rest[i] === '-C' || rest[i] === '-c' || rest[i] === '--git-dir' || rest[i] === '--work-tree' ? 2 : 1
      const sub = rest[i]
      if (sub && GIT_FETCHES.has(sub)) return `git ${sub}`
    }
  }
  return undefined
}

/** A tool input as JSON, or a word when it cannot be (nested deeper than JSON.stringify goes). */
function shown(input: Record<string, unknown>): string {
  try {
    return JSON.stringify(input)
  } catch {
    return '(input not shown)'
  }
}

/** Why this tool call taints the session (tool and target, redacted and clipped), or undefined when it does not. */
export function taintReason(event: string, tool: string, input: Record<string, unknown>, list: TaintList): string | undefined {
  const str = (k: string) => (typeof input[k] === 'string' ? (input[k] as string) : undefined)
  let target: string | undefined
  if (tool === 'Bash') {
    const command = str('command')
    if (!command) return undefined
    const word = fetchingCommand(command, list.commands)
    if (!word) return undefined
    target = command
  } else {
    if (NEVER_TAINT_TOOLS.some((p) => matches(tool, p))) return undefined
    if (![...TAINT_TOOLS, ...list.tools].some((p) => matches(tool, p))) return undefined
    target = str('url') ?? str('query') ?? str('uri') ?? str('path') ?? (Object.keys(input).length > 0 ? shown(input) : undefined)
  }
  return taintLine(event, tool, target)
}

/**
 * A taint reason as the session records it: event, tool and what it reached, on one line,
 * redacted and clipped to 200 characters. Redaction reads the first 4 KiB of `what`, not
 * megabytes of it.
 */
export function taintLine(event: string, tool: string, what?: string): string {
  return clipRedacted(`${event}: ${tool}${what ? ` ${what.slice(0, 4096)}` : ''}`.replace(/\s+/g, ' '), 200)
}
