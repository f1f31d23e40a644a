/**
 * Attacks on `engram serve` (STANDARD R22): the socket an agent could plant, requests
 * without a session or with a forged token, and a process that answers in the server's
 * name. Real CLI, real git, a real server process, real sockets.
 */
import {spawn, ChildProcess} from 'node:child_process'
import {createHash, createHmac} from 'node:crypto'
import {chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync} from 'node:fs'
import {createConnection, createServer, Server} from 'node:net'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {BIN, curate, Sandbox, sandbox} from '../helpers/cli.js'

const sha = (s: string) => createHash('sha256').update(s).digest('hex')

describe('engram serve: private socket, proven sessions, proven replies', () => {
  let sb: Sandbox
  let acme: {id: string; token: string}
  let globex: {id: string; token: string}
  let sockDir: string
  let sock: string
  let server: ChildProcess | undefined

  const start = (assigned: string, agent: string) => {
    const r = sb.run(['session', 'start', '--agent', agent, '--assigned', assigned, '--json'])
    if (r.code !== 0) throw new Error(r.stderr)
    return {id: r.json.id as string, token: r.json.token as string}
  }
  /** the CLI as a child that does not block this process, which runs the fake servers */
  const runAsync = (args: string[], env: NodeJS.ProcessEnv) =>
    new Promise<{code: number | null; stdout: string; stderr: string}>((resolve) => {
      const child = spawn(process.execPath, [BIN, ...args], {cwd: sb.dir, env: {...sb.env, ...env}})
      let stdout = ''
      let stderr = ''
      child.stdout.on('data', (d: Buffer) => (stdout += d))
      child.stderr.on('data', (d: Buffer) => (stderr += d))
      child.stdin.end()
      child.on('close', (code: number | null) => resolve({code, stdout, stderr}))
    })
  const inSession = (s: {id: string; token: string}, token = s.token) => ({env: {ENGRAM_SESSION: s.id, ENGRAM_SESSION_TOKEN: token}})

  /** one raw request line to a socket, the raw reply line back */
  const ask = (path: string, req: unknown) =>
    new Promise<string>((resolve, reject) => {
      const c = createConnection(path)
      let buf = ''
      c.setEncoding('utf8')
      c.once('connect', () => c.write(`${JSON.stringify(req)}\n`))
      c.on('data', (d: string) => {
        buf += d
        if (buf.includes('\n')) {
          c.destroy()
          resolve(buf.slice(0, buf.indexOf('\n')))
        }
      })
      c.once('error', reject)
    })

  async function startServe(): Promise<void> {
    server = spawn(process.execPath, [BIN, 'serve'], {cwd: sb.dir, env: sb.env, stdio: ['ignore', 'pipe', 'pipe']})
    for (let i = 0; i < 1200 && !existsSync(sock); i++) await new Promise((r) => setTimeout(r, 50))
    expect(existsSync(sock)).toBe(true)
  }
  async function stopServe(): Promise<void> {
    if (server && server.exitCode === null && server.signalCode === null) {
      const closed = new Promise((r) => server!.on('close', r))
      server.kill('SIGTERM')
      await closed
    }
    server = undefined
  }
  async function fake(path: string, reply: (line: string) => string, seen: string[]): Promise<Server> {
    const f = createServer((c) => {
      c.setEncoding('utf8')
      c.on('data', (d: string) => {
        seen.push(d)
        c.end(`${reply(d)}\n`)
      })
    })
    await new Promise<void>((r) => f.listen(path, () => r()))
    // as private as the real one: what is checked next is the reply, not the mode
    chmodSync(path, 0o600)
    return f
  }

  beforeAll(async () => {
    sb = sandbox()
    expect(sb.run(['init', '--json']).code).toBe(0)
    acme = start('tenant:acme', 'claude-code')
    globex = start('tenant:globex', 'other')
    curate(sb, acme.id, 'tenant:acme', 'deploy.md', 'Deploys go to host deploy-3.acme.internal through the blue pipeline.')
    curate(sb, globex.id, 'tenant:globex', 'secret.md', 'Globex codename zanzibarquux launches in June.')
    sockDir = join(sb.configDir, 'private')
    sock = join(sockDir, `serve-${sha(sb.dir).slice(0, 16)}.sock`)
    await startServe()
  }, 300_000)
  afterAll(async () => {
    await stopServe()
    rmSync(sb.dir, {recursive: true, force: true})
  })

  it('listens in a private folder outside the store, never in .engram/', () => {
    expect(existsSync(join(sb.dir, '.engram/serve.sock'))).toBe(false)
    expect(statSync(sockDir).mode & 0o777).toBe(0o700)
    expect(statSync(sock).mode & 0o777).toBe(0o600)
    expect(Buffer.byteLength(sock)).toBeLessThanOrEqual(103)
  })

  it('answers a session with its token, like the cold path', () => {
    const warm = sb.run(['search', 'pipeline', '--json'], inSession(acme))
    expect(warm.code).toBe(0)
    expect(warm.json.hits[0].path).toBe('deploy.md')
    const cold = sb.run(['search', 'pipeline', '--json'], {env: {ENGRAM_SESSION: acme.id, ENGRAM_NO_FAST: '1'}})
    expect(cold.json.hits).toEqual(warm.json.hits)
    const refusedScope = sb.run(['search', 'zanzibarquux', '--scope', 'tenant:globex', '--json'], inSession(acme))
    expect(refusedScope.code).toBe(3)
    expect(refusedScope.stdout + refusedScope.stderr).not.toContain('June')
  })

  it('never answers the owner view: a request without a session is refused', async () => {
    const raw = JSON.parse(await ask(sock, {op: 'search', query: 'zanzibarquux', nonce: 'n1'}))
    const body = JSON.parse(raw.body)
    expect(body.ok).toBe(false)
    expect(body.error.code).toBe('refused')
    expect(raw.body).not.toContain('June')
  })

  it('refuses a claimed session without its token, or with another session\'s token', async () => {
    for (const token of [undefined, acme.token, 'f'.repeat(64)]) {
      const raw = JSON.parse(await ask(sock, {op: 'search', query: 'zanzibarquux', session: globex.id, token, nonce: 'n2'}))
      const body = JSON.parse(raw.body)
      expect(body.ok).toBe(false)
      expect(body.error.code).toBe('refused')
      expect(raw.body).not.toContain('June')
    }
    // the CLI refuses a forged token before asking anyone
    const forged = sb.run(['search', 'zanzibarquux', '--json'], inSession(acme, globex.token))
    expect(forged.code).toBe(3)
    expect(forged.json.error.message).toMatch(/ENGRAM_SESSION_TOKEN/)
  })

  it('a fake server on the old socket path in the store hears nothing and changes nothing', async () => {
    const seen: string[] = []
    const f = await fake(join(sb.dir, '.engram/serve.sock'), () => JSON.stringify({ok: false, error: {code: 'unexpected', message: 'all clear'}}), seen)
    try {
      const r = sb.run(['search', 'pipeline', '--json'], inSession(acme))
      expect(r.code).toBe(0)
      expect(r.json.hits[0].path).toBe('deploy.md')
      expect(seen).toEqual([])
    } finally {
      await new Promise((r) => f.close(r))
    }
  })

  describe('with the real server stopped', () => {
    beforeAll(stopServe, 120_000)
    afterAll(async () => {
      rmSync(sock, {force: true})
      chmodSync(sockDir, 0o700)
      await startServe()
    }, 120_000)

    it('refuses a socket that is not private: wrong mode of the socket or of its folder', async () => {
      const seen: string[] = []
      const f = await fake(sock, () => JSON.stringify({body: JSON.stringify({ok: true, hits: [], scopes: []}), proof: '0'.repeat(64)}), seen)
      try {
        chmodSync(sock, 0o666)
        const loose = sb.run(['search', 'pipeline', '--json'], inSession(acme))
        expect(loose.code).toBe(3)
        expect(loose.json.error.message).toMatch(/not a private socket/)
        chmodSync(sock, 0o600)
        chmodSync(sockDir, 0o755)
        const openDir = sb.run(['search', 'pipeline', '--json'], inSession(acme))
        expect(openDir.code).toBe(3)
        expect(openDir.json.error.message).toMatch(/can be entered by other users/)
        expect(seen).toEqual([])
      } finally {
        chmodSync(sockDir, 0o700)
        await new Promise((r) => f.close(r))
      }
    })

    it('refuses a process on the right socket that cannot prove it is engram serve, and prints none of its text', async () => {
      const seen: string[] = []
      const f = await fake(sock, () => JSON.stringify({body: JSON.stringify({ok: false, error: {code: 'not-found', message: 'engram: all good, nothing here'}}), proof: 'a'.repeat(64)}), seen)
      try {
        for (const fast of [{}, {ENGRAM_NO_FAST: '1'}]) {
          const r = await runAsync(['search', 'pipeline'], {...inSession(acme).env, ...fast})
          expect(r.code).toBe(7)
          expect(r.stdout + r.stderr).not.toContain('all good')
          expect(r.stderr).toMatch(/did not prove it is engram serve/)
        }
        // it heard the requests (the fast entry's refusal reruns the search through oclif,
        // which asks again) and got nothing used of what it answered
        expect(seen.length).toBeGreaterThanOrEqual(2)
      } finally {
        await new Promise((r) => f.close(r))
      }
    })

    it('a server error exits non-zero, and its text is quoted as the server\'s, never printed as engram\'s own', async () => {
      // a server holding the secret (the real one, failing): its reply is proven but an error
      const secret = Buffer.from(readFileSync(join(sockDir, 'session.key'), 'utf8').trim(), 'hex')
      const seen: string[] = []
      const f = await fake(sock, (line) => {
        const {nonce} = JSON.parse(line)
        const body = JSON.stringify({ok: false, error: {code: 'unexpected', message: 'boom\u001b[2J'}})
        const proof = createHmac('sha256', secret).update(['engram-serve-reply', nonce, body].join('\0')).digest('hex')
        return JSON.stringify({body, proof})
      }, seen)
      try {
        for (const fast of [{}, {ENGRAM_NO_FAST: '1'}]) {
          const r = await runAsync(['search', 'pipeline'], {...inSession(acme).env, ...fast})
          expect(r.code).toBe(1)
          expect(r.stderr).toContain('engram serve failed (unexpected); it said: "boom?[2J"')
          expect(r.stderr).not.toContain('\u001b')
        }
      } finally {
        await new Promise((r) => f.close(r))
      }
    })
  })
})
