import type JsYaml from 'js-yaml'
import {createRequire} from 'node:module'

import {canonicalJson} from './canonical.js'
import {badInput} from '../store/errors.js'
import {printable} from '../store/scope.js'

// A YAML parser costs tens of milliseconds to import; our own files never need it (see
// parseCanonicalMemory), so it is loaded on first use only.
let jsYaml: typeof JsYaml | undefined

const YAML_ALIAS_REFUSED = 'YAML aliases are not allowed in store files'

/**
 * Parse YAML from a store file or config.yml: js-yaml 4's `load` with its default schema,
 * which has no `!!js/*` types, so no stored byte is ever evaluated (STANDARD.md R18). The
 * one YAML reader for store files and the config. Anchors (and so aliases) are refused:
 * engram's own writer never emits them, and an alias bomb ("billion laughs") of a few
 * hundred bytes expands to billions of nodes in every walk of the result.
 */
export function loadYaml(text: string, label?: string): unknown {
  jsYaml ??= createRequire(import.meta.url)('js-yaml') as typeof JsYaml
  return jsYaml.load(text, {
    schema: jsYaml.DEFAULT_SCHEMA,
    ...(label === undefined ? {} : {filename: label}),
    // every node closes through here; an alias can only name a node that had an anchor
    listener(event: string, state: {anchor?: string | null}) {
      if (event === 'close' && state.anchor !== null && state.anchor !== undefined) throw new Error(YAML_ALIAS_REFUSED)
    },
  } as JsYaml.LoadOptions)
}

/**
 * Every origin engram knows, in one table (every list of origins derives from it): who
 * may state it — an agent describing how the text reached it, or only the tool, backed by
 * a key — and whether it delivers third-party text (an indirect prompt-injection vector).
 */
export const ORIGIN_TABLE = {
  direct_chat: {statedBy: 'agent', indirect: false},
  email: {statedBy: 'agent', indirect: true},
  webpage: {statedBy: 'agent', indirect: true},
  document: {statedBy: 'agent', indirect: true},
  readme: {statedBy: 'agent', indirect: true},
  tool_output: {statedBy: 'agent', indirect: true},
  dream: {statedBy: 'tool', indirect: false},
  owner: {statedBy: 'tool', indirect: false},
} as const satisfies Record<string, {statedBy: 'agent' | 'tool'; indirect: boolean}>
export type Origin = keyof typeof ORIGIN_TABLE
const originsWhere = (test: (o: (typeof ORIGIN_TABLE)[Origin]) => boolean) =>
  (Object.keys(ORIGIN_TABLE) as Origin[]).filter((o) => test(ORIGIN_TABLE[o]))
/** Delivery vectors a write can arrive by (the only values an `origin` field may hold). */
export const ORIGINS: readonly Origin[] = Object.keys(ORIGIN_TABLE) as Origin[]
/** Origins an agent may state: they describe the delivery vector and can only add suspicion. */
export const AGENT_ORIGINS: readonly Origin[] = originsWhere((o) => o.statedBy === 'agent')
/** Origins only the tool sets (owner, dream); an agent stating one is refused or quarantined. */
export const ELEVATED_ORIGINS: readonly Origin[] = originsWhere((o) => o.statedBy === 'tool')
/**
 * Words a text or a vote candidate may use to claim authority: the elevated origins and
 * "system", which is no origin at all (a write stating it is refused as bad input).
 */
export const AUTHORITY_CLAIMS: readonly string[] = [...ELEVATED_ORIGINS, 'system']
export const isOrigin = (o: unknown): o is Origin => typeof o === 'string' && Object.hasOwn(ORIGIN_TABLE, o)
/** Whether an origin delivers third-party text (ORIGIN_TABLE `indirect`); any other string does not. */
export const isIndirectOrigin = (o: string): boolean => isOrigin(o) && ORIGIN_TABLE[o].indirect
/** Whether a claimed origin claims authority (AUTHORITY_CLAIMS): only a signed claim may state it. */
export const isAuthorityClaim = (o: string | undefined): boolean => o !== undefined && AUTHORITY_CLAIMS.includes(o)
/**
 * The taint a write inherits, worked out in one place for the write path and for the
 * recheck at review: its session's taint (each reason as `session: <reason>`), and its
 * origin's when the origin delivers third-party text (`origin: <origin>`).
 */
export function inheritedTaint(session: {tainted: boolean; taint_reasons: readonly string[]}, origin: string): {tainted: boolean; reasons: string[]} {
  const indirect = isIndirectOrigin(origin)
  return {
    tainted: session.tainted || indirect,
    reasons: [...session.taint_reasons.map((r) => `session: ${r}`), ...(indirect ? [`origin: ${origin}`] : [])],
  }
}

/** Frontmatter of a memory file, in its canonical order (README.md, "The store"). */
export const FIELD_ORDER = [
  'id',
  'title',
  'scope',
  'tags',
  'author',
  'source_session',
  'origin',
  'tainted',
  'taint_reasons',
  'created',
  'updated',
  'expires',
  'version',
  'proposal',
  'reviewed_by',
  'digest',
  'signature',
] as const

export interface MemoryFrontmatter {
  id: string
  title: string
  scope: string
  tags: string[]
  author: string
  source_session: string | null
  origin: Origin
  tainted: boolean
  taint_reasons: string[]
  created: string
  updated: string
  /**
   * The date (`YYYY-MM-DD`) from which the dream job proposes to retire the memory
   * (`engram write --expires`). Absent, not null, when unset: the frontmatter, signature
   * and digest of every memory without one stay what they were.
   */
  expires?: string
  version: number
  proposal: string | null
  reviewed_by: string | null
  digest: string | null
  signature: string | null
}

/** What serving shows of a memory's origin beside its text (list, search, context). */
export interface Provenance {
  scope: string
  /** scope-relative path of the memory file */
  path: string
  title: string
  author: string
  origin: string
  tainted: boolean
  reviewed_by: string | null
}

export interface MemoryFile {
  frontmatter: MemoryFrontmatter
  body: string
}

/** Normalise a body: LF line ends, exactly one trailing newline. */
export function normaliseBody(body: string): string {
  const lf = body.includes('\r') ? body.replace(/\r\n?/g, '\n') : body
  // a loop, not /\n*$/: that regex is tried at every position and showed up in profiles
  let end = lf.length
  while (end > 0 && lf.charCodeAt(end - 1) === 10) end--
  return `${lf.slice(0, end)}\n`
}

/**
 * Emit a YAML mapping whose values are JSON (JSON is valid YAML flow syntax), in a fixed
 * key order. This is the only writer of frontmatter: it is deterministic, so the same
 * memory always has the same bytes and the same blob id.
 */
export function emitFrontmatter(fields: Record<string, unknown>, order: readonly string[]): string {
  const keys = [...order.filter((k) => k in fields), ...Object.keys(fields).filter((k) => !order.includes(k)).sort()]
  let out = '---\n'
  for (const key of keys) {
    const v = fields[key]
    if (v === undefined) continue
    out += `${key}: ${JSON.stringify(v instanceof Date ? v.toISOString() : v)}\n`
  }
  return `${out}---\n`
}

export function serializeMemory(memory: MemoryFile): string {
  return emitFrontmatter(memory.frontmatter as unknown as Record<string, unknown>, FIELD_ORDER) + normaliseBody(memory.body)
}

/**
 * Parse text with frontmatter: a first line of exactly `---`, a YAML block, a closing
 * `---` line, the body. Only YAML is read (STANDARD.md R18): a language tag after the
 * opening `---` (`---js`, `--- coffee`, even `---yaml`) makes the file broken, never
 * selects another parser: gray-matter's default engines run `---js` blocks through
 * `eval`, so all of them are replaced (safeEngines). Throws bad-input naming `label`.
 */
export function parseFrontmatter(text: string, label: string): {data: Record<string, unknown>; body: string} {
  if (!text.startsWith('---')) throw badInput(`${label}: no frontmatter block (expected the file to start with "---").`)
  const lines = text.split('\n')
  const delimiter = (line: string) => /^---[ \t]*\r?$/.test(line)
  if (!delimiter(lines[0])) {
    throw badInput(`${label}: frontmatter must open with a line of exactly "---"; a language tag (${JSON.stringify(printableLine(lines[0]))}) is refused: only YAML is read from store files.`, 'restore the file from git, or remove it')
  }
  if (!lines.some((l, i) => i > 0 && delimiter(l))) throw badInput(`${label}: frontmatter has no closing "---" line.`, 'restore the file from git, or remove it')
  let parsed: {data: unknown; content: string}
  try {
    // A fresh options object on every call: gray-matter caches (and shares) its results
    // only for calls without options.
    parsed = frontmatterParser()(text, {language: 'yaml', engines: safeEngines(label)})
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error)
    throw badInput(`${label}: malformed frontmatter (${reason}).`, 'fix the YAML between the two "---" lines')
  }
  let data = parsed.data
  if (data === undefined || data === null) data = {}
  if (typeof data !== 'object' || Array.isArray(data)) throw badInput(`${label}: frontmatter is not a mapping.`)
  return {data: plain(data, label) as Record<string, unknown>, body: parsed.content}
}

/**
 * gray-matter's engines, every one replaced: YAML through js-yaml 4's safe `load`
 * (loadYaml), and every other language — gray-matter's default `javascript` engine runs
 * the block through `eval` — refused. The opening-line check above already refuses a
 * language tag; this makes sure that no path through gray-matter can evaluate a byte.
 */
function safeEngines(label: string): Record<string, {parse: (s: string) => object; stringify: () => never}> {
  const refuse = (lang: string) => () => {
    throw new Error(`only YAML frontmatter is read from store files, not ${lang}`)
  }
  const engine = (parse: (s: string) => object) => ({parse, stringify: refuse('stringify')})
  return {
    yaml: engine((s) => (loadYaml(s, label) ?? {}) as object),
    javascript: engine(refuse('javascript')),
    js: engine(refuse('javascript')),
    json: engine(refuse('json')),
    coffee: engine(refuse('coffee')),
    coffeescript: engine(refuse('coffee')),
    cson: engine(refuse('coffee')),
    toml: engine(refuse('toml')),
  }
}

type GrayMatterFn = (text: string, opts: Record<string, unknown>) => {data: unknown; content: string}
let grayMatter: GrayMatterFn | undefined
/** gray-matter costs tens of milliseconds to import and our own files never need it (parseCanonicalMemory): loaded on first use. */
function frontmatterParser(): GrayMatterFn {
  return (grayMatter ??= createRequire(import.meta.url)('gray-matter') as GrayMatterFn)
}

/** The first line of a file, redacted then shortened (printable), for an error message. */
function printableLine(line: string): string {
  return printable(line, 40)
}

/** At most this many nodes are copied out of one frontmatter block (a bound even if an alias got through). */
const MAX_YAML_NODES = 100_000

/**
 * Deep copy into plain JSON values (Dates become ISO strings). A node met twice (a shared,
 * aliased node) or more than MAX_YAML_NODES nodes make the file bad input: the copy never
 * expands what the parser shared.
 */
function plain(value: unknown, label: string, seen = new Set<object>(), budget = {left: MAX_YAML_NODES}): unknown {
  if (--budget.left < 0) throw badInput(`${label}: frontmatter has more than ${MAX_YAML_NODES} YAML nodes.`, 'restore the file from git, or remove it')
  if (value instanceof Date) return value.toISOString()
  if (value && typeof value === 'object') {
    if (seen.has(value)) throw badInput(`${label}: malformed frontmatter (${YAML_ALIAS_REFUSED}).`, 'restore the file from git, or remove it')
    seen.add(value)
    if (Array.isArray(value)) return value.map((v) => plain(v, label, seen, budget))
    const out: Record<string, unknown> = {}
    // defineProperty: a stored "__proto__" key stays a key, never a prototype
    for (const [k, v] of Object.entries(value)) Object.defineProperty(out, k, {value: plain(v, label, seen, budget), enumerable: true, writable: true, configurable: true})
    return out
  }
  return value
}

export function parseMemory(text: string, label: string): MemoryFile {
  return parseCanonicalMemory(text) ?? parseMemoryYaml(text, label)
}

// [^\r\n], not `.`: `.` stops at U+2028/U+2029, which JSON.stringify leaves raw in a value
const LINE_RE = /^([A-Za-z_][A-Za-z0-9_]*): ([^\r\n]+)$/
const SAFE_VALUE_RE = /^(?:"|\[|null$|true$|false$|-?[0-9]+$)/

/**
 * Parse the frontmatter our own writer emits (`key: <JSON>` lines) without the YAML
 * parser, giving exactly what the YAML path gives (checked by a test); anything else —
 * hand-written YAML, odd values, invalid fields — returns undefined.
 */
export function parseCanonicalMemory(text: string): MemoryFile | undefined {
  if (!text.startsWith('---\n')) return undefined
  const close = text.indexOf('\n---', 3)
  if (close < 0) return undefined
  const after = close + 4
  if (after < text.length && text[after] !== '\n' && text[after] !== '\r') return undefined
  const data: Record<string, unknown> = {}
  const block = text.slice(4, close)
  if (block.trim() === '') return undefined
  for (const line of block.split('\n')) {
    const m = LINE_RE.exec(line)
    if (!m || !SAFE_VALUE_RE.test(m[2]) || m[1] in data) return undefined
    let v: unknown
    try {
      v = JSON.parse(m[2])
    } catch {
      return undefined
    }
    if (v !== null && typeof v === 'object' && !(Array.isArray(v) && v.every((x) => typeof x === 'string'))) return undefined
    data[m[1]] = v
  }
  let body = text.slice(after)
  if (body[0] === '\r') body = body.slice(1)
  if (body[0] === '\n') body = body.slice(1)
  try {
    return memoryFromData(data, body, 'memory')
  } catch {
    return undefined // the YAML path reports the error with the file's name
  }
}

/** The general path: any YAML frontmatter (parseFrontmatter), validated field by field. */
export function parseMemoryYaml(text: string, label: string): MemoryFile {
  const {data, body} = parseFrontmatter(text, label)
  return memoryFromData(data, body, label)
}

/** The one validation of a memory's fields, whichever parser read them. */
function memoryFromData(data: Record<string, unknown>, body: string, label: string): MemoryFile {
  const str = (k: string, required = true): string => {
    const v = data[k]
    if (typeof v === 'string') return v
    if (!required && (v === undefined || v === null)) return ''
    throw badInput(`${label}: frontmatter field "${k}" must be a string.`)
  }
  const nullable = (k: string): string | null => {
    const v = data[k]
    if (v === undefined || v === null) return null
    if (typeof v === 'string') return v
    throw badInput(`${label}: frontmatter field "${k}" must be a string or null.`)
  }
  const strings = (k: string): string[] => {
    const v = data[k]
    if (v === undefined || v === null) return []
    if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v as string[]
    throw badInput(`${label}: frontmatter field "${k}" must be a list of strings.`)
  }
  const origin = str('origin')
  if (!isOrigin(origin)) throw badInput(`${label}: unknown origin ${JSON.stringify(origin)} (valid: ${ORIGINS.join(', ')}).`)
  const version = data.version === undefined ? 1 : data.version
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1) {
    throw badInput(`${label}: frontmatter field "version" must be a positive integer.`)
  }
  if (data.tainted !== undefined && typeof data.tainted !== 'boolean') {
    throw badInput(`${label}: frontmatter field "tainted" must be true or false.`)
  }
  const expires = data.expires
  // a hand-written YAML date (expires: 2027-06-30) reads as an ISO time: either is a date
  if (expires !== undefined && expires !== null && (typeof expires !== 'string' || Number.isNaN(Date.parse(expires)))) {
    throw badInput(`${label}: frontmatter field "expires" must be a date such as "2027-06-30".`)
  }
  return {
    frontmatter: {
      id: str('id'),
      title: str('title', false),
      scope: str('scope'),
      tags: strings('tags'),
      author: str('author'),
      source_session: nullable('source_session'),
      origin: origin as Origin,
      tainted: data.tainted === true,
      taint_reasons: strings('taint_reasons'),
      created: str('created'),
      updated: str('updated'),
      ...(typeof expires === 'string' ? {expires} : {}),
      version,
      proposal: nullable('proposal'),
      reviewed_by: nullable('reviewed_by'),
      digest: nullable('digest'),
      signature: nullable('signature'),
    },
    body: normaliseBody(body),
  }
}

/**
 * The bytes an owner signs: path, scope, every frontmatter field but the signature, and
 * the body. A file moved to another path or scope, or edited, no longer verifies.
 */
export function signingPayload(path: string, memory: MemoryFile): string {
  const {signature: _signature, ...rest} = memory.frontmatter
  return canonicalJson({kind: 'engram-memory/1', path, scope: memory.frontmatter.scope, frontmatter: rest, body: normaliseBody(memory.body)})
}

/** A short title from the first non-empty line of a body when none is given. */
export function deriveTitle(body: string): string {
  const line = body.split('\n').find((l) => l.trim().length > 0) ?? ''
  const t = line.replace(/^#+\s*/, '').trim()
  return t.length > 80 ? `${t.slice(0, 77)}…` : t
}
