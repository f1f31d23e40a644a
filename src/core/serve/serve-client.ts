import {randomBytes} from 'node:crypto'
import {lstatSync} from 'node:fs'

import {EngramError, EXIT_CODES, refused, verificationFailed, type ErrorCode} from '../store/errors.js'
import {ensurePrivateFolder, mac, sameMac, sessionSecret, socketPath} from '../store/private.js'
import {printable} from '../store/scope.js'
import type {ServedHit} from './search.js'
import type {Store} from '../store/store.js'

/**
 * The client side of `engram serve` (server.ts): what a command needs to ask it, and
 * nothing more. The socket lives in engram's private folder outside the store (private.ts),
 * every request carries the session's token, and every answer is MACed over the request's
 * nonce with the secret there: a process that is not engram serve can neither listen where
 * the client looks nor answer in its name.
 */
export interface SearchRequest {
  op: 'search'
  query: string
  scope?: string
  limit?: number
  /** the caller's session id; the server loads and checks it like any command would */
  session: string
  /** ENGRAM_SESSION_TOKEN: proof of the session, which only `engram session start` can mint */
  token: string
}

export type Request = SearchRequest

export type Failure = {ok: false; error: {code: string; message: string; nextStep?: string}}
export type SearchResponse = {ok: true; hits: ServedHit[]; scopes: string[]} | Failure
export type Response = SearchResponse

/** A reply line: the response as JSON text, and the server's MAC of it bound to the request's nonce. */
export const replyProof = (secret: Buffer, nonce: string, body: string) => mac(secret, 'engram-serve-reply', nonce, body)

const uid = () => (typeof process.getuid === 'function' ? process.getuid() : -1)

/**
 * The socket to ask, or undefined when no server is listening. A socket (or its folder)
 * that is not this user's private one is refused rather than skipped: it is somebody
 * else's server, and saying so is the point.
 */
function serverSocket(store: Store): string | undefined {
  const {dir, path} = socketPath(store.root)
  let st
  try {
    st = lstatSync(path)
  } catch {
    return undefined
  }
  ensurePrivateFolder(dir, false)
  if (st.isSymbolicLink() || !st.isSocket() || (uid() >= 0 && st.uid !== uid()) || (st.mode & 0o077) !== 0) {
    throw refused(`The server socket ${path} is not a private socket of this user; engram will not talk to it.`, 'stop whatever made it and remove it; `engram serve` makes its own')
  }
  return path
}

/**
 * Ask a running server, if there is one for this store. Returns undefined when there is
 * none (or it does not answer in time), so the caller falls back to loading the index itself.
 * Throws when the answer is not the real server's.
 */
export function askServer(store: Store, req: SearchRequest, timeoutMs?: number): Promise<SearchResponse | undefined>
export async function askServer(store: Store, req: Request, timeoutMs = 2000): Promise<Response | undefined> {
  const path = serverSocket(store)
  if (!path) return undefined
  const secret = sessionSecret(false)
  const nonce = randomBytes(16).toString('hex')
  // node:net only when a server may be there: most commands run without one
  const {createConnection} = await import('node:net')
  const line = await new Promise<string | undefined>((resolve) => {
    const s = createConnection(path)
    let buf = ''
    const done = (r: string | undefined) => {
      clearTimeout(timer)
      s.destroy()
      resolve(r)
    }
    const timer = setTimeout(() => done(undefined), timeoutMs)
    s.setEncoding('utf8')
    s.once('connect', () => s.write(`${JSON.stringify({...req, nonce})}\n`))
    s.on('data', (d: string) => {
      buf += d
      if (buf.length > 50_000_000) return done('')
      const nl = buf.indexOf('\n')
      if (nl >= 0) done(buf.slice(0, nl))
    })
    s.once('error', () => done(undefined))
  })
  if (line === undefined) return undefined
  let reply: {body?: unknown; proof?: unknown}
  try {
    reply = JSON.parse(line)
  } catch {
    reply = {}
  }
  if (typeof reply?.body !== 'string' || !sameMac(reply.proof, replyProof(secret, nonce, reply.body))) {
    throw verificationFailed(`The process on the server socket ${path} did not prove it is engram serve; its answer was not used.`, 'stop it; start the real server with `engram serve`')
  }
  return JSON.parse(reply.body) as Response
}

/**
 * A server's refusal as this command's error: a fixed message naming the code, the
 * server's own words quoted as data. A code engram does not have is not an answer.
 */
export function serverFailure(f: Failure): Error {
  const code = f.error?.code
  const said = JSON.stringify(printable(String(f.error?.message ?? ''), 300))
  if (typeof code === 'string' && code in EXIT_CODES) {
    return new EngramError(code as ErrorCode, `engram serve refused the request (${code}); it said: ${said}`, {nextStep: 'run the search again; stop `engram serve` to search without it'})
  }
  return new Error(`engram serve failed (${printable(String(code), 40)}); it said: ${said}`)
}

/** Memories (in the indexes of the scopes searched) from which a search starts the server in the background. */
export const AUTOSERVE_DOCS = 2000
/** A server started by a search stops after this long without a request. */
export const AUTOSERVE_IDLE_SECONDS = 900

/**
 * Start `engram serve` for this store in the background, detached, when a search found
 * none and the store is large (loading its indexes is then most of a search): later
 * searches of the session ask it, and it exits after AUTOSERVE_IDLE_SECONDS without a
 * request, as eslint_d and tsserver do. It runs as the owner's `engram serve` (the
 * session's variables are not passed on: serve refuses inside a session); it answers only
 * sessions that prove themselves with their token, and its replies are MACed, so starting
 * it gives a session nothing it could not already do. Only from the CLI (`bin` is the
 * running bin/run.js). ENGRAM_NO_AUTOSERVE=1 turns this off; ENGRAM_AUTOSERVE_DOCS sets
 * the size and ENGRAM_AUTOSERVE_IDLE the idle seconds. Never throws: a search does not depend on it.
 */
export async function startServerInBackground(store: Store, docs: number, bin: string | undefined): Promise<boolean> {
  try {
    if (process.env.ENGRAM_NO_AUTOSERVE || !bin || !/[\\/]bin[\\/]run\.js$/.test(bin)) return false
    const env = process.env.ENGRAM_AUTOSERVE_DOCS
    const threshold = env !== undefined && /^[0-9]{1,9}$/.test(env) ? Number(env) : AUTOSERVE_DOCS
    if (docs < threshold) return false
    const idleEnv = process.env.ENGRAM_AUTOSERVE_IDLE
    const idle = idleEnv !== undefined && /^[1-9][0-9]{0,4}$/.test(idleEnv) ? Number(idleEnv) : AUTOSERVE_IDLE_SECONDS
    const {spawn} = await import('node:child_process')
    const childEnv: NodeJS.ProcessEnv = {...process.env}
    delete childEnv.ENGRAM_SESSION
    delete childEnv.ENGRAM_SESSION_TOKEN
    const child = spawn(process.execPath, [bin, 'serve', '--base', store.root, '--idle-timeout', String(idle)], {
      cwd: store.root,
      env: childEnv,
      detached: true,
      stdio: 'ignore',
    })
    child.on('error', () => {})
    child.unref()
    return true
  } catch {
    return false
  }
}
