/**
 * `engram mcp` started by the same process as the hooks acts as the session the
 * SessionStart hook bound (src/core/session/procjoin.ts), through the built CLI, a real
 * store and the MCP SDK's own stdio client.
 *
 * What this relies on, from Claude Code's documentation: hooks and stdio MCP servers are
 * both started by the Claude Code process (hooks reference; MCP, "local stdio server"),
 * a hook command through a shell; an MCP server learns no session id from the protocol,
 * and Claude Code's environment variables reference documents CLAUDE_CODE_SESSION_ID for
 * the Bash tool and hook subprocesses only ("Updated on /clear"), while stdio MCP servers
 * "are long-lived and outlive the session that spawned them". So the join is by process:
 * here the test process plays Claude Code, the parent of both the hooks and the server.
 * Records planted, edited or copied are attacked in conformance/c26b-mcp-join.test.ts.
 */
import {createHash} from 'node:crypto'
import {mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'

import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {StdioClientTransport} from '@modelcontextprotocol/sdk/client/stdio.js'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {BIN, RunResult, Sandbox, git, sandbox} from '../helpers/cli.js'

const fixture = (event: string) => JSON.parse(readFileSync(fileURLToPath(new URL(`../fixtures/claude-code/${event}.json`, import.meta.url)), 'utf8'))

interface Served {
  client: Client
  session: string
  stderr: () => string
  call(name: string, args: Record<string, unknown>): Promise<any>
}

const textOf = (r: any) => (r.content as {type: string; text: string}[]).map((c) => c.text).join('\n')

describe('engram mcp serves the session the Claude Code hooks bound (join by process)', () => {
  let sb: Sandbox
  let project: string
  let store: string
  const open: Served[] = []
  let n = 0
  const uuid = () => `5c1e9a70-2b3d-4f6a-8c9e-${String(++n).padStart(12, '0')}`
  const env = () => ({CLAUDE_PROJECT_DIR: project, CLAUDE_ENV_FILE: ''})
  const flags = () => ['--base', store, '--agent', 'claude-code', '--assigned', 'project:proj']

  function hook(event: string, over: Record<string, unknown>): RunResult {
    const r = sb.run(['hook', event, '--base', store], {input: JSON.stringify({...fixture(event), cwd: project, ...over}), cwd: project, env: env()})
    expect(r.code, r.stderr).toBe(0)
    return r
  }
  const idIn = (r: RunResult) => /engram session (s-[0-9a-z]+)/.exec(JSON.parse(r.stdout).hookSpecificOutput.additionalContext)![1]
  // the record as committed last (taint is only ever added, so it holds every reason here)
  const show = (id: string) => JSON.parse(readFileSync(join(store, '.engram', 'sessions', `${id}.json`), 'utf8'))

  async function serve(args: string[]): Promise<Served> {
    const transport = new StdioClientTransport({command: process.execPath, args: [BIN, 'mcp', ...args], cwd: project, env: {...(sb.env as Record<string, string>), ...env()}, stderr: 'pipe'})
    let stderr = ''
    const id = new Promise<string>((resolve, reject) => {
      transport.stderr!.on('data', (d: Buffer) => {
        stderr += d
        const m = /session (s-[0-9a-z]+)/.exec(stderr)
        if (m) resolve(m[1])
      })
      transport.stderr!.on('end', () => reject(new Error(`no session line: ${stderr}`)))
    })
    const client = new Client({name: 'engram-test', version: '1.0.0'})
    await client.connect(transport)
    const served: Served = {client, session: await id, stderr: () => stderr, call: (name, a) => client.callTool({name, arguments: a})}
    open.push(served)
    return served
  }
  const writeScope = async (s: Served) => ((await s.client.listTools()).tools.find((t) => t.name === 'write')!.inputSchema as any).properties.scope.enum

  beforeAll(() => {
    sb = sandbox()
    project = join(sb.dir, 'Proj')
    const init = sb.run(['init', '--base', join(project, 'memory'), '--json'], {cwd: sb.dir})
    expect(init.code, init.stderr).toBe(0)
    store = init.json.root
  }, 300_000)

  afterAll(async () => {
    for (const s of open) await s.client.close()
  })

  it('writes under the hook\'s session, sees its taint and its end at the next call, and after /clear serves the next session with the taint carried', async () => {
    const hs = uuid()
    const id = idIn(hook('session-start', {session_id: hs}))
    expect(show(id).tainted).toBe(false)
    const mcp = await serve(flags())
    expect(mcp.session).toBe(id)
    expect(mcp.stderr()).toMatch(/SessionStart hook bound/)
    expect(await writeScope(mcp)).toContain(`run:${id}`)

    const w1 = await mcp.call('write', {scope: `run:${id}`, path: 'one.md', content: 'The build runs on the green runner.\n'})
    expect(w1.isError, textOf(w1)).toBeFalsy()
    expect(git(store, 'log', '-1', '--format=%B')).toContain(`Engram-Session: ${id}`)
    expect(readFileSync(join(store, 'run', id, 'one.md'), 'utf8')).toMatch(/^tainted: false$/m)

    // a taint the hook could not record in the store (the lock held) waits in the private folder: it counts at the next call
    expect((await mcp.call('read', {scope: `run:${id}`, path: 'one.md'})).isError).toBeFalsy()
    const pending = join(sb.configDir, 'private', 'taint-pending', createHash('sha256').update(store).digest('hex').slice(0, 16))
    mkdirSync(pending, {recursive: true, mode: 0o700})
    writeFileSync(join(pending, `${id}.json`), JSON.stringify({store, session: id, reasons: ['PostToolUse: WebSearch pending'], updated: new Date().toISOString()}), {mode: 0o600})
    const wp = await mcp.call('write', {scope: `run:${id}`, path: 'pending.md', content: 'Written while a taint waits.\n'})
    expect(wp.isError, textOf(wp)).toBeFalsy()
    expect(readFileSync(join(store, 'run', id, 'pending.md'), 'utf8')).toMatch(/^tainted: true$/m)

    // the hook taints the session after a web fetch (and records the waiting taint): the very next MCP write is tainted
    hook('post-tool-use', {session_id: hs})
    const w2 = await mcp.call('write', {scope: `run:${id}`, path: 'two.md', content: 'The deploy tags the build.\n'})
    expect(w2.isError, textOf(w2)).toBeFalsy()
    expect(readFileSync(join(store, 'run', id, 'two.md'), 'utf8')).toMatch(/^tainted: true$/m)

    // the hook ends the session: writes are refused, reading goes on
    hook('session-end', {session_id: hs, reason: 'clear'})
    const w3 = await mcp.call('write', {scope: `run:${id}`, path: 'three.md', content: 'Too late.\n'})
    expect(w3.isError).toBe(true)
    expect(textOf(w3)).toMatch(/ended/)
    expect((await mcp.call('read', {scope: `run:${id}`, path: 'one.md'})).isError).toBeFalsy()

    // /clear: a new session_id in the same Claude Code process; the server follows, schemas and all
    const id2 = idIn(hook('session-start', {session_id: uuid(), source: 'clear'}))
    expect(id2).not.toBe(id)
    const w4 = await mcp.call('write', {scope: `run:${id2}`, path: 'four.md', content: 'After the clear.\n'})
    expect(w4.isError, textOf(w4)).toBeFalsy()
    expect(git(store, 'log', '-1', '--format=%B')).toContain(`Engram-Session: ${id2}`)
    expect(await writeScope(mcp)).toEqual(expect.arrayContaining([`run:${id2}`]))
    expect(await writeScope(mcp)).not.toContain(`run:${id}`)
    expect(show(id2).taint_reasons).toEqual(expect.arrayContaining(['PostToolUse: WebSearch pending', 'PostToolUse: WebFetch https://docs.example.com/deploy']))
    // the old session's scratchpad is not this session's to write
    const old = await mcp.call('write', {scope: `run:${id}`, path: 'five.md', content: 'Into the old one.\n'})
    expect(old.isError).toBe(true)
  }, 300_000)

  it('--agent and --assigned other than the bound session\'s: refused at start, with what to do', () => {
    // the process is bound to the session the /clear above started
    const r = sb.run(['mcp', '--base', store, '--agent', 'other', '--assigned', 'tenant:acme'], {input: '', cwd: project, env: env()})
    expect(r.code, r.stderr).toBe(3)
    expect(r.stderr).toMatch(/--agent, --assigned are not what session s-[0-9a-z]+ was started with: that is the session Claude Code's SessionStart hook bound/)
    expect(r.stderr).not.toMatch(/\n\s+at /)
  })
})
