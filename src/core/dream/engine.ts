/**
 * The deterministic dream engine: offline, no model. From what sessions saw and said
 * (transcripts, run: scratchpads) and the scope's curated memory, it plans proposals —
 * never applies them: dream.ts sends each through the write path and the review queue.
 *
 * (a) promote: a sentence that recurs in at least `minSessions` sessions;
 * (b) merge: two curated memories whose words are nearly the same (one kept, one deleted);
 * (c) contradiction: two curated memories about the same thing that differ in a number or
 *     a negation, as a note naming both;
 * (d) retire: a curated memory past its `expires` date, or not confirmed (accepted, or said
 *     again by a session) for `dream.retire_unconfirmed_days`;
 * (e) clear: a run: scratchpad older than the retention period.
 */
import {createHash} from 'node:crypto'

import type {Evidence} from '../review/proposal.js'
import type {Observation} from './transcripts.js'

export type DreamKind = 'promote' | 'merge' | 'contradiction' | 'retire' | 'clear'
export const DREAM_KINDS: readonly DreamKind[] = ['promote', 'merge', 'contradiction', 'retire', 'clear']

/** A curated memory of the scope as the engine sees it (served: signed and in the manifest). */
export interface CuratedView {
  path: string
  blob: string
  title: string
  body: string
  created: string
  /** the `expires` frontmatter date, when the file has one */
  expires?: string
  /**
   * when it was last confirmed, and how: the later of the last commit that changed its file
   * (its accept, or a restore) and the last time a session of the period said one of its
   * sentences again, untainted. Known only when unconfirmed memories are retired.
   */
  confirmed?: {at: string; by: string}
}

/** A run: scratchpad's file, with the time of the last commit that changed it. */
export interface RunFile {
  scope: string
  path: string
  blob: string
  committed: string
}

export interface PlannedDream {
  kind: DreamKind
  scope: string
  /** create/update: the memory written; delete: the first file removed */
  path: string
  operation: 'create' | 'update' | 'delete'
  /** the blob the change is made against (update, delete), null for a new file */
  base: string | null
  removes: {path: string; base: string}[]
  title?: string
  /** the body to write (create, update); raw: the write path redacts it */
  body?: string
  evidence: Evidence[]
  tainted: boolean
  reason: string
  /** kind + targets + normalised text: the same proposal is never made twice */
  fingerprint: string
  /** the evidence it rests on: a proposal rejected before is made again only when this changes */
  evidenceKey: string
}

const QUOTE_MAX = 200
const quote = (s: string) => (s.length > QUOTE_MAX ? `${s.slice(0, QUOTE_MAX - 1)}…` : s)
const sha = (s: string) => createHash('sha256').update(s).digest('hex')

/** Lower case, letters, digits and single spaces only: what "the same sentence" compares. */
export function normaliseFact(s: string): string {
  // most text is ASCII: the Unicode path (NFKC, any script's letters) only when it is not
  // eslint-disable-next-line no-control-regex
  if (/^[\x00-\x7f]*$/.test(s)) return s.toLowerCase().replace(/[^a-z0-9]+/g, ' ').trim()
  return s.normalize('NFKC').toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim()
}

/** A 53-bit hash of a normalised fact (two FNV-1a lanes): the counter's key, far smaller than the text. */
function factHash(s: string): number {
  let a = 0x811c9dc5
  let b = 0x01000193
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    a = Math.imul(a ^ c, 0x01000193)
    b = Math.imul(b ^ c, 0x5bd1e995)
  }
  return (a >>> 0) * 0x200000 + ((b >>> 0) & 0x1fffff)
}

/** The sentences of a text worth counting as facts: 4 to 40 words, 20 to 240 characters, not code or a table row. */
export function sentences(text: string): string[] {
  const out: string[] = []
  for (const raw of text.split(/\n+|(?<=[.!?])\s+(?=[A-Z0-9"'(])/)) {
    const s = raw.replace(/^[\s>*#-]+/, '').trim()
    if (s.length < 20 || s.length > 240) continue
    if (/[{};=<>|`]/.test(s) || /^\W/.test(s)) continue
    const words = s.split(/\s+/).length
    if (words < 4 || words > 40) continue
    out.push(s)
  }
  return out
}

export function fingerprint(kind: DreamKind, targets: string[], text: string): string {
  return sha(['engram-dream/1', kind, ...[...targets].sort(), normaliseFact(text)].join('\0')).slice(0, 32)
}

const evidenceKey = (ev: Evidence[]) => sha(ev.map((e) => `${e.session ?? ''}|${e.source ?? ''}|${e.timestamp ?? ''}`).sort().join('\n')).slice(0, 32)

type Sighting = {session: string; timestamp: string; source: string; tainted: boolean}
type Fact = {key: string; text: string; sessions: Map<string, Evidence>; tainted: boolean}

/**
 * Counts of recurring sentences, per normalised text. A week of transcripts holds millions
 * of sentences said once, so a sentence seen in one session only is kept as a hash and
 * where it was seen, without its text (a slice of the text would keep its whole message
 * alive); its text is kept once a second session says it, and the first sighting's quote
 * is that sentence (the same once normalised).
 */
export class FactCounter {
  private readonly once = new Map<number, Sighting>()
  private readonly facts = new Map<number, Fact>()
  /** the sentences of curated memories, by hash: a session saying one again confirms its memory */
  private readonly watched = new Map<number, string[]>()
  private readonly confirmations = new Map<string, Sighting>()

  /** Note when an untainted observation says one of the sentences of `text` again (`confirmedBy(id)`). */
  watch(id: string, text: string): void {
    for (const s of sentences(text)) {
      const h = factHash(normaliseFact(s))
      const ids = this.watched.get(h)
      if (!ids) this.watched.set(h, [id])
      else if (!ids.includes(id)) ids.push(id)
    }
  }

  /** The latest untainted sighting of one of the watched text's sentences, if any. */
  confirmedBy(id: string): {session: string; timestamp: string; source: string} | undefined {
    return this.confirmations.get(id)
  }

  add(o: Observation): void {
    for (const s of sentences(o.text)) {
      const key = normaliseFact(s)
      const h = factHash(key)
      // outside text repeating a memory is no confirmation of it
      if (this.watched.size > 0 && !o.tainted) {
        for (const id of this.watched.get(h) ?? []) {
          const had = this.confirmations.get(id)
          if (!had || had.timestamp < o.timestamp) this.confirmations.set(id, {session: o.session, timestamp: o.timestamp, source: o.source, tainted: false})
        }
      }
      let f = this.facts.get(h)
      if (!f) {
        const first = this.once.get(h)
        if (!first) {
          this.once.set(h, {session: o.session, timestamp: o.timestamp, source: o.source, tainted: o.tainted})
          continue
        }
        if (first.session === o.session) {
          // the same session again: a tainted sighting taints the fact (it may be outside text repeated)
          if (o.tainted) first.tainted = true
          continue
        }
        // a second session: from here on the text is kept (a copy, not a slice of the message)
        const text = Buffer.from(s, 'utf8').toString('utf8')
        f = {key: normaliseFact(text), text, sessions: new Map(), tainted: first.tainted}
        f.sessions.set(first.session, {...first, quote: text})
        this.once.delete(h)
        this.facts.set(h, f)
      }
      if (o.tainted) f.tainted = true
      const had = f.sessions.get(o.session)
      // the whole sentence (at most 240 characters): it is redacted before it is cut to a quote
      if (!had || (had.tainted && !o.tainted)) f.sessions.set(o.session, {session: o.session, timestamp: o.timestamp, source: o.source, quote: f.text === s ? f.text : s, tainted: o.tainted})
    }
  }

  /**
   * Facts seen in at least `min` sessions, most sessions first. A fact seen in any tainted
   * sighting is tainted (the taint survives dreaming), whatever else also said it.
   */
  recurring(min: number): {key: string; text: string; evidence: Evidence[]; tainted: boolean}[] {
    const out = []
    for (const f of this.facts.values()) {
      const key = f.key
      if (f.sessions.size < min) continue
      const evidence = [...f.sessions.values()].sort((a, b) => (a.timestamp ?? '').localeCompare(b.timestamp ?? '') || (a.session ?? '').localeCompare(b.session ?? ''))
      out.push({key, text: f.text, evidence, tainted: f.tainted})
    }
    return out.sort((a, b) => b.evidence.length - a.evidence.length || a.key.localeCompare(b.key))
  }
}

const words = (s: string) => new Set(normaliseFact(s).split(' ').filter((w) => w.length >= 3))
function jaccard(a: Set<string>, b: Set<string>): number {
  let inter = 0
  for (const w of a) if (b.has(w)) inter++
  const union = a.size + b.size - inter
  return union === 0 ? 0 : inter / union
}
const numbers = (s: string) => new Set(normaliseFact(s).split(' ').filter((w) => /\d/.test(w)))
const NEGATION = /\b(?:not|never|no longer|isn't|aren't|doesn't|don't|won't|cannot|can't)\b/i
/** Two texts about the same thing disagree when one has a number the other lacks, or only one is negated. */
function disagree(a: string, b: string): boolean {
  const na = numbers(a)
  const nb = numbers(b)
  return [...na].some((x) => !nb.has(x)) || [...nb].some((x) => !na.has(x)) || NEGATION.test(a) !== NEGATION.test(b)
}
const slug = (s: string) => normaliseFact(s).split(' ').slice(0, 6).join('-').slice(0, 60) || 'fact'

export interface EngineInput {
  scope: string
  now: Date
  minSessions: number
  retentionDays: number
  /** retire a memory not confirmed for this many days (CuratedView.confirmed); 0: never */
  retireUnconfirmedDays?: number
  facts: FactCounter
  curated: CuratedView[]
  runs: RunFile[]
  /**
   * The redactor: transcript text is raw, so a recurring fact is redacted before its path,
   * title, fingerprint or quotes are made from it (a secret must not reach a file name).
   */
  clean: (text: string) => string
}

/** Every proposal the engine would make, in a stable order (kind, then target). */
export function planDreams(input: EngineInput): PlannedDream[] {
  const {scope} = input
  const out: PlannedDream[] = []
  const curatedWords = input.curated.map((m) => ({m, w: words(m.body), norm: normaliseFact(m.body)}))

  // (a) promote: a recurring fact that no curated memory of the scope already says
  for (const raw of input.facts.recurring(input.minSessions)) {
    const text = input.clean(raw.text)
    const f = {key: normaliseFact(text), text, tainted: raw.tainted, evidence: raw.evidence.map((e) => ({...e, ...(e.quote ? {quote: quote(input.clean(e.quote))} : {})}))}
    if (curatedWords.some((c) => c.norm.includes(f.key))) continue
    // (c) a recurring fact about what a curated memory says, that differs from it in a number or a negation
    const fw = words(f.text)
    const against = curatedWords.find((c) => jaccard(fw, c.w) >= 0.5 && disagree(f.text, c.m.body))
    if (against) {
      const evidence = [{source: `curated ${scope}/${against.m.path}`, quote: quote(against.m.body.trim()), timestamp: against.m.created}, ...f.evidence]
      out.push({
        kind: 'contradiction', scope, path: `dream/contradiction-${sha(`${against.m.path}\0${f.key}`).slice(0, 10)}.md`, operation: 'create', base: null, removes: [],
        title: `Contradiction: ${against.m.title || against.m.path} / recent sessions`.slice(0, 80),
        body: `Contradiction between ${scope}/${against.m.path} and ${f.evidence.length} recent sessions:\n\n- ${against.m.path}: ${quote(against.m.body.trim())}\n- sessions: ${quote(f.text)}\n\nUpdate the memory, or keep it as it is.\n`,
        evidence, tainted: f.tainted, reason: `${f.evidence.length} sessions say otherwise than ${against.m.path}`,
        fingerprint: fingerprint('contradiction', [against.m.path], f.text), evidenceKey: evidenceKey(evidence),
      })
      continue
    }
    const path = `dream/${slug(f.text)}-${sha(f.key).slice(0, 6)}.md`
    const fp = fingerprint('promote', [], f.text)
    // the body as said: the write path redacts it and records what it redacted (the title is derived from the redacted body)
    out.push({
      kind: 'promote', scope, path, operation: 'create', base: null, removes: [], body: `${raw.text}\n`, evidence: f.evidence,
      tainted: f.tainted, reason: `said in ${f.evidence.length} sessions`, fingerprint: fp, evidenceKey: evidenceKey(f.evidence),
    })
  }

  // (b) merge and (c) contradiction: pairs of curated memories
  const merged = new Set<string>()
  const sorted = [...curatedWords].sort((a, b) => a.m.created.localeCompare(b.m.created) || a.m.path.localeCompare(b.m.path))
  for (let i = 0; i < sorted.length; i++) {
    for (let j = i + 1; j < sorted.length; j++) {
      const a = sorted[i]
      const b = sorted[j]
      if (merged.has(a.m.path) || merged.has(b.m.path)) continue
      const sim = jaccard(a.w, b.w)
      const ev = (c: CuratedView): Evidence => ({source: `curated ${scope}/${c.path}`, quote: quote(c.body.trim()), timestamp: c.created})
      const differ = disagree(a.m.body, b.m.body)
      if (sim >= 0.5 && differ) {
        // (c) they speak of the same thing and disagree: a note naming both, for the owner to settle
        const body = `Contradiction between ${scope}/${a.m.path} and ${scope}/${b.m.path}:\n\n- ${a.m.path}: ${quote(a.m.body.trim())}\n- ${b.m.path}: ${quote(b.m.body.trim())}\n\nKeep one (\`engram forget\` the other).\n`
        const evidence = [ev(a.m), ev(b.m)]
        out.push({
          kind: 'contradiction', scope, path: `dream/contradiction-${sha(`${a.m.path}\0${b.m.path}`).slice(0, 10)}.md`, operation: 'create', base: null, removes: [],
          title: `Contradiction: ${a.m.title || a.m.path} / ${b.m.title || b.m.path}`.slice(0, 80), body, evidence, tainted: false,
          reason: `${a.m.path} and ${b.m.path} share ${(sim * 100).toFixed(0)}% of their words but differ in a number or a negation`,
          fingerprint: fingerprint('contradiction', [a.m.path, b.m.path], `${a.m.body}\n${b.m.body}`), evidenceKey: evidenceKey(evidence),
        })
      } else if (sim >= 0.8) {
        // (b) the older one is kept, with the lines only the newer one has; the newer one is deleted
        const have = new Set(a.m.body.split('\n').map(normaliseFact))
        const extra = b.m.body.split('\n').filter((l) => l.trim() && !have.has(normaliseFact(l)))
        const body = `${a.m.body.trimEnd()}\n${extra.length > 0 ? `${extra.join('\n')}\n` : ''}`
        const evidence = [ev(a.m), ev(b.m)]
        merged.add(a.m.path).add(b.m.path)
        out.push({
          kind: 'merge', scope, path: a.m.path, operation: 'update', base: a.m.blob, removes: [{path: b.m.path, base: b.m.blob}], title: a.m.title, body, evidence, tainted: false,
          reason: `${a.m.path} and ${b.m.path} share ${(sim * 100).toFixed(0)}% of their words`,
          fingerprint: fingerprint('merge', [a.m.path, b.m.path], body), evidenceKey: evidenceKey(evidence),
        })
      }
    }
  }

  // (d) retire: past its expires date, or (when the policy sets a period) not confirmed for that long.
  // One fingerprint for both: a retirement already queued for either reason is not proposed again.
  const unconfirmedDays = input.retireUnconfirmedDays ?? 0
  const staleBefore = new Date(input.now.getTime() - unconfirmedDays * 86_400_000).toISOString()
  for (const m of input.curated) {
    if (merged.has(m.path)) continue
    const t = m.expires ? Date.parse(m.expires) : Number.NaN
    let evidence: Evidence[]
    let reason: string
    if (!Number.isNaN(t) && t <= input.now.getTime()) {
      evidence = [{source: `curated ${scope}/${m.path} expires ${m.expires}`, quote: quote(m.body.trim())}]
      reason = `expired on ${m.expires}`
    } else if (unconfirmedDays > 0 && m.confirmed && m.confirmed.at < staleBefore) {
      // the time it was confirmed is the evidence: it changes (and a rejected retirement may come back) only when it is confirmed again
      evidence = [{source: `curated ${scope}/${m.path} last confirmed ${m.confirmed.by}`, timestamp: m.confirmed.at, quote: quote(m.body.trim())}]
      const days = Math.floor((input.now.getTime() - Date.parse(m.confirmed.at)) / 86_400_000)
      reason = `not confirmed for ${days} days (since ${m.confirmed.at.slice(0, 10)}; dream.retire_unconfirmed_days is ${unconfirmedDays})`
    } else continue
    out.push({
      kind: 'retire', scope, path: m.path, operation: 'delete', base: m.blob, removes: [], evidence, tainted: false, reason,
      fingerprint: fingerprint('retire', [m.path], m.body), evidenceKey: evidenceKey(evidence),
    })
  }

  // (e) clear: every file of a run: scratchpad untouched for the retention period, one proposal per scratchpad
  const cutoff = new Date(input.now.getTime() - input.retentionDays * 86_400_000).toISOString()
  const byRun = new Map<string, RunFile[]>()
  for (const f of input.runs) byRun.set(f.scope, [...(byRun.get(f.scope) ?? []), f])
  for (const [run, files] of [...byRun].sort(([a], [b]) => a.localeCompare(b))) {
    if (files.some((f) => f.committed >= cutoff)) continue // still in use: cleared once all of it is old
    const [first, ...rest] = [...files].sort((a, b) => a.path.localeCompare(b.path))
    const last = files.map((f) => f.committed).sort().at(-1)!
    const evidence: Evidence[] = [{session: run.slice('run:'.length), source: `${files.length} file(s) of ${run}, last changed ${last}`, timestamp: last}]
    out.push({
      kind: 'clear', scope: run, path: first.path, operation: 'delete', base: first.blob, removes: rest.map((f) => ({path: f.path, base: f.blob})), evidence, tainted: false,
      reason: `older than ${input.retentionDays} days`, fingerprint: fingerprint('clear', files.map((f) => f.path), run), evidenceKey: evidenceKey(evidence),
    })
  }
  return out
}
