import {lstatSync, readdirSync, readFileSync, unlinkSync} from 'node:fs'
import {basename, join} from 'node:path'

import {writeFileAtomic} from '../store/fsutil.js'
import {mac, privateDir, privateSubfolder, sameMac, sessionSecret, storeKey} from '../store/private.js'
import {validateSessionId} from './sessions.js'

/**
 * Which engram session a host *process* is bound to now, so that a server the host starts
 * (`engram mcp`) acts as the session the host's hooks bound (STANDARD.md R26).
 *
 * Why by process: an MCP server cannot learn its host session from the protocol (the
 * initialize request carries only the client's name and version), and Claude Code's
 * `CLAUDE_CODE_SESSION_ID` is documented for the Bash tool and hook subprocesses only
 * (Claude Code's environment variables reference: "Set automatically in Bash and PowerShell
 * tool subprocesses and in hook command subprocesses … Updated on /clear"); the same
 * reference says stdio MCP servers "are long-lived and outlive the session that spawned
 * them", so a value given once at spawn names the wrong session after a /clear, and plugin
 * MCP servers are not given it at all. What the hook and the server do share is their host:
 * both are started by the same Claude Code process. So the hook (`engram hook
 * session-start`) records here which session the host process with PID P is bound to now,
 * and the server looks its own host process up at every tool call.
 *
 * A record names the process by PID *and* its start time (field 22 of /proc/P/stat), so a
 * PID the kernel reuses for another process never matches; it lives in engram's private
 * folder (outside the store, hidden from a confined agent) and carries a MAC made with the
 * session secret over the host, the store, the process and the session: a record edited,
 * or copied to another process's name, counts as none.
 */

/** The host name Claude Code's hooks (src/agent/claude-code) bind and join under; the MCP server looks joins up under it. */
export const CLAUDE_CODE_HOST = 'claude-code'

/** A process, named so that a reused PID is another name. */
export interface HostProcess {
  pid: number
  /** clock ticks after boot at which it started (/proc/<pid>/stat field 22) */
  start: string
}

export interface ProcessJoin {
  host: string
  store: string
  pid: number
  start: string
  session: string
  /** the host's own session id (Claude Code's session_id), to check against the committed binding */
  host_session: string
  updated: string
  mac: string
}

const HOST_RE = /^[a-z0-9][a-z0-9-]{0,31}$/

/** The wrappers a host starts its commands through (a hook command runs in a shell): skipped to reach the host. */
const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'ash', 'busybox', 'fish', 'env'])

/** pid, command name, parent pid and start time of a process, from /proc (Linux); undefined elsewhere or when gone. */
export function procStat(pid: number): {pid: number; comm: string; ppid: number; start: string} | undefined {
  let text: string
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return undefined
  }
  // "pid (comm) state ppid …": comm may hold spaces and parentheses, so split after the last ')'
  const open = text.indexOf('(')
  const close = text.lastIndexOf(')')
  if (open < 0 || close < open) return undefined
  const rest = text.slice(close + 2).split(' ')
  // rest[0] is field 3 (state): field n is rest[n - 3]
  const ppid = Number(rest[1])
  const start = rest[19]
  if (!Number.isInteger(ppid) || !/^\d+$/.test(start ?? '')) return undefined
  return {pid, comm: text.slice(open + 1, close), ppid, start}
}

/**
 * The host process of this one: the nearest ancestor that is not a shell. Claude Code runs
 * a hook command through a shell and may start an MCP server directly; both reach the same
 * Claude Code process this way. None (undefined) without /proc, or when the chain reaches
 * PID 1 (the process was orphaned, or started by init).
 */
export function hostProcess(self = process.pid): HostProcess | undefined {
  let me = procStat(self)
  for (let hops = 0; me && hops < 16; hops++) {
    if (me.ppid <= 1) return undefined
    const parent = procStat(me.ppid)
    if (!parent) return undefined
    if (!SHELLS.has(basename(parent.comm))) return {pid: parent.pid, start: parent.start}
    me = parent
  }
  return undefined
}

/** Whether the process is still the one named (same PID, same start time). */
export function processAlive(p: HostProcess): boolean {
  return procStat(p.pid)?.start === p.start
}

const joinsDir = (host: string, storeRoot: string) => join(privateDir(), 'joins', host, storeKey(storeRoot))
const joinFile = (host: string, storeRoot: string, p: HostProcess) => join(joinsDir(host, storeRoot), `${p.pid}-${p.start}.json`)

const joinMac = (secret: Buffer, j: Omit<ProcessJoin, 'mac'>) =>
  mac(secret, 'engram-process-join', j.host, j.store, String(j.pid), j.start, j.session, j.host_session, j.updated)

/**
 * Record that host process `p` is bound to `session` of the store at `storeRoot` now (the
 * hook, at every session start). The records of host processes that have exited are
 * removed on the way.
 */
export function recordProcessJoin(host: string, storeRoot: string, p: HostProcess, session: string, hostSession: string): ProcessJoin {
  if (!HOST_RE.test(host)) throw new Error(`bad host name ${host}`)
  validateSessionId(session)
  const secret = sessionSecret(true)
  const base = {host, store: storeRoot, pid: p.pid, start: p.start, session, host_session: hostSession, updated: new Date().toISOString()}
  const j: ProcessJoin = {...base, mac: joinMac(secret, base)}
  privateSubfolder('joins', host, storeKey(storeRoot))
  writeFileAtomic(joinFile(host, storeRoot, p), `${JSON.stringify(j, null, 2)}\n`, 0o600, {fsync: true})
  pruneJoins(host, storeRoot)
  return j
}

/** Drop the record of host process `p` (a session start that could not record its session must not leave the one before in force). */
export function forgetProcessJoin(host: string, storeRoot: string, p: HostProcess): void {
  if (!HOST_RE.test(host)) return
  try {
    unlinkSync(joinFile(host, storeRoot, p))
  } catch {
    // none there
  }
}

function pruneJoins(host: string, storeRoot: string): void {
  try {
    for (const name of readdirSync(joinsDir(host, storeRoot))) {
      const m = /^(\d+)-(\d+)\.json$/.exec(name)
      if (m && !processAlive({pid: Number(m[1]), start: m[2]})) unlinkSync(join(joinsDir(host, storeRoot), name))
    }
  } catch {
    // best effort: a stale record names a process that no longer exists, so it never matches
  }
}

export interface JoinLookup {
  join?: ProcessJoin
  problem?: string
}

/** The verified record of host process `p` for this store, or none (with why, when a file was there but does not verify). */
export function readProcessJoin(host: string, storeRoot: string, p: HostProcess): JoinLookup {
  if (!HOST_RE.test(host)) throw new Error(`bad host name ${host}`)
  const file = joinFile(host, storeRoot, p)
  let text: string
  try {
    if (!lstatSync(file).isFile()) return {problem: `the join record of process ${p.pid} is not a file`}
    text = readFileSync(file, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    return code === 'ENOENT' || code === 'ENOTDIR' ? {} : {problem: `the join record of process ${p.pid} cannot be read`}
  }
  let r: Record<string, unknown>
  try {
    const parsed: unknown = JSON.parse(text)
    r = parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {}
  } catch {
    return {problem: `the join record of process ${p.pid} is not valid JSON`}
  }
  const {session, host_session: hostSession, updated, mac: proof} = r
  if (typeof session !== 'string' || typeof hostSession !== 'string' || typeof updated !== 'string') return {problem: `the join record of process ${p.pid} is not a join record`}
  // what the MAC covers is taken from where the record is found, never from the record itself
  const j = {host, store: storeRoot, pid: p.pid, start: p.start, session, host_session: hostSession, updated}
  let secret: Buffer
  try {
    secret = sessionSecret(false)
  } catch {
    return {problem: 'no session secret on this machine to check the join record with'}
  }
  if (r.host !== host || r.store !== storeRoot || r.pid !== p.pid || r.start !== p.start || !sameMac(proof, joinMac(secret, j))) {
    return {problem: `the join record of process ${p.pid} does not carry engram's proof (edited, or copied from another process)`}
  }
  try {
    validateSessionId(session)
  } catch {
    return {problem: `the join record of process ${p.pid} names no session`}
  }
  return {join: {...j, mac: proof as string}}
}
