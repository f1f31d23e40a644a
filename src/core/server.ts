import {chmodSync, existsSync, unlinkSync} from 'node:fs'
import {createConnection, createServer, Server, Socket} from 'node:net'

import {EngramError, isEngramError} from './errors.js'
import {ServedHit, searchMemories} from './search.js'
import {loadSession} from './sessions.js'
import type {Store} from './store.js'

export const SOCKET = '.engram/serve.sock'

export interface SearchRequest {
  op: 'search'
  query: string
  scope?: string
  limit?: number
  /** the caller's session id; the server loads and checks it like any command would */
  session?: string
}

type Response = {ok: true; hits: ServedHit[]; scopes: string[]} | {ok: false; error: {code: string; message: string; nextStep?: string}}

/**
 * The warm path (DESIGN.md §6): a long-lived process that keeps the shards loaded and
 * answers searches on a Unix socket inside `.engram/` (mode 0600: only the store's owner
 * can connect). Each request names its session, which is loaded and checked exactly as a
 * command would: a session can only search scopes it may read.
 */
export async function startServer(store: Store, opts: {onLog?: (m: string) => void} = {}): Promise<Server> {
  const {WarmEngine} = await import('./index/index.js')
  const engine = new WarmEngine(store)
  const path = store.abs(SOCKET)
  if (existsSync(path)) {
    if (await pingSocket(path)) throw new EngramError('conflict', `A server is already running for this store (${path}).`, {nextStep: 'stop it first'})
    unlinkSync(path) // left behind by a killed server
  }
  let queue = Promise.resolve()
  const server = createServer((socket: Socket) => {
    let buf = ''
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => {
      buf += chunk
      if (buf.length > 1_000_000) return socket.destroy()
      let nl
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl)
        buf = buf.slice(nl + 1)
        // one request at a time: the engine's shards are shared state
        queue = queue.then(() => answer(store, engine, line)).then((r) => {
          socket.write(`${JSON.stringify(r)}\n`)
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
  server.on('close', () => {
    cleanup()
    engine.close()
  })
  opts.onLog?.(`serving ${store.root} on ${path}`)
  return server
}

async function answer(store: Store, engine: {search: any}, line: string): Promise<Response> {
  try {
    let req: SearchRequest
    try {
      req = JSON.parse(line)
    } catch {
      throw new EngramError('bad-input', 'The request is not JSON.')
    }
    if (req?.op !== 'search' || typeof req.query !== 'string') throw new EngramError('bad-input', 'Unknown request.')
    const session = req.session ? await loadSession(store, req.session) : undefined
    const r = await searchMemories(store, session, req.query, {scope: req.scope, limit: req.limit, engine})
    return {ok: true, hits: r.hits, scopes: r.scopes}
  } catch (error) {
    if (isEngramError(error)) return {ok: false, error: {code: error.code, message: error.message, nextStep: error.nextStep}}
    return {ok: false, error: {code: 'unexpected', message: (error as Error).message}}
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

/**
 * Ask a running server, if there is one for this store. Returns undefined when there is
 * none (or it does not answer in time), so the caller falls back to loading shards itself.
 */
export function askServer(store: Store, req: SearchRequest, timeoutMs = 2000): Promise<Response | undefined> {
  const path = store.abs(SOCKET)
  if (!existsSync(path)) return Promise.resolve(undefined)
  return new Promise((resolve) => {
    const s = createConnection(path)
    let buf = ''
    const done = (r: Response | undefined) => {
      clearTimeout(timer)
      s.destroy()
      resolve(r)
    }
    const timer = setTimeout(() => done(undefined), timeoutMs)
    s.setEncoding('utf8')
    s.once('connect', () => s.write(`${JSON.stringify(req)}\n`))
    s.on('data', (d: string) => {
      buf += d
      const nl = buf.indexOf('\n')
      if (nl >= 0) {
        try {
          done(JSON.parse(buf.slice(0, nl)))
        } catch {
          done(undefined)
        }
      }
    })
    s.once('error', () => done(undefined))
  })
}
