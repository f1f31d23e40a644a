/**
 * The model engine (`engram dream --llm-command CMD`): the prompt in
 * templates/dreaming/prompt.md and the period's evidence as JSON go to the command's
 * stdin; a JSON list of proposals is expected on its stdout. The answer is data, checked
 * like any other input: against a schema, each proposal against the scope, the policy and
 * the evidence it names. Evidence is named by id and mapped back to what was seen, so a
 * model cannot invent evidence or drop its taint. A command that hangs, fails or answers
 * garbage is reported and nothing is written.
 */
import {spawn} from 'node:child_process'
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {z} from 'zod'

import type {Evidence} from '../review/proposal.js'
import {EngramError, badInput} from '../store/errors.js'
import {packageRoot} from '../store/package-root.js'
import {validateMemoryPath} from '../store/paths.js'
import {printable} from '../store/scope.js'
import {clipRedacted, redactText} from '../write/redact/index.js'
import {DreamKind, PlannedDream, fingerprint} from './engine.js'
import type {DreamInputs} from './dream.js'

const promptFile = (): string => join(packageRoot(), 'templates', 'dreaming', 'prompt.md')
/** Observations sent at most (newest kept), and characters of each. */
const MAX_OBSERVATIONS = 2000
const MAX_TEXT = 1000
const MAX_OUTPUT = 4 * 1024 * 1024

const Proposal = z.object({
  kind: z.enum(['promote', 'merge', 'contradiction', 'retire']),
  scope: z.string().optional(),
  path: z.string().min(1).max(255),
  title: z.string().max(200).optional(),
  body: z.string().max(20_000).optional(),
  removes: z.array(z.string().max(255)).max(20).optional(),
  evidence: z.array(z.string().max(300)).max(50),
  reason: z.string().max(1000).optional(),
}).strict()
const Answer = z.array(z.unknown()).max(200)

export interface ModelPlan {
  planned: PlannedDream[]
  /** proposals of the answer that were refused, each with why */
  rejected: {index: number; reason: string}[]
}

/** The document the command reads after the prompt: redacted, bounded, evidence by id. */
export function modelDocument(inputs: DreamInputs, extra: {kind: string; pattern: string}[]) {
  const observations = inputs.observations.slice(-MAX_OBSERVATIONS).map((o, i) => ({
    id: `e${i + 1}`, session: o.session, timestamp: o.timestamp, source: o.source, tainted: o.tainted, text: clipRedacted(o.text, MAX_TEXT, extra),
  }))
  const curated = inputs.curated.map((c) => ({path: c.path, title: c.title, body: clipRedacted(c.body, 4000, extra), created: c.created, ...(c.expires ? {expires: c.expires} : {})}))
  return {scope: inputs.scope, since: inputs.since, curated, observations}
}

/** Run the command with the prompt and document on stdin; its stdout, or a clear error. */
export function runModel(command: string, input: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', command], {stdio: ['pipe', 'pipe', 'pipe'], detached: true, env: {...process.env, ENGRAM_SESSION: undefined, ENGRAM_SESSION_TOKEN: undefined}})
    let out = ''
    let err = ''
    let done = false
    const finish = (e: Error | null, v?: string) => {
      if (done) return
      done = true
      clearTimeout(timer)
      try {
        process.kill(-child.pid!, 'SIGKILL')
      } catch {
        // already gone
      }
      if (e) reject(e)
      else resolve(v!)
    }
    const fail = (msg: string) => finish(new EngramError('refused', `The model command ${msg}; nothing was proposed.`, {nextStep: 'check the command with a small input (`engram dream --llm-command … --dry-run`)'}))
    const timer = setTimeout(() => fail(`did not answer within ${Math.round(timeoutMs / 1000)} s (--llm-timeout)`), timeoutMs)
    child.stdout.setEncoding('utf8')
    child.stderr.setEncoding('utf8')
    child.stdout.on('data', (d: string) => {
      out += d
      if (out.length > MAX_OUTPUT) fail(`answered more than ${MAX_OUTPUT / 1024 / 1024} MiB`)
    })
    child.stderr.on('data', (d: string) => {
      if (err.length < 4000) err += d
    })
    child.on('error', (e) => fail(`could not be started (${e.message})`))
    child.on('close', (code, signal) => {
      if (code === 0) return finish(null, out)
      const why = clipRedacted(err.trim().split('\n')[0] ?? '', 200)
      fail(`${signal ? `was killed (${signal})` : `exited ${code}`}${why ? `: ${why}` : ''}`)
    })
    child.stdin.on('error', () => {
      // a command that does not read its input: its answer still counts
    })
    child.stdin.end(input)
  })
}

/** The list of proposals in an answer: JSON, a list, or `{proposals: [...]}`, or a `claude -p --output-format json` envelope around one. */
export function parseAnswer(stdout: string): unknown[] {
  const garbage = (why: string) => new EngramError('refused', `The model command's answer is not a JSON list of proposals (${why}); nothing was proposed.`, {nextStep: 'the prompt asks for JSON only; see templates/dreaming/prompt.md'})
  const json = (text: string): unknown => {
    const t = text.trim().replace(/^```(?:json)?\s*\n([\s\S]*?)\n```$/, '$1')
    try {
      return JSON.parse(t)
    } catch {
      throw garbage('not JSON')
    }
  }
  let v = json(stdout)
  if (v && typeof v === 'object' && !Array.isArray(v) && typeof (v as {result?: unknown}).result === 'string') v = json((v as {result: string}).result)
  if (v && typeof v === 'object' && !Array.isArray(v) && Array.isArray((v as {proposals?: unknown}).proposals)) v = (v as {proposals: unknown[]}).proposals
  const r = Answer.safeParse(v)
  if (!r.success) throw garbage(Array.isArray(v) ? 'more than 200 proposals' : 'not a list')
  return r.data
}

/**
 * Each proposal of the answer checked: its shape, its scope (the one dreamed, never org
 * unless allowed), its paths, and its evidence (ids of the document only; at least one).
 * Taint comes from the evidence named, never from the answer.
 */
export function checkProposals(answer: unknown[], inputs: DreamInputs, opts: {allowOrg: boolean; extra: {kind: string; pattern: string}[]}): ModelPlan {
  const doc = modelDocument(inputs, opts.extra)
  const byId = new Map(doc.observations.map((o) => [o.id, o]))
  const curated = new Map(inputs.curated.map((c) => [c.path, c]))
  const planned: PlannedDream[] = []
  const rejected: ModelPlan['rejected'] = []
  answer.forEach((raw, index) => {
    const refuse = (reason: string) => rejected.push({index, reason: clipRedacted(reason, 300, opts.extra)})
    const parsed = Proposal.safeParse(raw)
    if (!parsed.success) return refuse(`malformed: ${parsed.error.issues.slice(0, 3).map((i) => `${i.path.join('.') || 'proposal'}: ${i.message}`).join('; ')}`)
    const p = parsed.data
    if (p.scope !== undefined && p.scope !== inputs.scope) {
      return refuse(p.scope === 'org' ? 'for org, which the dream job may not propose to unless dream.allow_org is set' : `for scope ${printable(p.scope, 60)}, not ${inputs.scope} (out of scope)`)
    }
    if (inputs.scope === 'org' && !opts.allowOrg) return refuse('for org, which the dream job may not propose to')
    try {
      for (const path of [p.path, ...(p.removes ?? [])]) validateMemoryPath(path)
    } catch (error) {
      return refuse(`bad path: ${(error as Error).message}`)
    }
    const evidence: Evidence[] = []
    for (const ref of p.evidence) {
      if (ref.startsWith('curated:')) {
        const c = curated.get(ref.slice('curated:'.length))
        if (!c) return refuse(`evidence ${printable(ref, 80)} is no curated memory of ${inputs.scope}`)
        evidence.push({source: `curated ${inputs.scope}/${c.path}`, quote: clipRedacted(c.body.trim(), 200, opts.extra), timestamp: c.created})
      } else {
        const o = byId.get(ref)
        if (!o) return refuse(`evidence ${printable(ref, 40)} is not an observation of the document`)
        evidence.push({session: o.session, timestamp: o.timestamp, source: o.source, quote: clipRedacted(o.text, 200, opts.extra), ...(o.tainted ? {tainted: true} : {})})
      }
    }
    if (evidence.length === 0) return refuse('without evidence')
    const kind = p.kind as DreamKind
    const needsBody = kind !== 'retire'
    if (needsBody && !(p.body ?? '').trim()) return refuse(`a ${kind} needs a body`)
    const target = curated.get(p.path)
    if ((kind === 'merge' || kind === 'retire') && !target) return refuse(`${printable(p.path, 80)} is no curated memory of ${inputs.scope}`)
    if ((kind === 'promote' || kind === 'contradiction') && target) return refuse(`${printable(p.path, 80)} exists already; a ${kind} writes a new memory`)
    const removes: PlannedDream['removes'] = []
    for (const r of kind === 'merge' ? p.removes ?? [] : []) {
      const c = curated.get(r)
      if (!c || r === p.path) return refuse(`removes ${printable(r, 80)}, which is no other curated memory of ${inputs.scope}`)
      removes.push({path: r, base: c.blob})
    }
    if (kind === 'merge' && removes.length === 0) return refuse('a merge removes at least one other memory')
    if (kind !== 'merge' && (p.removes ?? []).length > 0) return refuse(`a ${kind} removes nothing`)
    const body = p.body ?? ''
    planned.push({
      kind, scope: inputs.scope, path: p.path, operation: kind === 'retire' ? 'delete' : target ? 'update' : 'create', base: target?.blob ?? null, removes,
      ...(p.title ? {title: p.title} : {}), ...(needsBody ? {body: body.endsWith('\n') ? body : `${body}\n`} : {}),
      evidence, tainted: evidence.some((e) => e.tainted), reason: `model: ${redactText(p.reason ?? kind, opts.extra)}`,
      fingerprint: fingerprint(kind, [p.path, ...removes.map((r) => r.path)], redactText(body, opts.extra)),
      evidenceKey: fingerprint(kind, evidence.map((e) => `${e.session ?? ''}|${e.source ?? ''}|${e.timestamp ?? ''}`), ''),
    })
  })
  return {planned, rejected}
}

/** The model engine as dream.ts calls it. */
export async function modelPlanner(inputs: DreamInputs, opts: {command: string; timeoutMs: number; allowOrg: boolean; extra: {kind: string; pattern: string}[]}): Promise<ModelPlan> {
  if (!opts.command.trim()) throw badInput('--llm-command is empty.', 'e.g. --llm-command "claude -p --output-format json"')
  const prompt = readFileSync(promptFile(), 'utf8')
  const input = `${prompt}\n${JSON.stringify(modelDocument(inputs, opts.extra))}\n`
  const answer = parseAnswer(await runModel(opts.command, input, opts.timeoutMs))
  return checkProposals(answer, inputs, opts)
}
