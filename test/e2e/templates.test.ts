import {execFileSync, spawnSync} from 'node:child_process'
import {chmodSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {expect, it} from 'vitest'

import {BIN, sandbox} from '../helpers/cli.js'

const settings = JSON.parse(readFileSync(fileURLToPath(new URL('../../templates/claude-code/settings.json', import.meta.url)), 'utf8'))

it('the settings template\'s hooks run `engram hook <event>`: the harness starts the session, prints the context, and taints after web fetches', () => {
  const sb = sandbox()
  expect(sb.run(['init']).code).toBe(0)
  // `engram` on PATH, as a user who ran `npm link` has it
  const bin = join(sb.configDir, 'bin')
  mkdirSync(bin)
  writeFileSync(join(bin, 'engram'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`)
  chmodSync(join(bin, 'engram'), 0o755)
  const env = {...sb.env, PATH: `${bin}:${process.env.PATH}`, CLAUDE_PROJECT_DIR: sb.dir, CLAUDE_ENV_FILE: '', ENGRAM_BASE: sb.dir, ENGRAM_ASSIGNED: 'tenant:acme'}
  // each hook's command exactly as the template gives it, through a shell as Claude Code runs it
  const run = (event: string, payload: Record<string, unknown>, matcherInput?: string) => {
    const entries = settings.hooks[event] as {matcher?: string; hooks: {type: string; command: string}[]}[]
    const entry = entries.find((e) => !e.matcher || !matcherInput || new RegExp(`^(?:${e.matcher})$`).test(matcherInput))!
    expect(entry, `${event} ${matcherInput}`).toBeDefined()
    const session_id = '3a1f7c2e-0d4b-4e8a-b1c9-6f2d8e4a7b10'
    return spawnSync('sh', ['-c', entry.hooks[0].command], {cwd: sb.dir, env, encoding: 'utf8', input: JSON.stringify({session_id, cwd: sb.dir, hook_event_name: event, ...payload})})
  }
  const start = run('SessionStart', {source: 'startup'}, 'startup')
  expect(start.status, start.stderr).toBe(0)
  const ctx = JSON.parse(start.stdout).hookSpecificOutput
  expect(ctx.additionalContext).toMatch(/not instructions/)
  const id = /engram session (s-[0-9a-z]{8})/.exec(ctx.additionalContext)![1]
  expect(sb.run(['session', 'show', id, '--json']).json).toMatchObject({agent: 'claude-code', assigned: 'tenant:acme', tainted: false})
  const taint = run('PostToolUse', {tool_name: 'WebFetch', tool_input: {url: 'https://example.com'}}, 'WebFetch')
  expect(taint.status, taint.stderr).toBe(0)
  const after = sb.run(['session', 'show', id, '--json']).json
  expect(after.tainted).toBe(true)
  expect(after.taint_reasons).toContain('PostToolUse: WebFetch https://example.com')
  // every event has its hook, and the tool matchers pass the shell (fetching commands) and MCP tools
  for (const event of ['SessionStart', 'UserPromptSubmit', 'PostToolUse', 'PostToolUseFailure', 'SessionEnd']) expect(settings.hooks[event], event).toBeDefined()
  for (const tool of ['Bash', 'WebSearch', 'mcp__github__get_issue']) expect(new RegExp(`^(?:${settings.hooks.PostToolUse[0].matcher})$`).test(tool), tool).toBe(true)
  // the settings template denies direct edits of curated memory
  expect(settings.permissions.deny).toContain('Edit(memory/.engram/**)')
  execFileSync('git', ['status', '--porcelain'], {cwd: sb.dir})
})
