import type {TextReader} from './reading.js'
import type {EngramConfig} from '../../store/config.js'
import {isIndirectOrigin} from '../../memory/memory.js'

export type Verdict = 'accept' | 'reject' | 'abstain'

export interface Vote {
  validator: string
  verdict: Verdict
  /** 0..1: how sure the validator is of its verdict */
  confidence: number
  reason: string
}

export type Flag =
  | 'instruction-like'
  | 'sensitive'
  | 'tainted-source'
  | 'contradiction'
  | 'duplicate'
  | 'secret-redacted'
  | 'obfuscated'
  | 'oversized'

export interface FlagHit {
  flag: Flag
  reason: string
}

/** A curated memory close to the write, which the writing session is allowed to read. */
export interface Neighbour {
  scope: string
  path: string
  title: string
  body: string
  score: number
  /**
   * The git blob id of the file the title and body were parsed from, computed by the caller
   * from the bytes it read (never taken from the index): the same id is the same text, so
   * the semantic validator may reuse its analysis of it (semantic.ts neighbourInfo).
   */
  blob?: string
}

export interface NormalisedText {
  /** the text folded for matching (homoglyphs, zero-width and similar removed) */
  text: string
  /** what was hidden in the raw text (zero-width runs, bidi controls, …), described */
  hidden: string[]
  /** blobs found encoded in the text (base64, hex, …), decoded */
  decoded: string[]
  /** the words of the raw text that an invisible character split (normalise.ts), joined */
  split?: string[]
  /** how many words spell a Latin word with look-alikes of another script (normalise.ts), when any */
  lookalikes?: number
}

export interface CandidateSession {
  id: string
  agent: string
  tainted: boolean
  taint_reasons: string[]
}

export interface WriteCandidate {
  scope: string
  path: string
  operation: 'create' | 'update' | 'delete'
  title: string
  tags: string[]
  /** already redacted */
  body: string
  normalised: NormalisedText
  /** one of ORIGINS in memory.ts */
  origin: string
  author: string
  session: CandidateSession | null
  redactions: Record<string, number>
  bodyBytes: number
  maxBodyBytes: number
  /** the elevated origin (owner/system/dream) the write claims, if any; provenance rejects it */
  claim?: {origin: string}
  /** the origin is backed by the signature of the key that makes the proposal (the dream job's), not claimed */
  signedOrigin?: boolean
  /**
   * values a write claiming direct_chat states that no prompt the user typed in its session
   * holds (session/prompts.ts): the claim is false, and the write is read as third-party text
   */
  unattested?: string[]
  /** the current curated file at that path, if any (an update) */
  baseBody?: string
}

export interface VoteContext {
  /** topically close curated memories the session may read (the caller uses the search index or a scan) */
  neighbours(text: string, limit: number): Neighbour[] | Promise<Neighbour[]>
  /** counts of this session's / author's writes within the burst window, from the store's records */
  recentWrites: {session: number; author: number}
  config: EngramConfig['vote']
  /** working directory for external validator commands (the store root); defaults to the process's */
  cwd?: string
  /** a long-lived process's reader thread (reading.ts): the write's text is read there while the neighbours are looked up */
  reader?: Pick<TextReader, 'read'>
}

export interface VoteResult {
  passed: boolean
  /** passed, but some validator rejected: the reviewer should look closely */
  dissent: boolean
  votes: Vote[]
  flags: FlagHit[]
  summary: string
}

/**
 * Third-party text: a write from an indirect origin, or one claiming direct_chat that states
 * values no prompt the user typed in its session holds (session/prompts.ts). Every validator
 * reads the second as it reads the first.
 */
export function thirdParty(c: Pick<WriteCandidate, 'origin' | 'unattested'>): boolean {
  return isIndirectOrigin(c.origin) || (c.unattested?.length ?? 0) > 0
}

/** How the write's text arrived, as the vote's reasons say it. */
export function arrival(c: Pick<WriteCandidate, 'origin' | 'unattested'>): string {
  return !isIndirectOrigin(c.origin) && (c.unattested?.length ?? 0) > 0 ? `${c.origin} the user did not type` : c.origin
}
