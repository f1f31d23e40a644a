import {chmodSync, existsSync, unlinkSync} from 'node:fs'
import {createConnection, createServer, Server, Socket} from 'node:net'

import {EngramError, isEngramError, refused} from '../store/errors.js'
import type {WarmEngine} from '../index/index.js'
import {readHead} from '../index/head.js'
import {searchMemories} from './search.js'
import {WarmServing} from '../trust/serving.js'
import {ensurePrivateFolder, sameMac, sessionSecret, sessionToken, socketPath} from '../store/private.js'
import {loadSession, sessionFile, SessionRecord, validateSessionId} from '../session/sessions.js'
import {pendingTaint} from '../session/pending.js'
import type {Store} from '../store/store.js'
import {replyProof, Request, Response} from './serve-client.js'

export {askServer} from './serve-client.js'
export type {Request, SearchRequest} from './serve-client.js'

/**
 * What a warm server keeps between requests, every piece keyed on the commit HEAD points
 * at (read from the repository's files, no git spawn): the engine's scope trees, the
 * serving gate (keyring, manifests, decisions; also keyed on the key files) and loaded
 * session records (also keyed on the record in the work tree). A new commit changes HEAD
 * and so invalidates them all. `engram mcp` keeps one for its session too (src/mcp).
 */
export class WarmState {
  readonly serving: WarmServing
  private readonly sessions = new Map<string, {head: string; work: string | undefined; record: SessionRecord}>()

  constructor(
    readonly store: Store,
    readonly engine: WarmEngine,
    private readonly secret: Buffer,
  ) {
    this.serving = new WarmServing(store)
  }

  /** The session a request proves with its token; no token, or another session's, is refused. */
  async proven(req: {session?: unknown; token?: unknown}, head: string | undefined): Promise<SessionRecord> {
    if (typeof req.session !== 'string' || req.session === '') {
      throw refused('engram serve answers agent sessions only; the owner searches without it.', 'search outside the server, or pass the session and its token')
    }
    const id = validateSessionId(req.session)
    if (!sameMac(req.token, sessionToken(this.secret, id))) {
      throw refused(`The request does not carry the token of session ${id}.`, 'set ENGRAM_SESSION_TOKEN to the token `engram session start` printed')
    }
    return this.session(id, head)
  }

  /** loadSession, reused while HEAD and the work-tree record are unchanged (its committed versions depend on HEAD only). */
  async session(id: string, head: string | undefined): Promise<SessionRecord> {
    validateSessionId(id)
    if (head === undefined) return loadSession(this.store, id)
    // read before loading: a change in between only makes the entry look stale
    // a taint waiting outside the store (pending.ts) counts at once, though neither HEAD nor the record moved
    const work = `${this.store.readText(sessionFile(id)) ?? ''}\0${JSON.stringify(pendingTaint(this.store.root, id) ?? null)}`
    const hit = this.sessions.get(id)
    if (hit && hit.head === head && hit.work === work) return hit.record
    const record = await loadSession(this.store, id)
    if (this.sessions.size >= 1000) this.sessions.clear()
    this.sessions.set(id, {head, work, record})
    return record
  }
}

/**
 * The warm path (README "Serving"): a long-lived process that keeps each scope's index loaded and
 * answers searches on a unix socket in engram's private folder outside the store (folder
 * 0700, socket 0600; private.ts), never in the store the agent can write. It answers
 * sessions only, never the owner's view, and a request proves its session with the token
 * `engram session start` minted; each session is then loaded and checked exactly as a
 * command would. Every reply is MACed over the request's nonce, so a client can tell this
 * server from any other process.
 */
export async function startServer(store: Store, opts: {onLog?: (m: string) => void; idleMs?: number} = {}): Promise<Server> {
  const secret = sessionSecret(true)
  const {dir, path} = socketPath(store.root)
  ensurePrivateFolder(dir, true)
  const {WarmEngine} = await import('../index/index.js')
  const engine = new WarmEngine(store)
  const warm = new WarmState(store, engine, secret)
  if (existsSync(path) && (await pingSocket(path))) throw new EngramError('conflict', `A server is already running for this store (${path}).`, {nextStep: 'stop it first'})
  // loaded before listening: while this runs, searches answer in-process, then all from memory
  await engine.preload().catch(() => {})
  await warmUp(warm).catch(() => {})
  if (existsSync(path)) {
    if (await pingSocket(path)) throw new EngramError('conflict', `A server is already running for this store (${path}).`, {nextStep: 'stop it first'})
    unlinkSync(path) // left behind by a killed server
  }
  let queue = Promise.resolve()
  let lastUsed = Date.now()
  let busy = 0
  const server = createServer((socket: Socket) => {
    lastUsed = Date.now()
    let buf = ''
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => {
      buf += chunk
      if (buf.length > 1_000_000) return socket.destroy()
      let nl
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl)
        buf = buf.slice(nl + 1)
        // one request at a time: the engine's indexes are shared state
        busy++
        queue = queue.then(() => answer(warm, line)).then(({nonce, response}) => {
          const body = JSON.stringify(response)
          socket.write(`${JSON.stringify({body, proof: replyProof(secret, nonce, body)})}\n`)
        }).finally(() => {
          busy--
          lastUsed = Date.now()
        })
      }
    })
    socket.on('error', () => {})
  })
  const old = process.umask(0o177)
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(path, () => resolve())
    })
  } finally {
    process.umask(old)
  }
  chmodSync(path, 0o600)
  const cleanup = () => {
    try {
      unlinkSync(path)
    } catch {
      // gone
    }
  }
  // like eslint_d and tsserver: a server started for a search goes away when nobody asks
  const idleMs = opts.idleMs ?? 0
  const idle = idleMs > 0
    ? setInterval(() => {
      if (busy === 0 && Date.now() - lastUsed >= idleMs) {
        opts.onLog?.(`idle for ${Math.round(idleMs / 1000)} s; stopping`)
        server.close()
      }
    }, Math.max(50, Math.min(idleMs / 4, 30_000)))
    : undefined
  idle?.unref()
  server.on('close', () => {
    if (idle) clearInterval(idle)
    cleanup()
    engine.close()
  })
  opts.onLog?.(`serving ${store.root} on ${path}`)
  return server
}

async function answer(warm: WarmState, line: string): Promise<{nonce: string; response: Response}> {
  let nonce = ''
  try {
    let req: Request & {nonce?: unknown}
    try {
      req = JSON.parse(line)
    } catch {
      throw new EngramError('bad-input', 'The request is not JSON.')
    }
    if (typeof req?.nonce === 'string') nonce = req.nonce.slice(0, 200)
    const store = warm.store
    // HEAD before anything is read: whatever is read after it is at least as new as the key
    const head = await readHead(store.top)
    if (req?.op === 'search' && typeof req.query === 'string') {
      const session = await warm.proven(req, head)
      const gate = await warm.serving.open(head)
      const r = await searchMemories(store, session, req.query, {scope: req.scope, limit: req.limit, engine: warm.engine, gate, head})
      return {nonce, response: {ok: true, hits: r.hits, scopes: r.scopes}}
    }
    throw new EngramError('bad-input', 'Unknown request.')
  } catch (error) {
    if (isEngramError(error)) return {nonce, response: {ok: false, error: {code: error.code, message: error.message, nextStep: error.nextStep}}}
    return {nonce, response: {ok: false, error: {code: 'unexpected', message: (error as Error).message}}}
  }
}

/**
 * A fresh server's first requests run code V8 has not optimised yet: over its first few
 * hundred requests a 10k search costs about 0.3 ms more (docs/architecture.md, "Measured
 * costs"). So before it listens it runs up to WARM_UP_MS of searches of its own indexes'
 * words, as the owner, through the same serving gate: it answers nobody and changes no memory
 * (it may write the derived caches any first search writes: index deltas, the gate's caches).
 */
const WARM_UP_MS = 250

async function warmUp(warm: WarmState): Promise<void> {
  const words = warm.engine.sampleTerms(64)
  if (words.length === 0) return
  const t0 = performance.now()
  const head = await readHead(warm.store.top)
  for (let i = 0; i < 400 && performance.now() - t0 < WARM_UP_MS; i++) {
    const a = words[i % words.length]
    const b = words[(i * 7 + 3) % words.length]
    const query = a.scope === b.scope ? `${a.term} ${b.term}` : a.term
    try {
      const gate = await warm.serving.open(head)
      await searchMemories(warm.store, undefined, query, {scope: a.scope, limit: 10, engine: warm.engine, gate, head})
    } catch {
      // a warm-up query that fails is no reason not to serve
    }
  }
}

function pingSocket(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createConnection(path)
    s.once('connect', () => {
      s.destroy()
      resolve(true)
    })
    s.once('error', () => resolve(false))
  })
}

