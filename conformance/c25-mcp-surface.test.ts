/**
 * R25: an agent-facing protocol surface admits only the session's own powers. The binary's
 * `mcp` server, driven by the MCP SDK's own stdio client, is attacked as a hostile client
 * would: arguments its schemas do not declare, scopes and origins outside its enums, tools
 * and capabilities it does not list, flags that try to widen a session, and the other
 * tenant's words, paths and ids. Nothing may be written, nothing of the other tenant shown.
 */
import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {StdioClientTransport} from '@modelcontextprotocol/sdk/client/stdio.js'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {argv, curate, has, newStore, startSession, Store, uniqueWord} from './harness.js'

/** Fields whose value only the session record, the store or the owner may decide. */
const DECIDED_ELSEWHERE = /^(author|status|taint|tainted|taint_reasons|session|source_session|role|proof|token|reviewed_by|signature|digest|approved)$/i

/** Every property name in a JSON schema, at any depth. */
function propertyNames(schema: any): string[] {
  if (!schema || typeof schema !== 'object') return []
  const own = schema.properties ? Object.keys(schema.properties) : []
  return [...own, ...Object.values(schema).flatMap((v) => propertyNames(v))]
}

describe.skipIf(!has('mcp'))('C25 — an agent-facing protocol surface admits only the session\'s own powers (R25)', () => {
  let store: Store
  let globex: string
  let client: Client
  let session: string
  const word = uniqueWord('zorblat')
  const outputs: string[] = []

  const call = async (name: string, args: unknown) => {
    const r = (await client.callTool({name, arguments: args as Record<string, unknown>})) as any
    outputs.push(JSON.stringify(r))
    return r
  }

  beforeAll(async () => {
    store = newStore()
    globex = startSession(store, 'tenant:globex', {agent: 'agent-globex'})
    curate(store, globex, 'tenant:globex', 'plan.md', `Globex codename ${word} launches in May.\n`)
    const [command, args] = argv(['mcp', '--agent', 'agent-acme', '--assigned', 'tenant:acme'])
    const transport = new StdioClientTransport({command, args, cwd: store.dir, env: store.env as Record<string, string>, stderr: 'pipe'})
    let stderr = ''
    const id = new Promise<string>((resolve) => transport.stderr!.on('data', (d: Buffer) => {
      stderr += d
      const m = /session (s-[0-9a-z]+)/.exec(stderr)
      if (m) resolve(m[1])
    }))
    client = new Client({name: 'c25', version: '1.0.0'})
    await client.connect(transport)
    session = await id
  }, 300_000)

  afterAll(async () => {
    await client?.close()
  })

  it('offers four tools and nothing else; every schema is closed, declares no field decided elsewhere, and lists only the session\'s own scopes and agent origins', async () => {
    expect(Object.keys(client.getServerCapabilities() ?? {}).filter((k) => k !== 'experimental')).toEqual(['tools'])
    const {tools} = await client.listTools()
    expect(tools.map((t) => t.name).sort()).toEqual(['list', 'read', 'search', 'write'])
    const readable = ['org', 'tenant:acme', `run:${session}`]
    for (const t of tools) {
      const schema = t.inputSchema as any
      expect(schema.additionalProperties, t.name).toBe(false)
      expect(propertyNames(schema).filter((p) => DECIDED_ELSEWHERE.test(p)), t.name).toEqual([])
      const scopes: string[] = schema.properties.scope.enum
      for (const s of scopes) expect(t.name === 'write' ? [`run:${session}`, 'tenant:acme'] : readable, `${t.name} lists ${s}`).toContain(s)
      if (schema.properties.origin) expect(schema.properties.origin.enum.filter((o: string) => ['owner', 'dream', 'system', 'agent'].includes(o))).toEqual([])
    }
    const text = JSON.stringify(tools) + (client.getInstructions() ?? '')
    for (const s of [word, globex, 'globex']) expect(text).not.toContain(s)
  })

  it('a hostile client\'s writes — undeclared fields, foreign scopes, elevated origins, wrong types, unlisted tools — are error results and write nothing', async () => {
    const before = store.state()
    const base = {path: 'attack.md', content: 'A plausible fact.'}
    const attempts: [string, unknown][] = [
      ['write', {...base, scope: 'org'}],
      ['write', {...base, scope: 'tenant:globex'}],
      ['write', {...base, scope: `run:${globex}`}],
      ['write', {...base, scope: 'TENANT:ACME'}],
      ['write', {...base, scope: ' tenant:acme'}],
      ['write', {...base, scope: 'tenant:acme', author: 'owner'}],
      ['write', {...base, scope: 'tenant:acme', status: 'committed'}],
      ['write', {...base, scope: 'tenant:acme', tainted: false}],
      ['write', {...base, scope: 'tenant:acme', reviewed_by: 'owner'}],
      ['write', {...base, scope: 'tenant:acme', session: globex}],
      ['write', {...base, scope: `run:${session}`, origin: 'owner'}],
      ['write', {...base, scope: `run:${session}`, origin: 'dream'}],
      ['write', {...base, scope: `run:${session}`, path: '../../tenant/globex/attack.md'}],
      ['write', {...base, scope: `run:${session}`, content: {text: 'nested'}}],
      ['write', {...base, scope: `run:${session}`, tags: 'a,b'}],
      ['write', {...base, scope: `run:${session}`, __proto__: {author: 'owner'}, constructor: 'x'}],
      ['write', [base]],
      ['accept', {id: 'x', digest: '0'.repeat(64)}],
      ['review', {}],
      ['session_taint', {clear: true}],
    ]
    for (const [name, args] of attempts) {
      // an error result, or a request the protocol layer refuses outright (arguments that are no object)
      const r = await call(name, args).catch((error: Error) => ({isError: true, content: [{text: error.message}], protocol: true}))
      expect(r.isError, `${name} ${JSON.stringify(args)}: ${JSON.stringify(r)}`).toBe(true)
      // it says what went wrong, never with a stack trace
      const text = r.content.map((c: any) => c.text).join('\n')
      expect(text).not.toMatch(/\n\s+at \S|\.(?:js|ts):\d+:\d+/)
    }
    expect(store.state()).toBe(before)
  })

  it('a refusal the core makes comes back as engram\'s message and next step', async () => {
    const r = await call('read', {scope: 'tenant:acme', path: '../globex/plan.md'})
    expect(r.isError).toBe(true)
    expect(r.content[0].text).toMatch(/^engram: .+\n {2}next: \S/)
    expect(r.structuredContent?.error?.code).toBe('bad-input')
  })

  it('the session it starts is tainted, and so is what it writes', async () => {
    const w = await call('write', {scope: 'tenant:acme', path: 'renewal.md', content: 'Acme renews in March.\n'})
    expect(w.structuredContent.status).toBe('pending')
    expect(store.ok(['session', 'show', session]).tainted).toBe(true)
    expect(store.ok(['review', 'show', w.structuredContent.proposal]).tainted).toBe(true)
  })

  it('shows nothing of another tenant, whatever it is asked', async () => {
    for (const [name, args] of [
      ['search', {query: word}], ['search', {query: `Globex codename ${word}`, scope: 'tenant:globex'}], ['search', {query: 'launches May', limit: 100}],
      ['read', {scope: 'tenant:globex', path: 'plan.md'}], ['read', {scope: `run:${globex}`, path: 'plan.md'}],
      ['list', {}], ['list', {scope: 'tenant:globex'}],
    ] as [string, Record<string, unknown>][]) {
      const r = await call(name, args)
      if (r.structuredContent?.query !== undefined) r.structuredContent.query = ''
      const said = JSON.stringify(r)
      for (const s of [word, 'launches in May', globex, 'agent-globex']) expect(said, `${name} ${JSON.stringify(args)}`).not.toContain(s)
    }
    for (const o of outputs) expect(o).not.toContain('launches in May')
  })

  it('no flag widens a session it serves, and a broken ENGRAM_SESSION is refused, starting none', () => {
    const acme = startSession(store, 'tenant:acme', {agent: 'agent-acme'})
    const sessions = () => store.ok(['session', 'list']).total
    const before = sessions()
    for (const flags of [['--assigned', 'tenant:globex'], ['--reads', 'project:other'], ['--untainted'], ['--agent', 'owner']]) {
      const r = store.run(['mcp', ...flags], {session: acme})
      expect(r.code, `${flags.join(' ')}: ${r.stderr}`).toBeGreaterThanOrEqual(2)
      expect(r.stdout).toBe('')
    }
    const empty = store.run(['mcp', '--agent', 'agent-acme', '--assigned', 'tenant:acme'], {env: {ENGRAM_SESSION: ''}})
    expect(empty.code).toBe(3)
    expect(sessions()).toBe(before)
  })
})
