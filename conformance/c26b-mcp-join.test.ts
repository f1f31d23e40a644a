/**
 * C26b — the MCP server of a host process acts as the session the host's hooks bound, and
 * the join gains the agent nothing (R26). The test process plays Claude Code: the parent of
 * the SessionStart hook and of `engram mcp` (the MCP SDK's own stdio client). A node
 * wrapper in between plays a server of another Claude Code process. The join record is
 * attacked as an agent with a shell would: copied under another process's name, edited to
 * name another session; each must count as none, the server serving a session of its own,
 * tainted even with --untainted; without a record, its own tainted session as before.
 */
import {readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {StdioClientTransport} from '@modelcontextprotocol/sdk/client/stdio.js'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {argv, has, newStore, Store} from './harness.js'

/** Another host process: with a record path, it first copies that record under its own name (pid and start time), as an agent planting one would. */
const WRAPPER = `
const {copyFileSync, readFileSync} = require('node:fs')
const {join} = require('node:path')
const {spawn} = require('node:child_process')
const [rec, dir, ...cmd] = process.argv.slice(1)
if (rec !== '-') {
  const stat = readFileSync('/proc/' + process.pid + '/stat', 'utf8')
  const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]
  copyFileSync(rec, join(dir, process.pid + '-' + start + '.json'))
}
const child = spawn(cmd[0], cmd.slice(1), {stdio: 'inherit'})
child.on('exit', (code) => process.exit(code ?? 1))
`

interface Served {
  client: Client
  session: string
  call(name: string, args: Record<string, unknown>): Promise<any>
}

describe.skipIf(!has('mcp') || !has('hook', 'session-start') || process.platform !== 'linux')('C26b — engram mcp serves the session the host\'s hooks bound; a planted or edited join is none (R26)', () => {
  let store: Store
  const open: Served[] = []
  const env = () => ({CLAUDE_PROJECT_DIR: store.dir, ENGRAM_BASE: store.dir, CLAUDE_ENV_FILE: ''})
  const flags = ['--agent', 'claude-code', '--assigned', 'project:c26b']
  /** every session as the owner lists them, by id (one run for all the checks) */
  const sessions = () => Object.fromEntries(store.ok(['session', 'list']).items.map((x: {id: string}) => [x.id, x]))

  async function serve(extra: string[], via?: {record: string; dir: string}): Promise<Served> {
    const [cmd, args] = argv(['mcp', ...flags, ...extra])
    const command = via ? [process.execPath, '-e', WRAPPER, via.record || '-', via.dir, cmd, ...args] : [cmd, ...args]
    const transport = new StdioClientTransport({command: command[0], args: command.slice(1), cwd: store.dir, env: {...(store.env as Record<string, string>), ...env()}, stderr: 'pipe'})
    let stderr = ''
    const id = new Promise<string>((resolve, reject) => {
      transport.stderr!.on('data', (d: Buffer) => {
        stderr += d
        const m = /session (s-[0-9a-z]+)/.exec(stderr)
        if (m) resolve(m[1])
      })
      transport.stderr!.on('end', () => reject(new Error(`no session line: ${stderr}`)))
    })
    const client = new Client({name: 'c26b', version: '1.0.0'})
    await client.connect(transport)
    const served: Served = {client, session: await id, call: (name, a) => client.callTool({name, arguments: a})}
    open.push(served)
    return served
  }

  beforeAll(() => {
    store = newStore()
  }, 300_000)

  afterAll(async () => {
    for (const s of open) await s.client.close()
  })

  it('a join record copied to another process or edited to another session counts as none; without one, a session of its own, tainted', async () => {
    const r = store.run(['hook', 'session-start', ...flags], {
      input: JSON.stringify({session_id: 'c26b0000-6b6b-4c26-8c26-000000000001', transcript_path: '/tmp/t.jsonl', cwd: store.dir, hook_event_name: 'SessionStart', permission_mode: 'default', source: 'startup'}),
      env: env(),
    })
    expect(r.code, r.stderr).toBe(0)
    const id = /engram session (s-[0-9a-z]+)/.exec(JSON.parse(r.stdout).hookSpecificOutput.additionalContext)![1]
    // the hook's record for this (the test's) process, in the private folder
    const joins = join(store.configDir, 'private', 'joins', 'claude-code')
    const dir = join(joins, readdirSync(joins)[0])
    const record = join(dir, readdirSync(dir).find((f) => f.startsWith(`${process.pid}-`))!)
    const real = readFileSync(record, 'utf8')

    // copied under another host process's name: its MAC names this process
    const copied = await serve([], {record, dir})
    expect(copied.session).not.toBe(id)

    // another host process without a record: its own session, tainted as without hooks
    const none = await serve([], {record: '', dir})
    expect(none.session).not.toBe(id)

    // edited to name another session (one the agent would rather be): not that one; its own, tainted even with --untainted
    writeFileSync(record, real.replace(id, none.session))
    const edited = await serve(['--untainted'])
    try {
      expect([id, none.session]).not.toContain(edited.session)
      const w = await edited.call('write', {scope: `run:${none.session}`, path: 'x.md', content: 'Into the other one.\n'})
      expect(w.isError).toBe(true)
    } finally {
      writeFileSync(record, real)
    }
    // the record restored verifies again: the same server's next call is the hook's session's, and its own session is ended
    const w = await edited.call('write', {scope: `run:${id}`, path: 'back.md', content: 'Back in the bound session.\n'})
    expect(w.isError, JSON.stringify(w.content)).toBeFalsy()
    expect(w.structuredContent.scope).toBe(`run:${id}`)
    const all = sessions()
    expect(all[copied.session]).toMatchObject({tainted: true, assigned: 'project:c26b'})
    expect(all[copied.session].taint_reasons.join(' ')).toMatch(/join record is no proof .*copied from another process/)
    expect(all[none.session].taint_reasons).toEqual(['MCP session: tools outside engram may have shown it third-party text'])
    expect(all[edited.session].tainted).toBe(true)
    expect(all[edited.session].taint_reasons.join(' ')).toMatch(/join record is no proof/)
    expect(all[edited.session].ended).toMatch(/^\d{4}-/)
    expect(all[id].tainted).toBe(false)
    expect(all[id].ended).toBeUndefined()
  }, 300_000)
})
