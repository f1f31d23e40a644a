/**
 * External validators: a command (e.g. a model-based classifier) that reads the write as
 * JSON on stdin and answers {verdict, confidence, reason} as JSON on stdout. Spawned
 * without a shell. Anything but a well-formed answer — a crash, a non-zero exit, a
 * timeout, bad JSON — is an abstention with the error recorded, never an accept.
 */
import {spawn} from 'node:child_process'

import type {ExternalValidatorConfig} from '../../store/config.js'
import type {FlagHit, Vote, WriteCandidate} from './types.js'
import {thirdParty} from './types.js'
import {clip} from '../../text/clip.js'

/** Answers are one small JSON object; anything larger is not one. */
const MAX_STDOUT = 64 * 1024
const MAX_REASON = 300

export interface ExternalPayload {
  kind: 'engram-vote-request/1'
  scope: string
  path: string
  operation: WriteCandidate['operation']
  title: string
  tags: string[]
  /** already redacted */
  body: string
  origin: string
  /** third-party text: an indirect origin, or a direct_chat claim the user's prompts do not back (types.ts thirdParty) */
  third_party: boolean
  flags: FlagHit[]
  session: {tainted: boolean; taint_reasons: string[]} | null
  redactions: string[]
}

export function externalPayload(c: WriteCandidate, flags: FlagHit[]): ExternalPayload {
  return {
    kind: 'engram-vote-request/1',
    scope: c.scope,
    path: c.path,
    operation: c.operation,
    title: c.title,
    tags: c.tags,
    body: c.body,
    origin: c.origin,
    third_party: thirdParty(c),
    flags,
    session: c.session ? {tainted: c.session.tainted, taint_reasons: c.session.taint_reasons} : null,
    redactions: Object.keys(c.redactions).filter((k) => c.redactions[k] > 0),
  }
}

const oneLine = (s: string, n = 160) => clip(s, n)

function parseAnswer(validator: string, stdout: string): Vote {
  const abstain = (why: string): Vote => ({validator, verdict: 'abstain', confidence: 0, reason: why})
  let answer: unknown
  try {
    answer = JSON.parse(stdout)
  } catch {
    return abstain(`bad JSON on stdout: ${JSON.stringify(oneLine(stdout, 80))}`)
  }
  if (!answer || typeof answer !== 'object' || Array.isArray(answer)) return abstain('answer is not a JSON object')
  const a = answer as Record<string, unknown>
  if (a.verdict !== 'accept' && a.verdict !== 'reject' && a.verdict !== 'abstain') {
    return abstain(`answer has no valid verdict (accept, reject or abstain)`)
  }
  if (typeof a.confidence !== 'number' || !Number.isFinite(a.confidence) || a.confidence < 0 || a.confidence > 1) {
    return abstain('answer has no confidence between 0 and 1')
  }
  const reason = typeof a.reason === 'string' ? oneLine(a.reason, MAX_REASON) : ''
  return {validator, verdict: a.verdict, confidence: a.confidence, reason: reason || '(no reason given)'}
}

export function runExternal(cfg: ExternalValidatorConfig, payload: ExternalPayload, cwd?: string): Promise<Vote> {
  const validator = `external:${cfg.name}`
  const abstain = (why: string): Vote => ({validator, verdict: 'abstain', confidence: 0, reason: why})
  return new Promise((resolve) => {
    let settled = false
    const done = (v: Vote) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve(v)
    }
    let child: ReturnType<typeof spawn>
    try {
      // its own process group, so that a timeout kills what it started too: a grandchild left
      // holding the pipes kept engram waiting for the validator's full run, past timeout_ms
      child = spawn(cfg.command, cfg.args, {cwd, shell: false, stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true, detached: process.platform !== 'win32'})
    } catch (error) {
      resolve(abstain(`could not start: ${oneLine(error instanceof Error ? error.message : String(error))}`))
      return
    }
    const killAll = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL')
      } catch {
        child.kill('SIGKILL')
      }
      child.stdout!.destroy()
      child.stderr!.destroy()
    }
    const timer = setTimeout(() => {
      killAll()
      done(abstain(`timed out after ${cfg.timeout_ms} ms (killed)`))
    }, cfg.timeout_ms)

    let stdout = ''
    let stderr = ''
    child.stdout!.setEncoding('utf8')
    child.stderr!.setEncoding('utf8')
    child.stdout!.on('data', (d: string) => {
      if (stdout.length + d.length > MAX_STDOUT) {
        killAll()
        done(abstain(`answer longer than ${MAX_STDOUT} bytes`))
        return
      }
      stdout += d
    })
    child.stderr!.on('data', (d: string) => {
      if (stderr.length < 4096) stderr += d
    })
    child.on('error', (error) => done(abstain(`could not run: ${oneLine(error.message)}`)))
    child.on('close', (code, signal) => {
      if (signal) return done(abstain(`killed by ${signal}${stderr ? `: ${oneLine(stderr)}` : ''}`))
      if (code !== 0) return done(abstain(`exited with code ${code}${stderr ? `: ${oneLine(stderr)}` : ''}`))
      done(parseAnswer(validator, stdout))
    })
    // A validator that exits without reading stdin closes the pipe: that is its answer's business, not an error here.
    child.stdin!.on('error', () => {})
    child.stdin!.end(JSON.stringify(payload))
  })
}
