/**
 * The warm path as the normal one for large stores: a session's search that finds no
 * server starts `engram serve` in the background (detached, the private socket folder),
 * later searches use it, and it exits after its idle timeout. Real CLI, real git, real
 * server process. "Large" is lowered to one memory here (ENGRAM_AUTOSERVE_DOCS).
 */
import {spawn} from 'node:child_process'
import {createHash} from 'node:crypto'
import {existsSync, rmSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {BIN, curate, Sandbox, sandbox} from '../helpers/cli.js'

const sha = (s: string) => createHash('sha256').update(s).digest('hex')
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe('engram search starts engram serve for a large store', () => {
  let sb: Sandbox
  let acme: {id: string; token: string}
  let sock: string
  const session = (extra: Record<string, string> = {}) => ({env: {ENGRAM_SESSION: acme.id, ENGRAM_SESSION_TOKEN: acme.token, ...extra}})
  const waitFor = async (cond: () => boolean, ms: number) => {
    for (let t = 0; t < ms && !cond(); t += 100) await sleep(100)
    return cond()
  }

  beforeAll(() => {
    sb = sandbox()
    expect(sb.run(['init', '--json']).code).toBe(0)
    const r = sb.run(['session', 'start', '--agent', 'claude-code', '--assigned', 'tenant:acme', '--json'])
    acme = {id: r.json.id, token: r.json.token}
    curate(sb, acme.id, 'tenant:acme', 'deploy.md', 'Deploys go to host deploy-3.acme.internal through the blue pipeline.')
    sock = join(sb.configDir, 'private', `serve-${sha(sb.dir).slice(0, 16)}.sock`)
  }, 300_000)
  afterAll(async () => {
    // a server left running stops at its idle timeout; wait for it so nothing outlives the test
    await waitFor(() => !existsSync(sock), 60_000)
    rmSync(sb.dir, {recursive: true, force: true})
  }, 120_000)

  it('does not start a server below the size, for the owner, or when turned off', async () => {
    expect(sb.run(['search', 'pipeline', '--json'], session()).json.hits).toHaveLength(1)
    expect(sb.run(['search', 'pipeline', '--json'], {env: {ENGRAM_AUTOSERVE_DOCS: '1'}}).json.hits).toHaveLength(1)
    expect(sb.run(['search', 'pipeline', '--json'], session({ENGRAM_AUTOSERVE_DOCS: '1', ENGRAM_NO_AUTOSERVE: '1'})).json.hits).toHaveLength(1)
    await sleep(3000)
    expect(existsSync(sock)).toBe(false)
  }, 120_000)

  it('starts one in the background, answers meanwhile, is used while up, and exits when idle', async () => {
    const env = {ENGRAM_AUTOSERVE_DOCS: '1', ENGRAM_AUTOSERVE_IDLE: '8'}
    const first = sb.run(['search', 'pipeline', '--json'], session(env))
    expect(first.code).toBe(0)
    expect(first.json.hits.map((h: {path: string}) => h.path)).toEqual(['deploy.md'])
    expect(await waitFor(() => existsSync(sock), 60_000)).toBe(true)
    // searches through it keep it alive past its idle timeout, with the answer of the cold path
    const upAt = Date.now()
    while (Date.now() - upAt < 14_000) {
      const r = sb.run(['search', 'pipeline', '--json'], session(env))
      expect(r.json.hits).toEqual(first.json.hits)
      expect(existsSync(sock)).toBe(true)
      await sleep(1000)
    }
    // then nobody asks: it stops and removes its socket
    expect(await waitFor(() => !existsSync(sock), 40_000)).toBe(true)
  }, 300_000)

  it('an explicit --idle-timeout stops a hand-started server too, with exit 0', async () => {
    const child = spawn(process.execPath, [BIN, 'serve', '--idle-timeout', '2'], {cwd: sb.dir, env: sb.env, stdio: 'ignore'})
    const code = await new Promise<number | null>((r) => child.on('close', r))
    expect(code).toBe(0)
    expect(existsSync(sock)).toBe(false)
  }, 120_000)
})
