import {lstatSync, mkdirSync, readFileSync} from 'node:fs'
import {join} from 'node:path'

import {writeFileAtomic} from '../store/fsutil.js'
import {ensurePrivateFolder, mac, privateDir, sessionSecret} from '../store/private.js'
import {sha256Hex} from '../memory/hash.js'
import {clip} from '../text/clip.js'

/**
 * What the user typed in a session, as far as a write's claim of `direct_chat` needs it
 * (README "Claude Code hooks", STANDARD.md R26). A write says it holds the user's own words;
 * an agent steered by a web page can say so of anything. Where the harness sees every prompt
 * the user submits (Claude Code's UserPromptSubmit hook), the values a fact is made of — an
 * address, a host, an account or phone number, an IBAN, a wallet — can be checked: a write
 * claiming direct_chat that states one no prompt of the session holds did not come from the
 * user, whoever says so, and is read as third-party text.
 *
 * The record is kept in engram's private folder (`<private>/prompts/<store>/<session>.json`,
 * 0600 in 0700 folders), where the confined agent cannot write, and holds no prompt and no
 * value: only MACs of the values' keys, made with the session secret, so the file tells
 * nobody what the user typed and cannot be filled in without the secret.
 */

/** Top-level domains a bare host is read under; file extensions that are also TLDs (md, py, rs, sh, zip, …) are left out. */
const HOST_TLDS = new Set(
  ('com net org io ai dev app co me info biz xyz cloud tech online site store shop us uk de fr nl eu ca au jp cn ru br es it ch se no dk fi be at ie nz za mx kr tw hk sg in il ' +
    'edu gov mil int internal corp local lan home example test invalid onion email link click live top club page tv gg ly fm to pro bank money pay finance').split(' '),
)

// Each pattern is linear: no nested quantifiers over the same characters.
const URL_RE = /\b[a-z][a-z0-9+.-]{0,15}:\/\/(?:[^\s/?#@"'<>()[\]]{1,256}@)?([a-z0-9.-]{1,253})/gi
const EMAIL_RE = /[a-z0-9._%+-]{1,64}@((?:[a-z0-9-]{1,63}\.){1,8}[a-z]{2,24})\b/gi
const IPV4_RE = /(?<![\w.])(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?![\w]|\.\d)/g
const HOST_RE = /(?<![\w@./-])((?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.){1,8}([a-z]{2,24}))(?![\w-]|\.[a-z0-9])/gi
const IBAN_RE = /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b/g
const WALLET_RE = /\b(?:0x[0-9a-fA-F]{40}|bc1[ac-hj-np-z02-9]{25,62})\b/g
// digits in groups of two or more joined by one space or dash (an account, a phone, a card); 6 digits at least
const NUMBER_RE = /(?<![\w.,/:-])\+?\d{2,}(?:[ -]\d{2,}){0,7}(?![\w]|[.,/:-]\d)/g
const DATE_RE = /^(?:\d{4}-\d{2}-\d{2}|\d{2}-\d{2}-\d{4}|(?:19|20)\d\d(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01]))$/

/** One value a text states: the key it is compared by, and how the text writes it. */
export interface StatedValue {
  key: string
  text: string
}

const hostKey = (host: string) => `host:${host.toLowerCase().replace(/\.$/, '').replace(/^www\./, '')}`

/**
 * The values a text states, each with the key it is compared by: hosts (of links, and bare
 * under a known top-level domain), mailboxes, IPv4 addresses, IBANs, wallets, and numbers of
 * six digits or more (accounts, phones, cards; compared by their last seven digits, so a
 * country code or a leading zero does not count; dates are not numbers here). Amounts, names
 * and words are not values here. `asPrompt` also keys the domain of each mailbox as a host:
 * a user who typed `ap@acme.example` named acme.example too.
 */
export function statedValues(text: string, asPrompt = false): StatedValue[] {
  const out = new Map<string, string>()
  const add = (key: string, shown: string) => {
    if (!out.has(key)) out.set(key, clip(shown, 60))
  }
  // spans already read as one value are not read again as a part of another
  const taken: [number, number][] = []
  const free = (a: number, b: number) => !taken.some(([x, y]) => a < y && b > x)
  const take = (a: number, b: number) => taken.push([a, b])

  for (const m of text.matchAll(URL_RE)) {
    const host = m[1].replace(/:\d+$/, '')
    if (/[a-z]/i.test(host) && host.includes('.')) add(hostKey(host), m[0])
    else if (/^\d{1,3}(?:\.\d{1,3}){3}$/.test(host)) add(`ip:${host}`, m[0])
    take(m.index, m.index + m[0].length)
  }
  for (const m of text.matchAll(EMAIL_RE)) {
    if (!free(m.index, m.index + m[0].length)) continue
    add(`mail:${m[0].toLowerCase()}`, m[0])
    if (asPrompt) add(hostKey(m[1]), m[1])
    take(m.index, m.index + m[0].length)
  }
  for (const m of text.matchAll(WALLET_RE)) {
    add(`wallet:${m[0].toLowerCase()}`, m[0])
    take(m.index, m.index + m[0].length)
  }
  for (const m of text.matchAll(IBAN_RE)) {
    if (!free(m.index, m.index + m[0].length)) continue
    add(`iban:${m[0].replace(/ /g, '')}`, m[0])
    take(m.index, m.index + m[0].length)
  }
  for (const m of text.matchAll(IPV4_RE)) {
    if (!free(m.index, m.index + m[0].length)) continue
    if (m.slice(1, 5).some((o) => Number(o) > 255)) continue
    add(`ip:${m[0]}`, m[0])
    take(m.index, m.index + m[0].length)
  }
  for (const m of text.matchAll(HOST_RE)) {
    if (!free(m.index, m.index + m[0].length) || !HOST_TLDS.has(m[2].toLowerCase())) continue
    add(hostKey(m[1]), m[0])
    take(m.index, m.index + m[0].length)
  }
  for (const m of text.matchAll(NUMBER_RE)) {
    if (!free(m.index, m.index + m[0].length)) continue
    const digits = m[0].replace(/\D/g, '')
    if (digits.length < 6 || DATE_RE.test(m[0])) continue
    add(`number:${digits.slice(-7)}`, m[0])
  }
  return [...out].map(([key, shown]) => ({key, text: shown}))
}

/** What a session's prompts hold, as the write path asks it. */
export interface PromptRecord {
  /** a record of this session is on this machine (a store reviewed on another host has none) */
  found: boolean
  /** how many prompts were recorded */
  prompts: number
  has(key: string): boolean
}

const storeKey = (storeRoot: string) => sha256Hex(storeRoot).slice(0, 16)
const promptsDir = (storeRoot: string) => join(privateDir(), 'prompts', storeKey(storeRoot))
const recordFile = (storeRoot: string, session: string) => join(promptsDir(storeRoot), `${session}.json`)
const keyMac = (secret: Buffer, session: string, key: string) => mac(secret, 'engram-prompt-value', session, key)

/** Keys kept per session at most; past it the oldest go (a value typed long ago is read as not typed). */
const MAX_KEYS = 50_000
/** Of a prompt, only this much is read for values (a pasted log of megabytes adds nothing a fact would quote). */
const MAX_PROMPT_CHARS = 1 << 20

interface StoredRecord {
  store: string
  session: string
  prompts: number
  values: string[]
  updated: string
}

function readRecord(storeRoot: string, session: string): StoredRecord | undefined {
  const file = recordFile(storeRoot, session)
  try {
    const st = lstatSync(file)
    if (!st.isFile() || (st.mode & 0o077) !== 0) return undefined
    const r = JSON.parse(readFileSync(file, 'utf8')) as Partial<StoredRecord>
    if (r.session !== session || typeof r.prompts !== 'number' || !Array.isArray(r.values)) return undefined
    return {store: storeRoot, session, prompts: r.prompts, values: r.values.filter((v): v is string => typeof v === 'string'), updated: String(r.updated ?? '')}
  } catch {
    // none, unreadable, torn or edited: no prompt is known, so no value is taken as typed (fail closed)
    return undefined
  }
}

/**
 * Record the values of one prompt the user submitted (the UserPromptSubmit hook). Durable
 * (fsync'd) before the hook answers, so a write the agent makes after the prompt finds it.
 */
export function recordPrompt(storeRoot: string, session: string, prompt: string): number {
  const secret = sessionSecret(false)
  ensurePrivateFolder(privateDir(), true)
  for (const dir of [join(privateDir(), 'prompts'), promptsDir(storeRoot)]) {
    mkdirSync(dir, {recursive: true, mode: 0o700})
    ensurePrivateFolder(dir, false)
  }
  const have = readRecord(storeRoot, session)
  const values = new Set(have?.values ?? [])
  const found = statedValues(prompt.slice(0, MAX_PROMPT_CHARS), true)
  for (const v of found) {
    const m = keyMac(secret, session, v.key)
    // a value typed again moves to the newest end
    values.delete(m)
    values.add(m)
  }
  const kept = [...values].slice(-MAX_KEYS)
  const record: StoredRecord = {store: storeRoot, session, prompts: (have?.prompts ?? 0) + 1, values: kept, updated: new Date().toISOString()}
  writeFileAtomic(recordFile(storeRoot, session), `${JSON.stringify(record)}\n`, 0o600, {fsync: true})
  return found.length
}

/** The values the user typed in a session, to ask of; an empty record when none was kept (fail closed). */
export function promptRecord(storeRoot: string, session: string): PromptRecord {
  const r = readRecord(storeRoot, session)
  if (!r) return {found: false, prompts: 0, has: () => false}
  let secret: Buffer
  try {
    secret = sessionSecret(false)
  } catch {
    return {found: false, prompts: r.prompts, has: () => false}
  }
  const values = new Set(r.values)
  return {found: true, prompts: r.prompts, has: (key) => values.has(keyMac(secret, session, key))}
}

/**
 * What a write's claim of direct_chat is checked on: its title, tags and body (redacted). A
 * title that is the body's first line (the default) is not read twice, and a clipped title's
 * last, cut word is not read (`ap@acme.ex…` is no value of its own).
 */
export function claimText(title: string, tags: readonly string[], body: string): string {
  const whole = title.endsWith('…') ? title.slice(0, -1).replace(/\S*$/, '') : title
  const t = body.includes(title.endsWith('…') ? title.slice(0, -1) : title) ? '' : whole
  return `${t}\n${tags.join(' ')}\n${body}`
}

/** The values of a write's text (claimText) that no prompt of the session holds, as the text writes them. */
export function unattestedValues(text: string, record: Pick<PromptRecord, 'has'>): string[] {
  return statedValues(text).filter((v) => !record.has(v.key)).map((v) => v.text)
}

/** The taint reason of a direct_chat write stating values no prompt holds (frontmatter, review, recheck). */
export const UNATTESTED_PREFIX = 'origin: direct_chat, but the user typed none of '

export function unattestedReason(values: string[]): string {
  const shown = values.slice(0, 4).map((v) => `"${v}"`).join(', ')
  return `${UNATTESTED_PREFIX}${shown}${values.length > 4 ? ` (+${values.length - 4} more)` : ''} in this session`
}
