import {execFileSync, spawnSync} from 'node:child_process'
import {chmodSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {expect, it} from 'vitest'

import {BIN, sandbox} from '../helpers/cli.js'

const root = (p: string) => fileURLToPath(new URL(`../../${p}`, import.meta.url))
const json = (p: string) => JSON.parse(readFileSync(root(p), 'utf8'))
const settings = json('hooks/hooks.json')

it('the plugin: its manifest, marketplace entry, skills and MCP server are what Claude Code loads', () => {
  const pkg = json('package.json')
  const plugin = json('.claude-plugin/plugin.json')
  expect(plugin).toMatchObject({name: 'engram', version: pkg.version})
  expect(plugin.mcpServers.engram).toMatchObject({command: 'engram', args: expect.arrayContaining(['mcp', '--base', '${CLAUDE_PROJECT_DIR}/memory'])})
  const market = json('.claude-plugin/marketplace.json')
  expect(market.plugins).toEqual([expect.objectContaining({name: 'engram', source: './', version: pkg.version})])
  for (const skill of ['engram', 'engram-adopt']) expect(readFileSync(root(`skills/${skill}/SKILL.md`), 'utf8')).toMatch(new RegExp(`^---\\nname: ${skill}\\n`))
  // the npm package carries the plugin too
  expect(pkg.files).toEqual(expect.arrayContaining(['.claude-plugin', 'hooks', 'skills']))
})

it('the plugin\'s hooks run `engram hook <event>` as written: the harness starts the session, prints the context, and taints after web fetches', () => {
  const sb = sandbox()
  // the project, with its store where the plugin's hooks look: $CLAUDE_PROJECT_DIR/memory
  expect(sb.run(['init', '--base', join(sb.dir, 'memory')]).code).toBe(0)
  // `engram` on PATH, as a user who ran `npm link` has it
  const bin = join(sb.configDir, 'bin')
  mkdirSync(bin)
  writeFileSync(join(bin, 'engram'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`)
  chmodSync(join(bin, 'engram'), 0o755)
  const env = {...sb.env, PATH: `${bin}:${process.env.PATH}`, CLAUDE_PROJECT_DIR: sb.dir, CLAUDE_ENV_FILE: '', ENGRAM_ASSIGNED: 'tenant:acme'}
  // each hook's command exactly as the plugin gives it, through a shell as Claude Code runs it
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
  const owner = (args: string[]) => sb.run([...args, '--base', join(sb.dir, 'memory')])
  expect(owner(['session', 'show', id, '--json']).json).toMatchObject({agent: 'claude-code', assigned: 'tenant:acme', tainted: false})
  const taint = run('PostToolUse', {tool_name: 'WebFetch', tool_input: {url: 'https://example.com'}}, 'WebFetch')
  expect(taint.status, taint.stderr).toBe(0)
  const after = owner(['session', 'show', id, '--json']).json
  expect(after.tainted).toBe(true)
  expect(after.taint_reasons).toContain('PostToolUse: WebFetch https://example.com')
  // every event has its hook, and the tool matchers pass the shell (fetching commands) and MCP tools
  for (const event of ['SessionStart', 'UserPromptSubmit', 'PostToolUse', 'PostToolUseFailure', 'SessionEnd']) expect(settings.hooks[event], event).toBeDefined()
  for (const tool of ['Bash', 'WebSearch', 'mcp__github__get_issue']) expect(new RegExp(`^(?:${settings.hooks.PostToolUse[0].matcher})$`).test(tool), tool).toBe(true)
  expect(execFileSync('git', ['status', '--porcelain'], {cwd: join(sb.dir, 'memory'), encoding: 'utf8'})).toBe('')
})

it('the plugin\'s MCP server starts as declared: on $CLAUDE_PROJECT_DIR/memory, assigned the project\'s scope as the hooks are', () => {
  const sb = sandbox()
  const project = join(sb.dir, 'Shop Front')
  mkdirSync(project)
  expect(sb.run(['init', '--base', join(project, 'memory')]).code).toBe(0)
  const srv = json('.claude-plugin/plugin.json').mcpServers.engram
  // Claude Code expands ${VAR} in a server's command and args
  const args = (srv.args as string[]).map((a) => a.replace('${CLAUDE_PROJECT_DIR}', project))
  const r = spawnSync(process.execPath, [BIN, ...args], {cwd: project, env: {...sb.env, CLAUDE_PROJECT_DIR: project}, input: '', encoding: 'utf8', timeout: 60_000})
  expect(r.status, r.stderr).toBe(0)
  expect(r.stderr).toMatch(/^engram mcp: started session s-[0-9a-z]+ \(agent claude-code, assigned project:shop-front, tainted\)/m)
})

