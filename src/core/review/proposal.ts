import {lstatSync, readdirSync} from 'node:fs'

import {canonicalJson} from '../memory/canonical.js'
import {EngramError, badInput, notFound} from '../store/errors.js'
import {sha256Hex} from '../memory/hash.js'
import {MemoryFrontmatter, emitFrontmatter, normaliseBody, parseFrontmatter, parseMemory, serializeMemory} from '../memory/memory.js'
import {printable} from '../store/scope.js'
import type {Store} from '../store/store.js'

export type Operation = 'create' | 'update' | 'delete'
/** write: an agent's write to its assigned scope; conflict: the loser of a race; dream: from `engram dream`; release: out of quarantine; forget: `engram forget` */
export type ProposalKind = 'write' | 'conflict' | 'dream' | 'release' | 'forget'
export type EntryStatus = 'pending' | 'quarantined'

export interface StoredVote {
  validator: string
  verdict: 'accept' | 'reject' | 'abstain'
  confidence: number
  reason: string
}

export interface StoredFlag {
  flag: string
  reason: string
}

/**
 * One entry of the review queue (`.engram/proposals/<id>.md`) or of quarantine
 * (`.engram/quarantine/<id>.md`): the full proposed file, what it changes, who wrote it
 * and why it is where it is. Defined once; review, vote and dream all use it.
 */
export interface Proposal {
  id: string
  status: EntryStatus
  kind: ProposalKind
  operation: Operation
  scope: string
  /** scope-relative path of the memory */
  path: string
  /** git blob id of the file this change was made against, or null for a new file */
  base: string | null
  author: string
  session: string | null
  origin: string
  tainted: boolean
  taint_reasons: string[]
  created: string
  flags: StoredFlag[]
  redactions: Record<string, number>
  votes: StoredVote[]
  vote: {passed: boolean; dissent: boolean; summary: string} | null
  evidence: Evidence[]
  note: string | null
  /**
   * Other memories of the same scope the change deletes, each against the blob it was
   * proposed for: a merge (or supersede) deletes them and writes `path` in one accept.
   * Empty for every other change. Covered by the digest.
   */
  removes: {path: string; base: string}[]
  /**
   * A proposal made without an agent session (the dream job, the owner's forget) is signed
   * by its maker's key: `ed25519:<keyid>:<base64>` over proposalSignedPayload. Null for an
   * agent session's write, which its session record proves instead.
   */
  signature: string | null
  /** the frontmatter the accepted file will carry (before reviewer fields and signature) */
  memory: MemoryFrontmatter
  /** the proposed body (empty for delete) */
  body: string
}

/** One piece of evidence a proposal rests on: where it was seen, when, a short quote (≤ 200 characters), and whether it came from outside (a web fetch, a tool). */
export interface Evidence {
  session?: string
  quote?: string
  source?: string
  timestamp?: string
  tainted?: boolean
}

const ORDER = [
  'id', 'status', 'kind', 'operation', 'scope', 'path', 'base', 'removes', 'author', 'session', 'origin', 'tainted',
  'taint_reasons', 'created', 'flags', 'redactions', 'votes', 'vote', 'evidence', 'note', 'signature', 'memory',
] as const

const PROPOSALS_DIR = '.engram/proposals'
export const QUARANTINE_DIR = '.engram/quarantine'
const entryDir = (status: EntryStatus) => (status === 'pending' ? PROPOSALS_DIR : QUARANTINE_DIR)
export const entryFile = (p: Pick<Proposal, 'id' | 'status'>) => `${entryDir(p.status)}/${p.id}.md`

export function serializeProposal(p: Proposal): string {
  const {body, removes, signature, ...rest} = p
  // the fields of wave 1's format are written as they were, so older entries keep their bytes
  const fields = {...rest, ...((removes ?? []).length > 0 ? {removes} : {}), ...(signature ? {signature} : {})}
  return emitFrontmatter(fields as Record<string, unknown>, ORDER) + (p.operation === 'delete' ? '' : normaliseBody(body))
}

export function parseProposal(text: string, label: string): Proposal {
  const {data, body} = parseFrontmatter(text, label)
  const need = (k: string, t: string) => {
    if (typeof data[k] !== t) throw badInput(`${label}: field "${k}" is missing or not a ${t}.`, 'restore the file from git, or reject the proposal')
  }
  for (const k of ['id', 'status', 'kind', 'operation', 'scope', 'path', 'author', 'origin', 'created']) need(k, 'string')
  need('tainted', 'boolean')
  if (!['create', 'update', 'delete'].includes(data.operation as string)) throw badInput(`${label}: unknown operation.`)
  if (!['pending', 'quarantined'].includes(data.status as string)) throw badInput(`${label}: unknown status.`)
  if (data.base !== null && typeof data.base !== 'string') throw badInput(`${label}: field "base" must be a blob id or null.`)
  if (!(KINDS as readonly unknown[]).includes(data.kind)) throw badInput(`${label}: unknown kind.`, 'restore the file from git, or reject the proposal')
  if (!isRecord(data.memory)) throw badInput(`${label}: field "memory" is missing or not a mapping.`, 'restore the file from git, or reject the proposal')
  // Validate the proposed frontmatter with the memory parser itself.
  const memory = parseMemory(serializeMemory({frontmatter: data.memory as unknown as MemoryFrontmatter, body: 'x'}), `${label} (memory)`).frontmatter
  // The provenance shown to the reviewer must be the provenance that gets written (and
  // that the digest covers): a proposal whose top-level fields disagree with its memory
  // was edited by hand.
  const mismatch = [
    data.author !== memory.author && 'author',
    (data.session ?? null) !== memory.source_session && 'session',
    data.origin !== memory.origin && 'origin',
    data.tainted !== memory.tainted && 'tainted',
    data.scope !== memory.scope && 'scope',
  ].filter(Boolean)
  if (mismatch.length > 0) {
    throw new EngramError('digest-mismatch', `${label} does not match the reviewed change: its ${mismatch.join(', ')} disagree(s) with the proposed memory (the file was edited).`, {
      nextStep: 'reject it, or restore it from git',
    })
  }
  const shape = shapes(data, label)
  return {
    id: data.id as string,
    status: data.status as EntryStatus,
    kind: data.kind as ProposalKind,
    operation: data.operation as Operation,
    scope: data.scope as string,
    path: data.path as string,
    base: (data.base as string | null) ?? null,
    author: data.author as string,
    session: shape.nullableString('session'),
    origin: data.origin as string,
    tainted: data.tainted as boolean,
    taint_reasons: shape.list('taint_reasons', 'strings', (x) => typeof x === 'string') as string[],
    created: data.created as string,
    flags: shape.list('flags', '{flag, reason} objects', (x) => isRecord(x) && typeof x.flag === 'string' && typeof x.reason === 'string') as StoredFlag[],
    redactions: shape.redactions(),
    votes: shape.list('votes', '{validator, verdict, confidence, reason} objects', isStoredVote) as StoredVote[],
    vote: shape.vote(),
    evidence: shape.list('evidence', '{session?, quote?, source?, timestamp?, tainted?} objects', (x) =>
      isRecord(x) && ['session', 'quote', 'source', 'timestamp'].every((k) => x[k] === undefined || typeof x[k] === 'string') &&
      (x.tainted === undefined || typeof x.tainted === 'boolean'),
    ) as Proposal['evidence'],
    note: shape.nullableString('note'),
    removes: shape.list('removes', '{path, base} objects', (x) => isRecord(x) && typeof x.path === 'string' && typeof x.base === 'string' && /^[0-9a-f]{40}$/.test(x.base)) as Proposal['removes'],
    signature: shape.nullableString('signature'),
    memory,
    body: data.operation === 'delete' ? '' : normaliseBody(body),
  }
}

const KINDS = ['write', 'conflict', 'dream', 'release', 'forget'] as const satisfies readonly ProposalKind[]

const isRecord = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === 'object' && !Array.isArray(x)
const isStoredVote = (x: unknown) =>
  isRecord(x) && typeof x.validator === 'string' && ['accept', 'reject', 'abstain'].includes(x.verdict as string) &&
  typeof x.confidence === 'number' && Number.isFinite(x.confidence) && typeof x.reason === 'string'

/**
 * Type checks of an entry's optional fields: absent is empty, a wrong type (null in a
 * list, a number for a string, an object for a list) makes the entry broken — listed as
 * broken, never a crash that hides the rest of the queue (STANDARD.md R17).
 */
function shapes(data: Record<string, unknown>, label: string) {
  const broken = (k: string, what: string) => badInput(`${label}: field "${k}" must be ${what}.`, 'restore the file from git, or reject the proposal')
  return {
    list(k: string, what: string, ok: (x: unknown) => boolean): unknown[] {
      const v = data[k]
      if (v === undefined) return []
      if (!Array.isArray(v) || !v.every(ok)) throw broken(k, `a list of ${what}`)
      return v
    },
    nullableString(k: string): string | null {
      const v = data[k]
      if (v === undefined || v === null) return null
      if (typeof v !== 'string') throw broken(k, 'a string or null')
      return v
    },
    redactions(): Record<string, number> {
      const v = data.redactions
      if (v === undefined) return {}
      if (!isRecord(v) || !Object.values(v).every((n) => typeof n === 'number' && Number.isInteger(n) && n >= 0)) throw broken('redactions', 'a mapping of counts')
      return v as Record<string, number>
    },
    vote(): Proposal['vote'] {
      const v = data.vote
      if (v === undefined || v === null) return null
      if (!isRecord(v) || typeof v.passed !== 'boolean' || typeof v.dissent !== 'boolean' || typeof v.summary !== 'string') throw broken('vote', 'null or {passed, dissent, summary}')
      return {passed: v.passed, dissent: v.dissent, summary: v.summary}
    },
  }
}

/**
 * The digest of a proposal: SHA-256 over one canonical form of everything an accept will
 * change — id, scope, path, operation, base blob, the frontmatter to be written and the
 * body. The one function that computes it.
 */
export function proposalDigest(p: Pick<Proposal, 'id' | 'scope' | 'path' | 'operation' | 'base' | 'memory' | 'body'> & {removes?: Proposal['removes']}): string {
  const removes = p.removes ?? []
  return sha256Hex(
    canonicalJson({
      kind: 'engram-proposal/1',
      id: p.id,
      scope: p.scope,
      path: p.path,
      operation: p.operation,
      base: p.base,
      frontmatter: p.memory,
      body: p.operation === 'delete' ? '' : normaliseBody(p.body),
      // only when there are any: the digest of every other proposal stays what it was
      ...(removes.length > 0 ? {removes: removes.map((r) => ({path: r.path, base: r.base}))} : {}),
    }),
  )
}

/**
 * What a signed proposal's `signature` covers: the digest (everything accept changes) and
 * what review shows beside it that the digest does not cover — kind, evidence, note,
 * creation time. Editing any of them after signing makes the signature fail.
 */
export function proposalSignedPayload(p: Proposal): string {
  return canonicalJson({kind: 'engram-proposal-signature/1', digest: proposalDigest(p), proposal_kind: p.kind, evidence: p.evidence, note: p.note, created: p.created})
}

export interface ListedEntry {
  file: string
  proposal?: Proposal
  error?: string
}

/** Every entry in the queue or quarantine; a broken file is listed with its error, never hides the rest. */
export function listEntries(store: Store, status: EntryStatus): ListedEntry[] {
  let names: string[]
  try {
    names = readdirSync(store.abs(entryDir(status))).filter((n) => n.endsWith('.md'))
  } catch {
    return []
  }
  const out: ListedEntry[] = []
  for (const n of names.sort()) {
    const file = `${entryDir(status)}/${n}`
    try {
      out.push({file, proposal: checkPlacement(parseProposal(readEntryText(store, file), file), status, n.slice(0, -3), file)})
    } catch (error) {
      out.push({file, error: error instanceof Error ? error.message : String(error)})
    }
  }
  return out
}

/** Find one entry by id or unambiguous prefix. */
export function findEntry(store: Store, status: EntryStatus, idOrPrefix: string): Proposal {
  const {id, file} = findEntryFile(store, status, idOrPrefix)
  return checkPlacement(parseProposal(readEntryText(store, file), file), status, id, file)
}

/** An entry file's text; a symbolic link is refused, never followed (it could show any file the owner can read). */
function readEntryText(store: Store, file: string): string {
  if (lstatSync(store.abs(file), {throwIfNoEntry: false})?.isSymbolicLink()) {
    throw badInput(`${file} is a symbolic link; engram never follows links.`, 'remove it')
  }
  return store.readText(file) ?? ''
}

/**
 * The file of one entry by id or unambiguous prefix, without parsing it (reject and purge
 * must be able to remove a broken or tampered entry).
 */
export function findEntryFile(store: Store, status: EntryStatus, idOrPrefix: string): {id: string; file: string} {
  let names: string[] = []
  try {
    names = readdirSync(store.abs(entryDir(status))).filter((n) => n.endsWith('.md')).map((n) => n.slice(0, -3))
  } catch {
    // empty queue
  }
  const id = matchEntryId(names, idOrPrefix, status)
  return {id, file: `${entryDir(status)}/${id}.md`}
}

/**
 * The one id-prefix lookup of the queue and the quarantine: among `ids` (those the caller
 * may know of), the exact id, else the only one that starts with the given prefix. None is
 * not found (4), several are ambiguous (2), text that cannot be an id is bad input (2).
 */
export function matchEntryId(ids: readonly string[], idOrPrefix: string, status: EntryStatus): string {
  const key = idOrPrefix.trim().toLowerCase()
  if (!/^[0-9a-z-]{1,40}$/.test(key)) throw badInput(`"${printable(idOrPrefix)}" is not an id.`)
  const exact = ids.filter((n) => n === key)
  const hits = exact.length > 0 ? exact : ids.filter((n) => n.startsWith(key))
  const what = status === 'pending' ? 'proposal' : 'quarantine entry'
  if (hits.length === 0) throw notFound(`No ${what} ${printable(key)}.`, status === 'pending' ? 'see `engram review list`' : 'see `engram quarantine list`')
  if (hits.length > 1) {
    throw new EngramError('usage', `"${printable(key)}" matches ${hits.length} ${what}s: ${hits.slice(0, 5).join(', ')}.`, {nextStep: 'give more characters of the id'})
  }
  return hits[0]
}

/** An entry must sit where its id and status say: a renamed or moved file is refused. */
function checkPlacement(p: Proposal, status: EntryStatus, name: string, file: string): Proposal {
  if (p.id !== name || p.status !== status) {
    throw badInput(`${file}: its id or status (${p.id}, ${p.status}) does not match its file name and folder.`, 'restore it from git, or remove it')
  }
  return p
}
