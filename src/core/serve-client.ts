import {existsSync} from 'node:fs'

import type {ServedHit} from './search.js'
import type {Store} from './store.js'
import type {Neighbour} from './vote/index.js'

/** The client side of `engram serve` (server.ts): what a command needs to ask it, and nothing more. */
export const SOCKET = '.engram/serve.sock'

export interface SearchRequest {
  op: 'search'
  query: string
  scope?: string
  limit?: number
  /** the caller's session id; the server loads and checks it like any command would */
  session?: string
}

/** Curated memories close to a write's text (the semantic validator's evidence), for a session. */
export interface NeighboursRequest {
  op: 'neighbours'
  text: string
  limit: number
  session: string
}

export type Request = SearchRequest | NeighboursRequest

export type Failure = {ok: false; error: {code: string; message: string; nextStep?: string}}
export type SearchResponse = {ok: true; hits: ServedHit[]; scopes: string[]} | Failure
export type NeighboursResponse = {ok: true; neighbours: Neighbour[]} | Failure
export type Response = SearchResponse | NeighboursResponse

/**
 * Ask a running server, if there is one for this store. Returns undefined when there is
 * none (or it does not answer in time), so the caller falls back to loading shards itself.
 */
export function askServer(store: Store, req: SearchRequest, timeoutMs?: number): Promise<SearchResponse | undefined>
export function askServer(store: Store, req: NeighboursRequest, timeoutMs?: number): Promise<NeighboursResponse | undefined>
export async function askServer(store: Store, req: Request, timeoutMs = 2000): Promise<Response | undefined> {
  const path = store.abs(SOCKET)
  if (!existsSync(path)) return undefined
  // node:net only when a server may be there: most commands run without one
  const {createConnection} = await import('node:net')
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
