/**
 * The semantic validator: does the write contradict, or merely repeat, curated memory
 * that is topically close to it? Word-level and deterministic: sentences are aligned by
 * their content words, then compared for polarity (negation, antonyms) and for the values
 * they state (numbers, dates, hosts, names after "is").
 */
import {ABOUT_ATTACKS, QUOTATION} from './instruction.js'
import type {Neighbour, Vote, WriteCandidate} from './types.js'
import {arrival, thirdParty} from './types.js'
import {clip} from '../../text/clip.js'

export interface SemanticFinding {
  kind: 'contradiction' | 'duplicate'
  neighbour: Neighbour
  reason: string
}

const STOP = new Set(
  (
    'a an the is are was were be been being am do does did doing of to in on at for with by from as and or but if then so that this these those ' +
    'it its we our you your they their them he she his her i my me us there here has have had having will would should can could may might must shall ' +
    'now also just very really actually instead update updated anymore any all some each other than too into onto about over under again still only ' +
    'what which who whom when where why how please note notes fyi currently today ok okay yes well set uses use used using ' +
    // function words of time, and the word that announces a change: neither is the subject
    'after before during since until changed ' +
    // indefinite pronouns: "anything", "something else" name no subject of their own
    'anything everything something anyone everyone someone anybody everybody somebody else'
  ).split(' '),
)
const NEGATION = new Set(['not', 'no', 'never', 'none', 'nobody', 'nothing', 'neither', 'nor', 'without', 'cannot', "can't", "don't", "doesn't", "isn't", "aren't", "wasn't", "weren't", "won't", "shouldn't", "mustn't", "didn't", "hasn't", "haven't"])
/** Words that say the opposite of another word: mapped to that word with the polarity flipped. */
const ANTONYM: Record<string, string> = {
  disable: 'enable', disabled: 'enabled', disables: 'enable', deny: 'allow', denied: 'allowed', denies: 'allow', forbid: 'allow', forbidden: 'allowed',
  disallow: 'allow', disallowed: 'allowed', prohibit: 'allow', prohibited: 'allowed', avoid: 'prefer', avoids: 'prefer', dislike: 'like', dislikes: 'like',
  hate: 'like', hates: 'like', false: 'true', off: 'on', reject: 'accept', rejected: 'accepted', exclude: 'include', excluded: 'included', insecure: 'secure',
  unsafe: 'safe', optional: 'required', unsupported: 'supported', invalid: 'valid', incorrect: 'correct', wrong: 'correct', inactive: 'active', offline: 'online',
  stop: 'start', stopped: 'started', removed: 'added', remove: 'add', private: 'public', closed: 'open', lose: 'win', fail: 'pass', fails: 'pass', failed: 'passed',
}
/**
 * ANTONYM as a map, which V8 probes without first interning the token (a property lookup by
 * a new string searches the process's whole string table: most of the sentence analysis).
 * Only ANTONYM's own words: looked up on the object, "constructor" found the one every object
 * inherits and read as a word with an opposite, flipping its sentence.
 */
const OPPOSITE = new Map<string, string>(Object.entries(ANTONYM))
/** Words that state a value as surely as digits do: days, months, small numbers, frequencies. */
const VALUE_WORDS = new Set(
  (
    'monday tuesday wednesday thursday friday saturday sunday mondays tuesdays wednesdays thursdays fridays saturdays sundays ' +
    'january february march april june july august september october november december ' +
    'one two three four five six seven eight nine ten eleven twelve hourly daily nightly weekly fortnightly monthly quarterly yearly annually'
  ).split(' '),
)
/**
 * "may" is a modal verb, and a stop word, except where it names the month: after a preposition
 * of time ("renew in May", "until May") or before a day or a year ("May 5", "May 2026").
 */
const MONTH_PREP = new Set(['in', 'on', 'by', 'until', 'till', 'since', 'from', 'through', 'before', 'after', 'during', 'early', 'late', 'mid', 'next', 'last', 'of', 'between'])
const MODAL_NEXT = new Set(['be', 'have', 'not', 'also', 'well', 'still', 'need', 'want', 'take', 'get', 'vary', 'change', 'apply', 'differ', 'contain', 'include', 'help', 'seem', 'cause', 'require', 'use', 'result', 'affect', 'find', 'see', 'occur', 'happen', 'lead', 'mean', 'come', 'go', 'do', 'become', 'only', 'even', 'never', 'already', 'soon'])
const DIGITS = /^\d/

/** A value's owner: the token after one of these is what the sentence says its subject is. */
const COPULA = new Set(['is', 'are', 'was', 'were', 'named', 'called', 'equals'])
// A colon ends a marker as well as a word boundary does ("Correction: …"); \b after ':' would need a letter.
const CHANGE_MARKER = /\b(?:no\s+longer|(?:has|have|had)\s+changed|not\s+any\s*more|actually|instead|from\s+now\s+on|replac(?:e|es|ed|ing)|switched\s+to|changed\s+to|moved\s+to|migrated\s+to|now\s+(?:uses?|is|are|lives|runs|points|goes)|took\s+over\s+from|tak(?:en|ing)\s+over\s+from|handed\s+(?:\w+\s+){0,2}over\s+to|has\s+replaced|succeeds)\b|\b(?:update|correction|changed):/i

// Splitting on an explicit class is several times faster than matching \p{L} tokens, and
// this runs over every neighbour on every write. Letters of all scripts stay in tokens.
const SPLIT = /[^a-z0-9._:/@'=\-\u2012\u00c0-\u1fff\u2c00-\u2fff\u3040-\ufeff]+/

interface SentenceInfo {
  words: Set<string>
  values: Set<string>
  negative: boolean
  /** 1: the sentence imposes a requirement or a restriction; -1: it grants a licence; 0: neither */
  modal: number
  /** a question that a full answer or a no follows: it leans neither way and negates nothing (unanswered()) */
  asks: boolean
  /** the part of a line after its lead-in colon, compared with a memory's label lines only */
  labelOnly?: boolean
  /** of such a part, its words (stemmed, no stop words): any the memory does not say makes it another fact */
  said?: string[]
  /** a licence said in a word of its own ("anyone", "directly", "optional"), not only "can" or "may" */
  licenceWord: boolean
  /** a mail header line ("from: …", "reply-to: …") */
  header: boolean
  /** says that something replaces something ("now", "new", "until", "instead", "retired", …) */
  replaces: boolean
  /**
   * for a memory's value, how it shows a new value right beside it: 0 not at all, 1 behind an
   * arrow, "to" or "now" ("… 2040 → … 9999"), 2 in words that say the one replaced the other
   * ("… 9999 (was … 2040)", "… 2040 changed to … 9999", "~~… 2040~~ … 9999"); with `bareTo` false, a bare
   * "to" shows nothing (a name's: "moved from felixstowe to ipswich" is a place, not a person replaced)
   */
  shows(was: string, bareTo?: boolean): (now: string) => 0 | 1 | 2
  /** the phones, accounts and addresses it calls retired, and the others it states (retiredValues()) */
  retired(): Retired
  /** the phones, accounts and addresses it states */
  distinct(): Distinct[]
}

// A requirement lifted ("does not need approval", "without sign-off") grants a licence: matched first and cut out.
// Not needing data grants nothing ("the lab never needs owner details", "we don't need any client information"); not
// needing anything else lifts a requirement ("don't need a change request", "doesn't need, this quarter, manager approval").
const LIFTED = /\b(?:(?:does|do|did|will|would)\s+not|doesn't|don't|no\s+(?:longer|more)|not|never)\s+(?:\w+\s+)?(?:(?:need|needs|require|requires|have\s+to|has\s+to)\b(?![\s,()\u2014]+(?:[\w'’-]+[\s,()\u2014]+){0,3}(?:details|information|info|data|records|names|addresses|numbers|contact|files|documents|copies|identifiers|personal|help|anything|more|extra|much)\b)|required|necessary|mandatory)\b|\bwithout\s+(?:\w+\s+){0,2}(?:approval|sign[- ]?off|review|consent|authori[sz]ation|permission|call-?back|confirmation|verification|second\s+approver|check)\b|\bno\s+(?:\w+\s+)?(?:approval|sign[- ]?off|review|permission)\s+(?:is\s+)?(?:needed|required|necessary)\b/g
const REQUIRE = /\b(?:needs?|require[sd]?|must|mandatory|only|never|forbidden|prohibited|not\s+(?:allowed|permitted)|may\s+not|cannot|can't|restricted|approval|sign[- ]?off|two[- ]person|written|call-?back|second\s+approver|two\s+(?:engineers|approvals|approvers|people))\b/g
// the words that grant a licence of their own; with "can", "may", "spot" and "included", every word that grants one
const LICENCE_WORD = String.raw`directly|freely|anyone|anybody|whoever|allowed|permitted|fine|optional|automatically|straight\s+away|right\s+away|immediately|as\s+soon\s+as|single|skip|any\s+(?:day|time|requester|agent|one|amount|size|user)`
const STRONG_PERMIT = new RegExp(String.raw`\b(?:${LICENCE_WORD})\b`)
const PERMIT = new RegExp(String.raw`\b(?:can|may|spot|included|${LICENCE_WORD})\b`, 'g')

/**
 * A question asserts nothing ("Can my assistant place orders?" in a help page's FAQ): when a full
 * answer follows, the answer does, and when the answer is no, the question's lean is not the text's.
 * A question keeps its lean when it asks the reader ("can you…", a request, as before), when the
 * next lines answer it yes ("Q: Can I delete records under hold?  A: Yes, go ahead.", a chat log's
 * "assistant: Attached the full log"), or when nothing that answers it follows. Only a sentence
 * that opens as a question is one: a statement with a question mark or a tag ("… can be released
 * directly, correct?") asserts what it says (an attacker's review).
 */
const QUESTION_END = /[?\uff1f]["'\u201d\u2019*_)\]]{0,3}\s*$/
const QUESTION_START = /^[\s*#>_"'\u201c-]*(?:q(?:\s*\d+)?\s*[:.)][\s*_"'\u201c]*)?(?:can|could|may|might|is|are|am|was|were|do|does|did|should|shall|will|would|has|have|had|how|what|who|whom|whose|when|where|which|why)\b/
const TAG_QUESTION = /(?:,|\s-|\s\u2014)\s*(?:right|correct|yeah|yes|no|ok|okay|true|agreed|surely|(?:is|are|do|does|did|was|were|can|could|will|would|has|have)(?:n['\u2019]?t)?\s+(?:it|they|we|you|he|she|that|there))\s*[?\uff1f]\W*$/
const ASKS_YOU = /\byou\b/
/**
 * an answer line's lead-in: a timestamp, a speaker ("A:", "assistant:"). The space after the
 * timestamp is taken whole (`(?=(\s*))\1`, never given back) and none is read after the colon
 * (`[\W_]*` reads it): a long run of tabs was split three ways (1.8 s at 32 KiB).
 */
const LEAD_IN = String.raw`^(?:\[[^\]\n]{0,40}\](?=(\s*))\1)?(?:[^:\n]{0,40}:)?[\W_]*`
const NEGATIVE_ANSWER = new RegExp(String.raw`${LEAD_IN}(?:no\b|nope\b|never\b|not\b|negative\b|nein\b|non\b|(?:of\s+course|absolutely|certainly|definitely|surely)\s+not\b)`)
const AFFIRMED = new RegExp(String.raw`${LEAD_IN}(?:yes|yeah|yep|yup|y|sure|of\s+course|absolutely|certainly|definitely|exactly|indeed|correct|right|true|agreed|affirmative|confirmed|totally|go\s+ahead|done|ok(?:ay)?|attached|sent|sending|here|ja|oui|s[ií]|da|100\s*%)\b(?!\s+not\b)`)
/** a thumbs-up or a tick near the start of the answer */
const THUMBS = /^[^\n]{0,60}?(?:\u{1f44d}|\u2705|\u2714)/u

/**
 * Whether the sentence at `i` of `split` is a question that leans neither way (see QUESTION_END);
 * `nextWords` is how many content words the sentence after it has (docInfo analyses it once).
 */
function unanswered(split: string[], i: number, nextWords: number): boolean {
  const text = split[i]
  if (!QUESTION_END.test(text) || !QUESTION_START.test(text) || TAG_QUESTION.test(text) || ASKS_YOU.test(text)) return false
  const next = split[i + 1] ?? ''
  const after = split[i + 2] ?? ''
  if (NEGATIVE_ANSWER.test(next)) return true
  if (AFFIRMED.test(next) || AFFIRMED.test(after) || THUMBS.test(next)) return false
  // a full answer (three content words or more) carries the meaning; a bare question keeps its lean
  return nextWords >= 3
}
/** A request put to someone ("can you remind me…", "could you send…"): it asks, it grants no licence. */
const ASKS_SOMEONE = /^\W*(?:(?:please|so|and|but|also)\s+)?(?:can|could|would|will)\s+you\b/

/** Which way a sentence leans on what is required; the words themselves need not be the stored memory's. */
function modality(s: string): number {
  if (ASKS_SOMEONE.test(s)) return 0
  let perm = 0
  const rest = s.replace(LIFTED, () => {
    perm += 2
    return ' '
  })
  const req = rest.match(REQUIRE)?.length ?? 0
  perm += rest.match(PERMIT)?.length ?? 0
  return req > perm ? 1 : perm > req ? -1 : 0
}

interface DocInfo {
  sentences: SentenceInfo[]
  /** the candidate's content word → its sentences, so alignment only visits sentences sharing a word */
  index?: Map<string, number[]>
  words: Set<string>
  body: string
  /** the words of the person names it states ("Tomasz Nowak"), lower-cased */
  names: Set<string>
  /** every capitalised word, lower-cased: a write that still names the person is no swap */
  capitals: Set<string>
  /** what isNamed reads, made once rather than for each value asked about */
  spelled: Spelled
}

/** A text's capitalised words stemmed, and its words written in capitals and digits alone ("ADP", "CFO"). */
interface Spelled {
  stems: Set<string>
  acronyms: Set<string>
}

function spelledOf(body: string, capitals: Set<string>): Spelled {
  const acronyms = new Set<string>()
  for (const m of body.matchAll(/[A-Za-z0-9]+/g)) if (!/[a-z]/.test(m[0])) acronyms.add(m[0])
  return {stems: new Set([...capitals].map(stem)), acronyms}
}

/**
 * Two or more capitalised words in a row: a person's name, as text writes one. A name starts at
 * no word after a capitalised word that could have started it (the lookbehind): a run of "Aé Aé …"
 * that ends no name was read to its end from each word (quadratic: 0.45 s at 32 KiB, 7 s at 128 KiB).
 */
const PERSON_NAME = /\b(?<!\b\p{Lu}\p{Ll}+[ \t]+)\p{Lu}\p{Ll}+(?:[ \t]+\p{Lu}\p{Ll}+)+\b/gu
const CAPITAL = /\b\p{Lu}\p{Ll}+\b/gu

function namesOf(body: string): {names: Set<string>; capitals: Set<string>} {
  const names = new Set<string>()
  const capitals = new Set<string>()
  // A sentence's first word is capitalised by grammar, not because it names anyone.
  for (const m of body.matchAll(PERSON_NAME)) {
    const words = m[0].split(/[ \t]+/)
    const atStart = m.index === 0 || /[.!?:;\n]\s*$/.test(body.slice(Math.max(0, m.index - 3), m.index))
    for (const w of atStart ? words.slice(1) : words) names.add(w.toLowerCase())
  }
  for (const m of body.matchAll(CAPITAL)) capitals.add(m[0].toLowerCase())
  return {names, capitals}
}

/** Numbers, dates, versions, hosts, addresses, host:port — the values a fact states. */
function isValueToken(t: string): boolean {
  for (let i = 0; i < t.length; i++) {
    const ch = t.charCodeAt(i)
    if (ch >= 48 && ch <= 57) return true
    // an inner dot or at-sign: a host name, a file name, an address
    if ((ch === 46 || ch === 64) && i > 0 && i < t.length - 1) return true
  }
  return false
}

function valueType(v: string): 'host' | 'email' | 'number' | 'other' {
  if (v.includes('@')) return 'email'
  if (/[a-z]\.[a-z]/.test(v)) return 'host'
  // a year is a time, not an amount or an account ("client alert, April 2025" against "account ending 4471")
  if (/^(?:19|20)\d\d$/.test(v)) return 'other'
  if (/\d/.test(v)) return 'number'
  return 'other'
}

const SECOND_LEVEL = new Set(['co', 'com', 'org', 'net', 'ac', 'gov', 'edu', 'ltd', 'plc', 'nhs', 'me', 'sch'])
/** Names anyone can register under (uk.com is no one's site) */
const TWO_LABEL_SUFFIXES = new Set(['uk.com', 'us.com', 'eu.com', 'gb.com', 'gb.net', 'uk.net', 'de.com', 'jpn.com', 'za.com', 'cn.com', 'ru.com', 'sa.com', 'br.com'])
/** Hosts whose subdomains belong to different people: every host there is a site of its own. */
const SHARED_HOSTS = ['github.io', 'githubusercontent.com', 'googleusercontent.com', 'storage.googleapis.com', 'digitaloceanspaces.com', 'r2.dev', 'r2.cloudflarestorage.com', 'b-cdn.net', 'azureedge.net', 'cloudapp.net', 'force.com', 'zendesk.com', 'freshdesk.com', 'atlassian.net', 'slack.com', 'typeform.com', 'formstack.com', 'jotform.com', 'airtable.com', 'readthedocs.io', 'bitbucket.io', 'pythonanywhere.com', 'replit.app', 'repl.co', 'deno.dev', 'railway.app', 'cyclic.app', 'render.com', 'gitlab.io', 'herokuapp.com', 'netlify.app', 'vercel.app', 'pages.dev', 'workers.dev', 'web.app', 'firebaseapp.com', 'azurewebsites.net', 'cloudfront.net', 'amazonaws.com', 'windows.net', 'appspot.com', 'glitch.me', 'ngrok.io', 'ngrok-free.app', 'trycloudflare.com', 'blogspot.com', 'wordpress.com', 'sharepoint.com', 'salesforce.com', 'onmicrosoft.com', 'wixsite.com', 'webflow.io', 'onrender.com', 'fly.dev', 'surge.sh', 'myshopify.com', 'substack.com', 'notion.site', 'ddns.net', 'duckdns.org', 'no-ip.org']

/** A path without its trailing slashes (`/\/+$/` read a run of slashes to its end from each one: 1.6 s at 32 KiB). */
function trimSlashes(p: string): string {
  let end = p.length
  while (end > 0 && p.charCodeAt(end - 1) === 47) end--
  return p.slice(0, end)
}

/**
 * What a host or a link names, for "another host": its host, its site — the registrable name (the
 * last two labels, three under a country's "co.", "org." and the like; the whole host on a shared
 * host such as github.io or s3.amazonaws.com) — and its path, if it has one. A mailbox is whole.
 */
function where(v: string): {host: string; site: string; path: string} {
  if (v.includes('@') && !v.includes('/')) return {host: v, site: v, path: ''}
  const bare = v.replace(/^[a-z][a-z0-9+.-]*:\/\//, '')
  const cut = bare.search(/[/?#]/)
  const host = (cut < 0 ? bare : bare.slice(0, cut)).replace(/:\d+$/, '').replace(/^.*@/, '')
  const path = cut < 0 ? '' : trimSlashes(bare.slice(cut).split(/[?#]/)[0])
  const labels = host.split('.').filter((l) => l !== '')
  // on a shared host every name is someone's own (acme-backups.s3.amazonaws.com, acme.my.salesforce.com): the whole host
  if (SHARED_HOSTS.some((h) => host === h || host.endsWith(`.${h}`))) return {host, site: host, path}
  const n = labels.length >= 3 && ((labels.at(-1)!.length === 2 && SECOND_LEVEL.has(labels.at(-2)!)) || TWO_LABEL_SUFFIXES.has(labels.slice(-2).join('.'))) ? 3 : 2
  return {host: labels.join('.'), site: labels.slice(-n).join('.'), path}
}

/**
 * The same place: the same host, or a site named by its bare name and a host of it ("castleford-
 * diagnostics.example" and "results.castleford-diagnostics.example"), and the same path where both
 * name one. Two hosts of one site are two places ("db-prod-1.atlas.internal", "db-prod-2.atlas.internal").
 */
function samePlace(a: string, b: string): boolean {
  const x = where(a)
  const y = where(b)
  if (x.site !== y.site || !(x.host === y.host || x.host === x.site || y.host === y.site)) return false
  return x.path === '' || y.path === '' || x.path === y.path
}

/**
 * Two numbers that could be the same fact's: about as many digits, and the same separators in the
 * same order unless both are long ("30-92-14" and "40-47-58", "500" and "5,000.00", "4471-9920"
 * and "31926819"); a section number or a share beside an account's last digits ("3.1", "67" and
 * "4471") is another fact.
 */
function sameShape(a: string, b: string): boolean {
  const x = plainNumber(a)
  const y = plainNumber(b)
  const seps = (v: string) => v.replace(/\d/g, '')
  const digits = (v: string) => v.replace(/\D/g, '').length
  if (Math.abs(digits(x) - digits(y)) > 1) return false
  // an account or a phone number is written with or without its dashes and spaces
  return (digits(x) >= 6 && digits(y) >= 6) || seps(x) === seps(y)
}

function stem(w: string): string {
  if (w.length > 4 && w.endsWith('ies')) return `${w.slice(0, -3)}y`
  if (w.length > 3 && w.endsWith('s') && !w.endsWith('ss') && !w.endsWith('us')) return w.slice(0, -1)
  return w
}

/** A participle ("hosted", "running") is not a value after "is". */
const isParticiple = (t: string) => t.endsWith('ed') || t.endsWith('ing') || t.endsWith('en')

function isMonthMay(before: string, pieces: string[], k: number): boolean {
  let next = ''
  for (let j = k + 1; j < pieces.length && next === ''; j++) next = pieces[j]
  if (DIGITS.test(next)) return true
  return MONTH_PREP.has(before) && !MODAL_NEXT.has(next)
}

const isEdge = (ch: number) => ch === 46 || ch === 58 || ch === 47 || ch === 64 || ch === 39 || ch === 61 || ch === 45

function sentenceInfo(s: string): Sentence {
  const words = new Set<string>()
  const values = new Set<string>()
  let flips = 0
  let afterCopula = false
  let position = 0
  // `s` is already lower-cased with straight apostrophes (see docInfo).
  const pieces = s.split(SPLIT)
  let previous = ''
  for (let k = 0; k < pieces.length; k++) {
    const piece = pieces[k]
    const before = previous
    if (piece !== '') previous = piece
    if ((piece === 'may' || piece === 'may.') && isMonthMay(before, pieces, k)) {
      afterCopula = false
      position++
      values.add('may')
      continue
    }
    let start = 0
    let end = piece.length
    while (start < end && isEdge(piece.charCodeAt(start))) start++
    while (end > start && isEdge(piece.charCodeAt(end - 1))) end--
    const copulaNext = afterCopula
    // "port: 5432", "port = 5432": a trailing colon or a lone equals sign asserts a value.
    // (the colon of an underlined label too: "__lisbon:__ +351 …"; asterisks are edges already)
    afterCopula = piece.endsWith(':') || piece === '=' || (piece.endsWith('_') && /:_{1,3}$/.test(piece))
    if (start === end) continue
    // Each token is classified where it stands, with no object made for it and no lookup in
    // a table of every word seen: the sets probed here are small and stay in the CPU's cache
    // (a memo of token classes, 36,000 words at 10k memories, cost more than it saved).
    const tok = start === 0 && end === piece.length ? piece : piece.slice(start, end)
    afterCopula ||= COPULA.has(tok)
    position++
    if (NEGATION.has(tok) || tok.endsWith("n't")) {
      flips++
      continue
    }
    if (isValueToken(tok)) {
      values.add(tok)
      continue
    }
    if (VALUE_WORDS.has(tok)) {
      values.add(stem(tok))
      continue
    }
    if (STOP.has(tok)) continue
    const opposite = OPPOSITE.get(tok)
    // "the editor is Vim": the word after a copula is the value the sentence asserts.
    if (copulaNext && position >= 2 && !isParticiple(tok)) values.add(stem(tok))
    else if (opposite) {
      flips++
      words.add(stem(opposite))
    } else words.add(stem(tok))
  }
  // which way it leans is only asked of sentences that share words with the other text: worked out then, once
  return new Sentence(words, values, flips % 2 === 1, s)
}

const REPLACES = /\b(?:now|new|replac\w*|retir\w*|until|instead|moved|chang\w*|old|former|previous|going\s+forward|no\s+longer)\b/
// between an old value and the new one: an arrow of any glyph, ">", "»", "to", "becomes", "is now"
const SHOWN_AFTER = /^[^\p{L}\p{N}]{0,6}(?:[\u2190-\u21ff\u2794-\u27bf\u27f0-\u27ff\u2900-\u297f\u2b00-\u2bff\u{1f800}-\u{1f8ff}\u00bb\u203a\uff1e\u226b\u25b6\u25b8\u25ba\u{1f449}>]|to|now)[^\p{L}\p{N}+]{0,6}/u
// the same in words that say the change: "becomes", "is now", "changed to", "replaced by", "superseded by", and in the
// languages a mail comes in ("mudou para", "passa a ser", "wird zu", "devient", "diventa"; accents folded)
const SHOWN_AFTER_IN_WORDS = /^[^\p{L}\p{N}]{0,6}(?:becomes|became|has\s+become|is\s+now|(?:(?:is|are|was|were|has|have|had|has\s+been|have\s+been|will\s+be|gets?|got)\s+)?(?:chang|mov|redirect|switch|forward|transferr?|updat|migrat|reassign|divert|re-?rout|rout)(?:ed|es|s|ing)?\s+to|(?:now\s+)?go(?:es)?\s+to|(?:(?:is|are|was|were|has|have|had|has\s+been|have\s+been|will\s+be|gets?|got)\s+)?(?:replac|supersed)(?:ed|es|ing)?\s+(?:by|with)|mud(?:ou|a|ar)\s+para|pass(?:a|ou)\s+(?:a\s+ser|para)|agora\s+e|ahora\s+es|cambi(?:o|a)\s+a|pasa\s+a\s+ser|wird\s+zu|wurde\s+zu|ist\s+jetzt|devient|est\s+maintenant|remplace\s+par|diventa|ora\s+e|sostituito\s+da|wordt|is\s+nu|e\s+agora|(?:(?:foi|sera|e|fue|ha\s+sido|est|a\s+ete|e\s+stato|e\s+stata|is|wurde|wird|werd)\s+)?(?:substituid[oa]|sustituid[oa]|remplacee?|sostituit[oa]|vervangen)\s+(?:por|par|da|door)|(?:wurde|wird)\s+durch|(?:se\s+|ha\s+)?cambi(?:o|ado)\s+a)[^\p{L}\p{N}+]{0,6}/u
// between a new value and the old one: "(was", "[was", ", formerly", "(ex", "(prev.", "(not", "(deprecated", and in the
// languages a mail comes in ("(antes", "(anterior:", "(vorher", "(früher", "(avant", "(ancien", "(prima", "(voorheen", "(tidigare");
// not "(alt", which is an alternative as often
const SHOWN_BEFORE = /[\s,;(\[\u2014\u2013-]{1,4}(?:was|formerly|ex|prev\.?|previously|old|not|replacing|replaces|instead\s+of|rather\s+than|antes|anteriormente|anterior|antigo|antiguo|vorher|fruher|bisher|bislang|ehemals|avant|ancien|anciennement|auparavant|prima|precedente|gia|in\s+precedenza|voorheen|vroeger|oud|tidigare|tidligere|forrige|dawniej|wczesniej|poprzednio|earlier|obsolete|deprecated|legacy|outdated|fka|em\s+vez\s+de|en\s+vez\s+de|(?:en|no)\s+lugar\s+de|statt|anstelle\s+von|au\s+lieu\s+de|invece\s+di|in\s+plaats\s+van)\s*:?[\s-]{0,3}\+?$/
// of those, the words that set one value apart from another as often as they replace it ("ar@… (not ap@…) for disputes")
const SHOWN_BEFORE_APART = /(?:not|instead\s+of|rather\s+than|em\s+vez\s+de|en\s+vez\s+de|(?:en|no)\s+lugar\s+de|statt|anstelle\s+von|au\s+lieu\s+de|invece\s+di|in\s+plaats\s+van)\s*:?[\s-]{0,3}\+?$/
// a verb that asks for the value to be edited, just before it: "update 0800 771 2040 to 0800 771 2077" is no range
const EDIT_BEFORE = /\b(?:updat\w*|set|correct\w*|fix\w*|amend\w*|edit\w*|alter\w*|modif\w*|switch\w*|chang\w*|please)\b[^.;\n]{0,16}$/
// a forward, a divert or "rather than" that holds only at some hours or for some callers ("after hours … goes to …",
// "from abroad dial … rather than …"): a route, not a new value. Not "while" or "during": "during the works, … goes
// to …" is how a change that means to stay is framed as a passing one
const ONLY_WHILE = /\b(?:after[\s-]+hours|out\s+of\s+hours|outside\s+(?:office\s+)?hours|at\s+night|overnight|on\s+weekends?|when\s+(?:\w+\s+){0,3}(?:busy|unstaffed|closed|unanswered|unavailable|away|on\s+leave|off\s+duty)\b|if\s+(?:busy|unanswered|no\s+answer|unreachable|closed)|from\s+(?:abroad|mobiles?|cell\s*phones?|outside|overseas|other\s+countries)|for\s+(?:sign[\s-]?in|log[\s-]?in|login|authentication|sso))/
// text struck through in markdown or HTML, up to 80 characters ("~~0800 771 2040~~ 0800 771 9999", "~~owen marsh~~ priya shah")
// ("~x~" too, as GitHub reads it; a tag may carry attributes: "<del datetime=…>")
const STRUCK = /~~[^~\n]{1,80}~~|(?<!~)~(?!~)[^~\n]{1,80}(?<!~)~(?!~)|<(del|s|strike)(?:\s[^<>\n]{0,60})?>[^<\n]{1,80}<\/\1\s*>/g
/** Two numbers of one length that differ only in their last two digits, the second the higher: a block's first and last. */
function numberRange(from: string, to: string): boolean {
  const a = from.replace(/\D/g, '')
  const b = to.replace(/\D/g, '')
  return a.length >= 6 && a.length === b.length && a.slice(0, -2) === b.slice(0, -2) && Number(b.slice(-2)) > Number(a.slice(-2))
}
/** A value that names one thing: a phone, an account or an address. */
interface Distinct {
  raw: string
  kind: 'number' | 'address'
  value: string
  /** where it stands in its sentence */
  at?: number
}
/** What a sentence states of distinct values: those it calls retired (`old`) and every one (`all`). */
interface Retired {
  old: Distinct[]
  all: Distinct[]
}
const NO_RETIRED: Retired = {old: [], all: []}
// a token as sentenceInfo reads one: the complement of SPLIT
const TOKEN = /[a-z0-9._:/@'=\-\u2012\u00c0-\u1fff\u2c00-\u2fff\u3040-\ufeff]+/g
/**
 * A value the write calls old, with no other word between: "the old number 617 …", "the old line,
 * 617 …", "the former account 3192…", "(previously 617 …)", "(formerly …)", "used to be …", "Old
 * phone number: …" (in English, German, French, Spanish, Portuguese, Italian and Dutch), or a word
 * that names a value between. "Previous" is not among them: it names an event far more often than
 * a value ("my previous email to d.okafor@…", "your previous payment to account 3192…"), nor are
 * "instead of" and "rather than", which a passing instruction says as often as a lasting change
 * ("if Owen is away, call … instead of …"). An attacker's read of two versions (docs/vote-rounds.md "Round
 * twenty-four") found each wider word refusing ordinary mail.
 */
const OLD_WORD = String.raw`(?<![\p{L}\p{N}/-])(?:old|former|alte[nrms]?|ehemalige[nrms]?|bisherige[nrms]?|ancien(?:ne)?|antigu[oa]|antig[oa]|vecchi[oa]|oude)`
const VALUE_NOUN = String.raw`(?:number|no|line|phone|tel|telephone|fax|mobile|hotline|helpline|account|iban|address|mailbox|e-?mail|inbox|host|domain|url|site|portal|link|website|nummer|rufnummer|kontonummer|numéro|compte|número|cuenta|conta|numero|conto|rekening(?:nummer)?)`
// "back on his old number …", "still on the old line …": the old value is the one in use
const BACK = /(?<![\p{L}])(?:back\s+(?:on|to)|still\s+(?:on|at|uses?|using)|again\s+(?:on|at))(?:\s+[\p{L}'’-]+){0,2}\s+(?:old|former)(?:\s+[\p{L}'’-]+){0,2}[\s,:(]*$/u
const RETIRED_BEFORE = new RegExp(
  String.raw`(?:${OLD_WORD}(?:\s+${VALUE_NOUN}){0,2}|(?<![\p{L}])(?:previously|formerly|used\s+to\s+be|früher|anciennement|anteriormente|precedentemente|voorheen))[\s,:(]*$`,
  'u',
)
/**
 * What calls the value before it retired, with at most a verb between ("… is retired", "… has been
 * discontinued", "… is being phased out", "… is no longer in use", "… is no longer valid"). Not a
 * state that passes ("no longer staffed on Fridays"), an outage ("closed", "shut down"), nor
 * "replaced": "+1 617 555 0193 has replaced our old number" names the new one.
 */
// what may stand between a value and the word after it: closing marks, then a verb ("… is", "… has been")
const AFTER_MARKS = String.raw`^[\s,)\]>"”’*_]*`
const EN_AUX = String.raw`is|are|was|were|will\s+be|has\s+been|have\s+been|had\s+been|is\s+being|are\s+being`
// a while that a state lasts ("… on Fridays", "… over the holidays"): then it retires nothing
const FOR_A_WHILE = String.raw`on|at|during|after|before|over|outside|between|until|from|this|next|in|for|by`
const RETIRED_AFTER = new RegExp(
  String.raw`${AFTER_MARKS}(?:(?:${EN_AUX}|gets|got|wird|wurde|ist|est|a\s+été|sera|es|fue|será|está|é|foi|è|è\s+stato|sarà|wordt|werd)\s+)?(?:now\s+)?(?:retired|discontinued|decommissioned|phased\s+out|out\s+of\s+service|no\s+longer\s+(?:in\s+use|in\s+service|valid|works?|working|in\s+operation|operational|(?:monitored|answered|staffed|read)(?![\s,]+(?:${FOR_A_WHILE})(?![\p{L}])))|not\s+in\s+use\s+any\s*more|nicht\s+mehr\s+(?:gültig|in\s+betrieb|erreichbar)|abgeschaltet|stillgelegt|n'est\s+plus\s+(?:valable|valide|utilisé|en\s+service)|ya\s+no\s+(?:es\s+válid|funciona|está\s+en\s+servicio)|não\s+(?:está|funciona|é)\s+mais|desativad[oa]|non\s+è\s+più\s+(?:valid|attiv|in\s+uso)|dismess[oa]|niet\s+meer\s+(?:geldig|in\s+gebruik)|buiten\s+gebruik)(?![\p{L}])`,
  'u',
)
/**
 * An account's own word of retirement: "account 31926819 was closed; pay to …", the wording of a
 * payment fraud. Read after a number only (a host "closed" is an outage), and not for a while
 * ("… is closed on Sundays", "… closed over the holidays").
 */
const CLOSED_AFTER = new RegExp(String.raw`${AFTER_MARKS}(?:(?:${EN_AUX})\s+)?(?:now\s+)?closed(?![\p{L}])(?![\s,]+(?:${FOR_A_WHILE}|today|tomorrow|temporarily)(?![\p{L}]))`, 'u')
// "changed from … to …": the verb itself before "from", and a value's noun before it ("our number changed from …";
// not "ticket 4471 moved from …", "weekly update from …", "orders migrated from …")
const FROM_BEFORE = new RegExp(String.raw`${VALUE_NOUN}(?:\s+(?:has|have|had|was|is))?\s+(?:changed|moved|switched)\s+from\s*$`, 'u')
const TO_AFTER = /^[\s,]*to(?![\p{L}])/u

const FILE_NAME = /\.(?:pdf|docx?|xlsx?|pptx?|csv|txt|md|png|jpe?g|gif|zip|json|ya?ml|xml|html?|eml|msg|ics)$/

/** A value that names one thing: an address, or a phone or an account (seven digits or more), in one spelling. */
function distinctive(raw: string): Distinct | null {
  const [kind, value] = valueKind(raw)
  if (kind === 'address') {
    // not an abbreviation ("i.e", "u.s") or a file name ("quote.pdf")
    const v = value.replace(/^mailto:/, '')
    if (!v.includes('@') && !v.includes('://') && (/^[a-z]\./.test(v) || FILE_NAME.test(v))) return null
    return {raw, kind, value: v}
  }
  if (kind !== 'number') return null
  // a phone written with dots or a slash ("617.555.0193", "1.617.555.0193", "0617/555-0193") is its digits too; not
  // a version or a date ("4.2.1.1234567", "2024.10.15")
  const digits = /^[\d\u2012-]+$|^(?:\d{1,3}\.)?\d{3}\.\d{3}\.\d{4}$|^\d{2,5}\/\d{3,8}(?:[-\u2012]\d{1,5})?$/.test(value) ? value.replace(/\D/g, '') : ''
  return digits.length >= 7 ? {raw, kind, value: digits} : null
}

/**
 * The distinct values a sentence states, and those it calls retired: a word before or after the
 * value says so (RETIRED_BEFORE, RETIRED_AFTER), or it is the first of "from … to …". Read once
 * per sentence, token by token, with each value's own few words around it: linear in the sentence.
 */
function retiredValues(text: string, readOld = true): Retired {
  if (!/\d{3}|@|\.[a-z]/.test(text)) return NO_RETIRED
  const all: Distinct[] = []
  const old: Distinct[] = []
  for (const m of text.matchAll(TOKEN)) {
    const piece = m[0]
    let start = 0
    let end = piece.length
    while (start < end && isEdge(piece.charCodeAt(start))) start++
    while (end > start && isEdge(piece.charCodeAt(end - 1))) end--
    if (start === end) continue
    const tok = piece.slice(start, end)
    if (!isValueToken(tok)) continue
    const at = m.index + start
    const found = distinctive(tok)
    if (!found) continue
    const d = {...found, at}
    all.push(d)
    if (!readOld) continue
    const before = text.slice(Math.max(0, at - 80), at)
    const after = text.slice(at + tok.length, at + tok.length + 80)
    const retired =
      (RETIRED_BEFORE.test(before) && !BACK.test(before)) ||
      RETIRED_AFTER.test(after) ||
      (d.kind === 'number' && CLOSED_AFTER.test(after)) ||
      (FROM_BEFORE.test(before) && TO_AFTER.test(after))
    if (retired) old.push(d)
  }
  return all.length === 0 ? NO_RETIRED : {old, all}
}

const MAIL_HEADER = /^(?:from|to|cc|bcc|reply-to|sender|de|para|von|an|da|a|van|aan)\s*:/
/** A sentence's analysis; which way it leans is worked out on first use, once (no closure per sentence). */
class Sentence implements SentenceInfo {
  private leans: number | undefined
  private retiring: Retired | undefined
  private stating: Retired | undefined
  /** a question that a full answer or a no follows: it leans neither way (unanswered()) */
  asks = false
  /** the part after a lead-in colon ("Update from facilities: São Paulo: 0800 …"), compared with a memory's label lines only */
  labelOnly = false
  said?: string[]
  constructor(
    readonly words: Set<string>,
    readonly values: Set<string>,
    readonly negative: boolean,
    private readonly text: string,
  ) {}
  /** a mail header line ("from: …", "reply-to: …") */
  get header(): boolean {
    return MAIL_HEADER.test(this.text)
  }

  /** says that something replaces something ("now", "new", "until", "instead", "retired", …) */
  get replaces(): boolean {
    return REPLACES.test(this.text)
  }

  /** how now is shown replacing was, one right beside the other (SentenceInfo.shows); linear in the sentence */
  shows(was: string, bareTo = true): (now: string) => 0 | 1 | 2 {
    const t = this.text
    // where a new value would start after the old one, or end before it, and how plainly that says a change
    const spots: [at: number, after: boolean, how: 1 | 2, to?: boolean, onward?: boolean][] = []
    const struck = t.includes('~') || t.includes('<') ? [...t.matchAll(STRUCK)].map((m) => [m.index, m.index + m[0].length] as const) : []
    // whether the sentence says its route holds only at some hours or for some callers: asked once, when a route word is met
    let onlyWhile: boolean | undefined
    const routeOnly = () => (onlyWhile ??= ONLY_WHILE.test(t))
    for (let i = t.indexOf(was), n = 0; i >= 0 && n < 8; i = t.indexOf(was, i + was.length), n++) {
      let end = i + was.length
      let start = i
      // struck through with it: a new value right after the strike, or right before it
      const strike = struck.find(([a, b]) => a <= i && end <= b)
      if (strike) {
        ;[start, end] = strike
        spots.push([end + /^[^\p{L}\p{N}+]{0,6}/u.exec(t.slice(end, end + 6))![0].length, true, 2])
        spots.push([start - /[\s,;(\[]{0,4}$/.exec(t.slice(Math.max(0, start - 4), start))![0].length, false, 2])
      }
      const window = t.slice(end, end + 32)
      const words = SHOWN_AFTER_IN_WORDS.exec(window)
      const after = words ?? SHOWN_AFTER.exec(window)
      // a forward or a redirect says where things go on as often as what replaced them: an arrow's weight
      const onward = words !== null && /\b(?:forward|redirect|divert|re-?rout|rout|go(?:es)?\s)/.test(words[0])
      const bare = !words && after !== null && /^\W*to\b/.test(after[0])
      if (after && !(onward && routeOnly())) spots.push([end + after[0].length, true, words && !onward ? 2 : 1, bare && !EDIT_BEFORE.test(t.slice(Math.max(0, start - 24), start)), onward])
      const before = SHOWN_BEFORE.exec(t.slice(Math.max(0, start - 24), start))
      const apart = before !== null && SHOWN_BEFORE_APART.test(before[0])
      if (before && !(apart && routeOnly())) spots.push([start - before[0].length, false, apart ? 1 : 2])
    }
    return (now) => {
      let best: 0 | 1 | 2 = 0
      for (const [at, after, how, to, onward] of spots) {
        // behind a bare "to", a higher number of the same block is a range ("0800 771 2040 to 0800 771 2049 are all
        // control-room lines"), not a new number
        // (for a name, a bare "to" is a place's move: "from felixstowe to ipswich"; `bareTo` false leaves it out)
        // (nor is "goes to" between two people: "owen marsh goes to priya shah for approvals" is a route)
        if ((to || onward) && !bareTo) continue
        if (how > best && (after ? t.startsWith(now, at) && !(to && numberRange(was, now)) : at >= now.length && t.startsWith(now, at - now.length))) best = how
      }
      return best
    }
  }

  /** the phones, accounts and addresses it calls retired, and the others it states (retiredValues()) */
  retired(): Retired {
    return (this.retiring ??= retiredValues(this.text))
  }

  /** the phones, accounts and addresses it states: a memory's, whose words of retirement are never asked for */
  distinct(): Distinct[] {
    return (this.retiring ?? (this.stating ??= retiredValues(this.text, false))).all
  }

  /** a licence said in a word of its own ("anyone", "directly", "optional"), not only "can" or "may" */
  get licenceWord(): boolean {
    return STRONG_PERMIT.test(this.text)
  }

  get modal(): number {
    return (this.leans ??= this.asks ? 0 : modality(this.text))
  }
}

// Sentence ends for comparison: each sentence keeps its own end mark, so that a question is known
// for one (tokens shed the mark as any edge punctuation).
const SENTENCE_END = /(?<=[.!?\u3002\uff01\uff1f]["'\u201d\u2019*_)\]]{0,3})\s+|\n+/

/**
 * A number written in groups: a phone ("0800 771 2040", "+351 800 208 114", "(11) 3042-7719",
 * "+44 (0)20 7946 0958"), an account or a card. Groups are parted by a space of any width, a tab,
 * a hyphen or a dash (as typeset pages write phones: "0800–771–2040", "0800 - 771 - 2040").
 */
const SPACE = '[ \\t\\u00a0\\u2007\\u2009\\u202f]'
const GROUP_SEP = `(?:${SPACE}*[-\\u2010-\\u2014]${SPACE}*|${SPACE}+)`
const GROUPED = new RegExp(`(?<![\\p{L}\\p{N}_.,+-])(?:\\+\\d{1,3}${SPACE}*)?(?:\\(0\\)${SPACE}*)?(?:\\(\\d{1,4}\\)${SPACE}*)?\\d{1,4}(?:${GROUP_SEP}(?:\\(0\\)${SPACE}*)?\\d{2,4}){1,5}(?![\\p{L}\\p{N}_]|[.,:]\\d)`, 'gu')
const YEAR_GROUP = /^(?:19|20)\d\d$/
const ISO_DATE = /\d{4}-\d\d-\d\d/
const SPACED_DATE = /^\d{1,2}\D+\d{1,2}\D+(?:19|20)\d\d$/
/** U+2012 FIGURE DASH, the dash between a number's groups: one token (SPLIT keeps it), and known as a number written in groups */
const GROUP_JOIN = '\u2012'

/**
 * A word that says a phone number follows, a little before it on its line ("tel.", "call us on",
 * "Hong Kong office: ", "front desk"). Groups that would read as a list or a run of years
 * ("2012 2040", "6123 4567") are then one number, as eight-digit phones are written in Hong Kong,
 * Singapore and elsewhere. The word stands right before the number, or one word from it ("call
 * us on", "office: "): "Singapore office reception hours 1000 – 1800" and "helpdesk tickets 4471
 * 5590" say nothing of the kind, nor does a list's own word ("orders", "tickets").
 */
const CALLED = /\b(?:phone|tel|telephone|call|ring|dial|fax|mobile|cell|hotline|helpline|whatsapp|sms|landline|line|office|desk|reception|switchboard|helpdesk|enquiries|inquiries)\b\.?(?:\s+(?:on|at|is|us|us\s+on|number|no\.?))?[\s:(]*$/

/** Whether the groups read as one number, not as a list ("orders 4471 4472", "tickets 1201 1202 1203") or a run of years. */
function oneNumber(groups: string[], prefixed: boolean, called = false, dashed = false): boolean {
  if (groups.join('').length < 7 || groups.length < 2) return false
  if (groups.every((g, k) => k === 0 || Number(g) === Number(groups[k - 1]) + 1)) return false
  // said to be a phone ("tel.", "call", "Hong Kong office: 2012 2040"): one number, even of groups like years, but
  // not a range ("office 2016 – 2023", "desk 1000-1800")
  const years = groups.every((g) => YEAR_GROUP.test(g))
  const ids = groups.every((g) => g.length === groups[0].length && g.length >= 4)
  if (called) return !dashed || !(years || ids)
  if (years) return false
  // groups all of one length of four or more, and fewer than four of them (a card has four): a list of ids
  return prefixed || groups.length >= 4 || !ids
}

/**
 * The groups of a number written in groups, joined with figure dashes ("0800‒771‒2040"), so that it is
 * one value as it is one fact: read group by group, a changed last group ("2040" → "9999") read
 * as a year against a number and was not seen as a change (round twenty-three). Not a date and
 * what follows it ("2024-10-15 07:40"), nor a part of a decimal or a time; a trunk prefix "(0)"
 * is dropped (the same number with and without it).
 */
export function joinGrouped(text: string): string {
  if (!/\d\)?[^\p{L}\p{N}]{1,5}\(?\d/u.test(text)) return text
  return text.replace(GROUPED, (m: string, at: number) => {
    if (!/[^\d-]/.test(m)) return m
    const date = ISO_DATE.exec(m)
    if (date) return joinGrouped(m.slice(0, date.index)) + date[0] + joinGrouped(m.slice(date.index + date[0].length))
    if (SPACED_DATE.test(m)) return m
    const groups = m.replace(/\(0\)/g, ' ').match(/\d+/g)!
    return oneNumber(groups, /^[+(0]/.test(m), CALLED.test(text.slice(Math.max(0, at - 48), at)), /[-\u2010-\u2014]/.test(m)) ? groups.join(GROUP_JOIN) : m
  })
}

/** a short label line ending in its colon, then a line of a number alone */
const LABEL_THEN_VALUE = /(^|\n)([^\n:]{1,60}:)[ \t]*\n(?=[ \t]*[+(]?[\d\u2012][^\n\p{L}]*(?:\n|$))/gu

/**
 * a lead-in of a few words and a colon, before a label and its colon; up to four of them ("update
 * from facilities: são paulo: 0800 …"), in bold or italics ("**update:** …"), with a time in one
 * ("update (12:30): …"). Neither a lead-in nor the label starts with a space, so each ends at a
 * colon of the line and no space is read two ways (a line of spaced colons took 20-30 ms when one could).
 */
const LEAD_IN_LABEL = /^\s*(?:(?:[^:\s]|(?<=\d):(?=\d))(?:[^:\n]|(?<=\d):(?=\d)){0,99}:[*_`]{0,4}\s+){1,4}(?=[*_`]{0,4}[^:\s][^:\n]{0,39}:[*_`]{0,4}\s*\S)/
/** the reply and forward marks a mail subject gathers ("re: fwd: aw: wg: …"), however many, read before a sentence and its lead-ins */
const REPLY_MARKS = /^\s*(?:(?:re|fwd?|aw|wg|sv|vs|tr|rv|enc|antw|doorst)\s*(?:\[\d+\])?\s*:\s*)+/
/** words a label line may add to the memory's and still state its value: "são paulo: new number 0800 …", "(antes …)" (stop words never count) */
const LABEL_PART_WORDS = new Set(
  [
    ...['new', 'number', 'phone', 'telephone', 'tel', 'line', 'hotline', 'helpline', 'call', 'ring', 'dial', 'contact', 'direct', 'main', 'moved', 'effective', 'immediately', 'nr', 'no'],
    // the words that show a change beside the old value (SHOWN_BEFORE, SHOWN_AFTER_IN_WORDS): "lisbon: +351 … (antes +351 …)"
    ...['ex', 'formerly', 'previously', 'prev', 'replaced', 'replacing', 'superseded', 'redirected', 'antes', 'anteriormente', 'vorher', 'fruher', 'bisher', 'ehemals', 'avant', 'ancien', 'anciennement', 'auparavant', 'prima', 'precedente', 'voorheen', 'vroeger', 'tidigare', 'tidligere', 'dawniej', 'wczesniej', 'poprzednio', 'anterior', 'bislang', 'earlier', 'obsolete', 'deprecated', 'legacy', 'outdated', 'fka'],
    // an HTML strike's tag ("<del>…</del>", "<s>…</s>"), and the words of a change in other languages ("mudou para", "wird zu")
    ...['del', 's', 'strike', 'mudou', 'muda', 'passa', 'passou', 'ser', 'para', 'agora', 'ahora', 'cambio', 'pasa', 'wird', 'wurde', 'zu', 'ist', 'jetzt', 'devient', 'maintenant', 'remplace', 'par', 'diventa', 'ora', 'sostituito', 'wordt', 'nu'],
    // ("lisbon: +351 … rerouted to +351 …", "lisbon: … rather than …"): as "moved" and "replaced" are
    ...['changed', 'switched', 'rerouted', 'reassigned', 'diverted', 'becomes', 'became', 'rather', 'instead', 'goes'],
  ].map(stem),
)

/**
 * A Latin letter with marks reads as its letter ("Sao Paulo" is the memory's "São Paulo"), as the
 * search index reads it (index/tokenize.ts): an accent left off is no other label. An accent sent
 * decomposed (a letter, then its combining mark) is dropped as the index drops it, and the letters
 * NFD keeps whole (ł, ø, đ, ı) read as the letter they are written for.
 */
const MARKED_LATIN = /[\u00C0-\u024F\u1E00-\u1EFF]|\p{M}/u
// a marked letter with any marks after it, or the marks after a plain Latin letter ("Sa\u0303o", as macOS and some mailers send it)
const MARKED_LATIN_ALL = /[\u00C0-\u024F\u1E00-\u1EFF]\p{M}*|(?<=[A-Za-z])\p{M}+/gu
// letters with a stroke or no dot, which NFD leaves whole ("Łódź" is written "Lodz", "København" "Kobenhavn")
const STROKED = new Map(Object.entries({ł: 'l', Ł: 'L', ø: 'o', Ø: 'O', đ: 'd', Đ: 'D', ı: 'i', ħ: 'h', Ħ: 'H', ŧ: 't', Ŧ: 'T', ƚ: 'l'}))
function foldLatin(text: string): string {
  return MARKED_LATIN.test(text) ? text.replace(MARKED_LATIN_ALL, (m) => {
    const stroked = STROKED.get(m[0])
    if (stroked) return stroked
    if (/^\p{M}/u.test(m)) return ''
    const base = m.normalize('NFD').replace(/\p{M}+/gu, '')
    return base.length === 1 ? base : m
  }) : text
}

function docInfo(title: string, body: string, withIndex: boolean): DocInfo {
  title = foldLatin(title)
  body = foldLatin(body)
  // Repeated sentences say nothing new; comparing them once keeps long bodies cheap.
  // fullwidth digits are digits ("０８００ ７７１ ９９９９")
  const prepared = joinGrouped(body.toLowerCase().replace(/[\u2018\u2019]/g, "'").replace(/[\uff10-\uff19]/g, (d) => String.fromCharCode(d.charCodeAt(0) - 0xff10 + 48)))
  // a label line whose value stands alone on the next line ("hong kong office:\n3012 2040") is one line, as it is one fact
  const lined = prepared.includes(':\n') ? prepared.replace(LABEL_THEN_VALUE, '$1$2 ') : prepared
  const split = [...new Set(lined.split(SENTENCE_END))]
  // a mail's reply and forward marks ("re: fwd: são paulo: 0800 …") say nothing of the fact: read without them, "são" was
  // the value of a label "re:"
  const lines = split.map((text) => text.replace(REPLY_MARKS, ''))
  const all = lines.map(sentenceInfo)
  all.forEach((info, i) => {
    if (unanswered(split, i, all[i + 1]?.words.size ?? 0)) info.asks = true
  })
  // a line with a lead-in before a label of its own ("update from the facilities team: são paulo: 0800 …"):
  // the label is read again on its own, for a memory's label line ("são paulo: 0800 771 2040")
  lines.forEach((line, i) => {
    const lead = LEAD_IN_LABEL.exec(line)
    if (!lead) return
    const rest = line.slice(lead[0].length)
    const label = sentenceInfo(rest)
    if (label.words.size === 0 || label.values.size === 0 || [...label.words].every((w) => all[i].words.has(w))) return
    label.labelOnly = true
    label.said = (rest.match(/\p{L}{2,}/gu) ?? []).filter((w) => !STOP.has(w)).map(stem)
    all.push(label)
  })
  const ss = all.filter((x) => x.words.size > 0)
  const words = new Set<string>()
  const index = withIndex ? new Map<string, number[]>() : undefined
  ss.forEach((s, i) => {
    for (const w of s.words) {
      words.add(w)
      if (!index) continue
      const list = index.get(w)
      if (list) list.push(i)
      else index.set(w, [i])
    }
    for (const v of s.values) words.add(v)
  })
  for (const w of sentenceInfo(title.toLowerCase()).words) words.add(w)
  // the names are only asked for when sentences share three words: found then, once
  let names: {names: Set<string>; capitals: Set<string>} | undefined
  let spelled: Spelled | undefined
  return {
    sentences: ss, index, words, body,
    get names() {
      return (names ??= namesOf(body)).names
    },
    get capitals() {
      return (names ??= namesOf(body)).capitals
    },
    get spelled() {
      return (spelled ??= spelledOf(body, this.capitals))
    },
  }
}

/**
 * A neighbour's analysis by its blob id: in a long-lived process (`engram mcp`) the same
 * curated memories are neighbours of write after write, and the analysis is most of what
 * comparing with one costs. Kept only in this process, keyed by the id of the bytes the
 * caller read and verified (Neighbour.blob): nothing the agent can write is trusted for it.
 * Bounded; a neighbour without an id is analysed each time.
 */
const NEIGHBOUR_INFO = new Map<string, DocInfo>()
const NEIGHBOUR_INFO_MAX = 20_000

/** Whether this process keeps an analysis of these bytes (for tests of the warm-up). */
export const hasNeighbourAnalysis = (blob: string) => NEIGHBOUR_INFO.has(blob)

/** Keep a served memory's analysis ahead of the writes that will meet it (neighbours.ts warmNeighbours); false once the memo is full. */
export function keepNeighbourAnalysis(n: Neighbour & {blob: string}): boolean {
  if (NEIGHBOUR_INFO.has(n.blob)) return true
  if (NEIGHBOUR_INFO.size >= NEIGHBOUR_INFO_MAX) return false
  neighbourInfo(n)
  return true
}

function neighbourInfo(n: Neighbour): DocInfo {
  if (n.blob === undefined) return docInfo(n.title, n.body, false)
  let info = NEIGHBOUR_INFO.get(n.blob)
  if (info) return info
  info = docInfo(n.title, n.body, false)
  if (NEIGHBOUR_INFO.size >= NEIGHBOUR_INFO_MAX) NEIGHBOUR_INFO.clear()
  NEIGHBOUR_INFO.set(n.blob, info)
  return info
}

function overlap(a: Set<string>, b: Set<string>): number {
  let n = 0
  const [small, big] = a.size <= b.size ? [a, b] : [b, a]
  for (const x of small) if (big.has(x)) n++
  return n
}

/** The Jaccard index of two sets whose overlap (`n`) the caller has counted already. */
const jaccardOf = (n: number, a: Set<string>, b: Set<string>) => {
  const u = a.size + b.size - n
  return u === 0 ? 0 : n / u
}

/**
 * Whether the write's sentence `cs` is the memory's label line `ns` said with more words: every
 * word of the label is in it, every other word is the memory's or a phone's (LABEL_PART_WORDS),
 * and it is short, as a label line is.
 */
function labelLineFor(cs: SentenceInfo, ns: SentenceInfo, shared: number, nb: DocInfo): boolean {
  if (ns.words.size > 2 || ns.values.size === 0 || cs.values.size === 0 || shared < ns.words.size || cs.words.size > ns.words.size + 4) return false
  for (const w of cs.words) if (!ns.words.has(w) && !nb.words.has(w) && !LABEL_PART_WORDS.has(w)) return false
  // a line that states only values the memory states itself restates another of its lines ("helpdesk fax: … 0959" beside
  // "helpdesk: … 0958. helpdesk fax: … 0959."), with the memory's words
  const stated = cs.distinct()
  if (stated.length > 0 && stated.every((d) => states(statedOf(nb), d))) return false
  return true
}

/** Two sentences talk about the same subject when most of their content words agree. */
function aligned(a: SentenceInfo, b: SentenceInfo, shared: number): boolean {
  const j = shared / (a.words.size + b.words.size - shared)
  const small = Math.min(a.words.size, b.words.size)
  // A short sentence whose every content word recurs in the other is about the same thing.
  if (small <= 2) return shared >= 1 && (j >= 0.6 || (shared >= 2 && shared === small))
  return shared >= 2 && j >= 0.5
}

const WEEKDAYS = new Set('monday tuesday wednesday thursday friday saturday sunday'.split(' '))
const MONTHS = new Set('january february march april may june july august september october november december'.split(' '))
const FREQUENCIES = new Set('hourly daily nightly weekly fortnightly monthly quarterly yearly annually'.split(' '))
const CLOCK_WORDS = new Set(['midnight', 'noon', 'midday', 'eod'])
const NUMBER_WORDS = new Map('one two three four five six seven eight nine ten eleven twelve'.split(' ').map((w, i) => [w, String(i + 1)]))

/**
 * What kind of value a token is, and the value itself in one spelling ("eight" is 8): a day
 * changed for a date is a changed value, a day beside a count is two facts ("payments run on
 * Tuesday" and "two approvers"), which a value-for-value comparison read as a change. Kinds are
 * broad where an attacker can swap one form for another: an address is a host, a mailbox or an
 * IP address ("backups go to backup.acme.example" → "to 203.0.113.45"); a time is a day, a
 * month, a frequency or a date ("on Friday" → "on the 15th", "on the 25th" → "monthly").
 */
function valueKind(v: string): [kind: string, value: string] {
  if (v.includes('@') || /[a-z]\.[a-z]/.test(v) || /^\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?$/.test(v) || v.includes('://')) return ['address', v]
  if (WEEKDAYS.has(v) || MONTHS.has(v) || FREQUENCIES.has(v) || CLOCK_WORDS.has(v) || /^\d{1,2}(?:st|nd|rd|th)$/.test(v) || /^\d{4}-\d{2}-\d{2}$|^\d{1,2}[./]\d{1,2}[./]\d{2,4}$|^(?:19|20)\d\d$|^\d{1,2}[:.h]\d{2}$/.test(v)) return ['time', v]
  const n = NUMBER_WORDS.get(v)
  if (n !== undefined) return ['number', n]
  if (/\d/.test(v)) return ['number', plainNumber(v)]
  return ['word', v]
}

/** A number as its digits say it: thousands separators and a zero decimal part dropped ("5,000.00" is 5000). */
function plainNumber(v: string): string {
  // a phone or an account is its digits, however it is grouped ("+1 617 555 0193", "1-617-555-0193")
  if (/^[\d\u2012-]+$/.test(v) && v.replace(/\D/g, '').length >= 7) return v.replace(/\D/g, '')
  return v.replace(/(\d),(?=\d{3}\b)/g, '$1').replace(/\.0+$/, '')
}

/** A word that names no value of its own, after a colon in a heading ("Sponsored Programs: FAQ"). */
const LABEL_WORDS = new Set('faq faqs overview summary notes note agenda minutes update updates news contents introduction help contact contacts details info information policy rules guide index home tbd n/a none draft'.split(' '))
/**
 * The same number dialled from elsewhere: a phone with and without its country code or
 * international prefix ("+351 800 208 114" and "800 208 114", "0044 …" and "+44 …"): the digits of
 * one end the other's, seven at least, after at most five more.
 */
function sameDialled(x: string, y: string): boolean {
  const [short, long] = x.length <= y.length ? [x, y] : [y, x]
  return short.length >= 7 && long.length - short.length <= 5 && /^\d+$/.test(long) && /^\d+$/.test(short) && long.endsWith(short)
}

/** One number however written: grouped or not, with or without a country code */
function sameNumber(x: string, y: string): boolean {
  const [px, py] = [plainNumber(x), plainNumber(y)]
  return px === py || sameDialled(px, py)
}

/** Where something goes or comes from, in any form: an address, a long number (an account, a phone), a name. */
const isDestination = (kind: string, value: string, named: (v: string) => boolean) =>
  kind === 'address' || (kind === 'number' && value.replace(/\D/g, '').length >= 6) || (kind === 'word' && named(value))

/**
 * Some kind of value each sentence states differently: each holds a value of that kind the other
 * lacks. A word (what follows "is" or a colon: "the on-call lead is Priya") counts only between
 * sentences that say nearly the same (`close`): a heading and a contact line that share a name
 * ("Office of Sponsored Programs: FAQ", "… : Leonard Fisk") state no changed value. Between such
 * sentences a destination may also change its form: an account for a mailbox, a host for a word
 * ("Supplier payments go to account 31926819" → "… go to payables@…", "The backup target is
 * backup.acme.example" → "… is Dropbox"; a name in lower case is no value, README "Known limits").
 */
function differ(
  a: Set<string>,
  b: Set<string>,
  close: boolean,
  named: {a: (v: string) => boolean; b: (v: string) => boolean},
  opts: {label?: boolean; write?: Pick<SentenceInfo, 'header' | 'replaces' | 'shows'>} = {},
): [was: string, now: string] | null {
  const {label = false, write} = opts
  const kinds = new Map<string, {a: Map<string, string>; b: Map<string, string>}>()
  const put = (set: Set<string>, side: 'a' | 'b') => {
    for (const raw of set) {
      const [kind, value] = valueKind(raw)
      if (kind === 'word' && LABEL_WORDS.has(value)) continue
      let k = kinds.get(kind)
      if (!k) kinds.set(kind, (k = {a: new Map(), b: new Map()}))
      if (!k[side].has(value)) k[side].set(value, raw)
    }
  }
  put(a, 'a')
  put(b, 'b')
  const same = (kind: string, x: string, y: string) => (kind === 'address' ? samePlace(x, y) : x === y || (kind === 'number' && sameDialled(x, y)))
  for (const [kind, {a: av, b: bv}] of kinds) {
    if (kind === 'word') {
      // a word is a value only as a name, written with a capital in both texts ("is Priya", "is Vim", "CFO")
      if (!close) continue
      for (const [v] of av) if (!named.a(v)) av.delete(v)
      for (const [v] of bv) if (!named.b(v)) bv.delete(v)
    }
    // an address for an address of the same place (a subdomain, a link to the same page) is no change
    let nows = [...av.keys()].filter((x) => ![...bv.keys()].some((y) => same(kind, x, y)))
    const wass = [...bv.keys()].filter((y) => ![...av.keys()].some((x) => same(kind, x, y)))
    if (label) {
      // a memory's label line ("São Paulo: 0800 771 2040") against a long sentence that names the
      // same place: the sentence's dates and short numbers ("20% off until 31/07", "founded in 1998")
      // are other facts; a phone or an account (six digits or more), a name or an address is the label's
      if (kind === 'time') continue
      if (kind === 'number') nows = nows.filter((x) => x.replace(/\D/g, '').length >= 6)
    }
    if (nows.length > 0 && wass.length > 0) return [bv.get(wass[0])!, av.get(nows[0])!]
    // the old phone or account stated beside a new one that replaces it ("0800 771 9999, or 0800
    // 771 2040 until Friday"); a second number beside the old one ("reception: …") is none
    if (kind === 'number' && nows.length > 0 && write?.replaces) {
      const long = (v: string) => /^\d{7,}$/.test(v)
      const now = nows.find(long)
      const was = [...bv.keys()].find(long)
      if (now && was) return [bv.get(was)!, av.get(now)!]
    }
    if ((kind === 'number' || kind === 'address') && nows.length > 0 && write) {
      // the memory's few values, each looked for beside every new one: nows.length × a window, not × the sentence;
      // an address beside an arrow only for one of another domain ("portal.kestrel.example → docs.kestrel.example" is a link on)
      for (const was of bv.keys()) {
        // the memory's value as the memory spells it and as the write does ("0800-771-2040", "(617) 555-0193", "800 208 114"
        // for "+351 800 208 114"): looked for in the memory's spelling only, any other spelling hid the change
        const spellings = new Set([bv.get(was)!])
        for (const [x, raw] of av) if (spellings.size < 4 && same(kind, x, was)) spellings.add(raw)
        const besides = [...spellings].map((raw) => write.shows(raw))
        const beside = (now: string) => Math.max(...besides.map((b) => b(now))) as 0 | 1 | 2
        // an arrow between two addresses of one domain is a link on; words that say a change are a change
        const now = nows.find((x) => {
          const how = beside(av.get(x)!)
          return how === 2 || (how === 1 && (kind === 'number' || baseDomain(x) !== baseDomain(was)))
        })
        if (now) return [bv.get(was)!, av.get(now)!]
      }
    }
  }
  // a mail header ("From: Owen Marsh <owen.marsh@…>") names who wrote, not where a contact of a
  // memory ("Owen Marsh, +1 617 555 0193") is now reached
  if (close && !write?.header) {
    const dest = (side: 'a' | 'b') => [...kinds].flatMap(([kind, k]) => [...k[side]].filter(([value]) => isDestination(kind, value, named[side])).map(([value, raw]) => ({kind, value, raw})))
    const da = dest('a')
    const db = dest('b')
    const kindsOf = (d: typeof da) => new Set(d.map((x) => x.kind))
    // only a destination whose kind the other sentence does not state: a like-for-like change is found above
    // (against a memory's label line, a name in a longer sentence is another place, never the label's new phone:
    // "Trip: Lisbon → São Paulo in May" against "São Paulo: 0800 …")
    const now = da.find((x) => !kindsOf(db).has(x.kind) && !db.some((y) => same(x.kind, x.value, y.value)) && !(label && x.kind === 'word' && named.b(x.value)))
    const was = db.find((y) => !kindsOf(da).has(y.kind))
    if (now && was) return [was.raw, now.raw]
  }
  return null
}
const name = (n: Neighbour) => `${n.scope}:${n.path}`
/** an address's host without its subdomains: the last two labels ("ap@kestrel.example", "portal.kestrel.example/x" → "kestrel.example") */
const baseDomain = (v: string) => v.slice(v.lastIndexOf('@') + 1).replace(/^[a-z][a-z0-9+.-]*:\/\//, '').split(/[/?#:]/)[0].split('.').slice(-2).join('.')

/**
 * Whether a text writes a (stemmed) word with a capital: a name, not a word of the sentence. Read
 * in sets made once per text: stemming every capital and searching the body for each value asked
 * about took time that grew with the square of the text (1.2 s at 256 KiB).
 */
function isNamed(doc: DocInfo, v: string): boolean {
  if (doc.capitals.has(v) || doc.spelled.stems.has(v)) return true
  // an acronym ("ADP", "CFO"), written on its own
  const upper = v.toUpperCase()
  return /^[A-Z0-9]+$/.test(upper) && doc.spelled.acronyms.has(upper)
}

/** The same phone, account or address: by digits, however dialled; by host, and by path where both name one. */
function sameDistinct(x: Distinct, y: Distinct): boolean {
  if (x.kind !== y.kind) return false
  if (x.kind === 'number') return x.value === y.value || sameDialled(x.value, y.value)
  const [a, b] = [where(x.value), where(y.value)]
  return a.host === b.host && (a.path === '' || b.path === '' || a.path === b.path)
}

/** A memory's distinct values, for sameDistinct in constant time: numbers with the suffixes they are dialled by, hosts with their paths. */
interface Stated {
  numbers: Set<string>
  suffixes: Set<string>
  hosts: Map<string, Set<string>>
}
/** Read once per analysis of a memory */
const STATED = new WeakMap<DocInfo, Stated>()

function statedOf(nb: DocInfo): Stated {
  let st = STATED.get(nb)
  if (st) return st
  st = {numbers: new Set(), suffixes: new Set(), hosts: new Map()}
  for (const s of nb.sentences) {
    for (const d of s.distinct()) {
      if (d.kind === 'number') {
        st.numbers.add(d.value)
        for (let cut = 1; cut <= 5 && d.value.length - cut >= 7; cut++) st.suffixes.add(d.value.slice(cut))
      } else {
        const w = where(d.value)
        const paths = st.hosts.get(w.host) ?? new Set<string>()
        paths.add(w.path)
        st.hosts.set(w.host, paths)
      }
    }
  }
  STATED.set(nb, st)
  return st
}

/** Whether a memory states a value, as sameDistinct reads "the same" */
function states(st: Stated, d: Distinct): boolean {
  if (d.kind === 'number') {
    // the same digits, or one dialled with up to five more in front ("+1 617 555 0193" and "617 555 0193")
    if (st.numbers.has(d.value) || st.suffixes.has(d.value)) return true
    for (let cut = 1; cut <= 5 && d.value.length - cut >= 7; cut++) if (st.numbers.has(d.value.slice(cut))) return true
    return false
  }
  const w = where(d.value)
  const paths = st.hosts.get(w.host)
  return paths !== undefined && (w.path === '' || paths.has('') || paths.has(w.path))
}

/**
 * A memory's phone, account or address that the write calls retired ("the old +1 617 555 0193 is
 * retired", "(previously 31926819)", "account … was closed", "our number changed from … to …"), with another
 * such value in the same sentence or the one before or after it: the write replaces the memory's
 * value however it words the rest, since the value names the memory's fact (round twenty-four; a
 * sentence sharing too few words with the memory's was never compared). The value called retired
 * must be the memory's own: the word that says so stands next to it. Linear in the write.
 */
function retiresValue(cand: DocInfo, nb: DocInfo): [was: string, now: string] | null {
  const st = statedOf(nb)
  const ss = cand.sentences
  for (let i = 0; i < ss.length; i++) {
    // the values the memory does not state, in this sentence and the ones on either side, found once per sentence;
    // each old value is looked for once ("old docs.… old docs.…" beside a thousand paths of it took 154 s at 256 KiB)
    let fresh: {d: Distinct; here: boolean}[] | undefined
    const seen = new Set<string>()
    for (const old of ss[i].retired().old) {
      if (seen.has(old.value) || seen.size >= 16) continue
      seen.add(old.value)
      if (!states(st, old)) continue
      fresh ??= [i, i - 1, i + 1].filter((k) => k >= 0 && k < ss.length).flatMap((k) => ss[k].retired().all.filter((d) => !states(st, d)).map((d) => ({d, here: k === i})))
      if (fresh.length === 0) break
      // of the old one's kind, in its sentence first, nearest first ("invoice 20241187: pay to 40475812 (previously 31926819)")
      let now: Distinct | undefined
      let best: [number, number] = [Infinity, Infinity]
      for (const {d, here} of fresh) {
        // a phone for a phone, an account for an account: about as many digits (not an order number beside a phone)
        if (d.kind !== old.kind || sameDistinct(d, old) || (d.kind === 'number' && Math.abs(d.value.length - old.value.length) > 2)) continue
        const rank: [number, number] = [here ? 0 : 1, here ? Math.abs(d.at! - old.at!) : 0]
        if (rank[0] < best[0] || (rank[0] === best[0] && rank[1] < best[1])) [best, now] = [rank, d]
      }
      if (now) return [old.raw, now.raw]
    }
  }
  return null
}

function compareOne(cand: DocInfo, marker: string | null, markerWords: Set<string> | null, n: Neighbour, nb: DocInfo): SemanticFinding | null {
  const index = cand.index!
  const shared = new Uint32Array(cand.sentences.length)
  // per neighbour sentence, the candidate's sentences sharing two words or more with it, in order, and how many
  const pairs: {ns: SentenceInfo; with: number[]; counts: number[]}[] = []
  for (const ns of nb.sentences) {
    shared.fill(0)
    const touched: number[] = []
    for (const w of ns.words) {
      const list = index.get(w)
      if (list) for (const i of list) if (shared[i]++ === 0) touched.push(i)
    }
    for (const i of touched) {
      const cs = cand.sentences[i]
      // a label part is compared with a memory's label line, and only when every word it says is the
      // memory's or a phone's ("lisbon: taxi +351 …", "são paulo: 12 chairs" state other facts)
      if (cs.labelOnly && (!(ns.words.size <= 2 && ns.values.size > 0) || cs.said?.some((w) => !nb.words.has(w) && !LABEL_PART_WORDS.has(w)))) continue
      // a label line of the write that adds to the memory's label only the memory's own words or a phone's
      // ("lisbon emergency line: +351 …", "lisbon: new number +351 …" for "lisbon: +351 …") states its value
      const plain = aligned(cs, ns, shared[i])
      const asLabel = !plain && !cs.labelOnly && labelLineFor(cs, ns, shared[i], nb)
      if (!plain && !asLabel) continue
      // A heading or a fragment of the write that says no "not" ("Our bank details", "Tom, both,") negates no
      // sentence of a memory, nor is a memory's label line ("Conflicts team: conflicts@…") negated; nor does a
      // question nobody answered. A short rule ("No USB drives.", "Never disable MFA.") and a short denial
      // ("Wires: no call-back.", "Friday deploys: OK." against "No Friday deploys.") still do.
      const heading = cs.words.size < 3 && !cs.negative && ns.words.size >= 3
      const label = ns.words.size < 3 && !ns.negative && ns.values.size > 0
      if (cs.negative !== ns.negative && !heading && !label && !cs.asks && !ns.asks) {
        return {kind: 'contradiction', neighbour: n, reason: `negates ${name(n)} ("${clip(n.title, 40)}")`}
      }
      // nearly the same: the shorter sentence's words are, three in four, the longer one's
      // aligned only because a memory's short line has every word in the write's longer sentence (aligned())
      // (a label part only for a phone, an account, a name or an address: never a count or an amount)
      const byLabel = asLabel || (ns.words.size <= 2 && cs.words.size > 2 && shared[i] / (cs.words.size + ns.words.size - shared[i]) < 0.6) || cs.labelOnly === true
      const changed = cs.values.size > 0 && ns.values.size > 0 ? differ(cs.values, ns.values, shared[i] >= 2 && shared[i] / Math.min(cs.words.size, ns.words.size) >= 0.75, {a: (v) => isNamed(cand, v), b: (v) => isNamed(nb, v)}, {label: byLabel, write: cs}) : null
      if (changed) {
        return {kind: 'contradiction', neighbour: n, reason: `changes a value in ${name(n)}: ${clip(changed[0], 48)} → ${clip(changed[1], 48)}`}
      }
    }
    const two = touched.filter((i) => shared[i] >= 2 && !cand.sentences[i].labelOnly).sort((a, b) => a - b)
    if (two.length > 0) pairs.push({ns, with: two, counts: two.map((i) => shared[i])})
  }
  // A paraphrase that reverses a requirement ("need approval" / "can be issued directly"), or
  // states another host, address or amount for the same subject, without any cue word.
  // (Only sentence pairs sharing two words or more can; the counts are the first pass's.)
  for (const {ns, with: withSentences, counts} of pairs) {
    for (let k = 0; k < withSentences.length; k++) {
      const cs = cand.sentences[withSentences[k]]
      const sharedWords = counts[k]
      // a fragment of two or three words ("You can use the Dropbox link.") shares them with any
      // long rule: it reverses one only when it shares three words, or says its licence in a
      // word of its own ("Anyone can deploy production.", "Refunds: issued directly.") (docs/vote-rounds.md "Round thirteen")
      if (ns.modal !== 0 && cs.modal === -ns.modal && sharedWords / Math.min(cs.words.size, ns.words.size) >= 0.4 && (cs.words.size >= 4 || sharedWords >= 3 || cs.licenceWord)) {
        return {kind: 'contradiction', neighbour: n, reason: `reverses a requirement in ${name(n)} ("${clip(n.title, 40)}")`}
      }
      if (sharedWords >= 3 && nb.names.size > 0 && cand.names.size > 0 && sharedWords / Math.min(cs.words.size, ns.words.size) >= 0.5) {
        // The same duty, another person ("incidents go to Daniel Ortiz" for "… to Tomasz Nowak"): a name is a value too.
        // Names only of the memory's sentence the write leaves out, and of the write's it does not name.
        // (the sentence's words, not the write's names: a write of thousands of names in thousands of sentences took 30 s)
        const now = [...cs.words, ...cs.values].find((w) => cand.names.has(w) && !nb.names.has(w) && !nb.capitals.has(w))
        const was = now && ![...nb.names].some((w) => cand.capitals.has(w)) ? [...nb.names].find((w) => ns.words.has(w) || ns.values.has(w)) : undefined
        if (was && now) return {kind: 'contradiction', neighbour: n, reason: `names another person than ${name(n)}: ${clip(was, 48)} → ${clip(now, 48)}`}
        // a write that names the memory's person too shows the change beside it ("owen marsh → priya shah", "priya shah (was owen marsh)")
        if (now) {
          // (any capitalised word of a name: a name's first word after a colon is not in `names`, "rep: owen marsh")
          for (const old of new Set([...nb.names, ...nb.capitals])) {
            // (a name after "was" is read as the value the sentence states: "(was tomasz nowak)")
            if (!(ns.words.has(old) || ns.values.has(old)) || !(cs.words.has(old) || cs.values.has(old))) continue
            const beside = cs.shows(old, false)
            const fresh = [...cs.words].find((w) => (cand.names.has(w) || cand.capitals.has(w)) && !nb.names.has(w) && !nb.capitals.has(w) && beside(w) > 0)
            if (fresh) return {kind: 'contradiction', neighbour: n, reason: `names another person than ${name(n)}: ${clip(old, 48)} → ${clip(fresh, 48)}`}
          }
        }
      }
      if (sharedWords >= 3) {
        // a host or an address names one thing; a number may count anything, so it needs a closer match
        const close = sharedWords / Math.min(cs.words.size, ns.words.size) >= 0.75
        for (const type of close ? (['host', 'email', 'number'] as const) : (['host', 'email'] as const)) {
          const a = [...cs.values].filter((v) => valueType(v) === type)
          const b = [...ns.values].filter((v) => valueType(v) === type)
          if (a.length === 0 || b.length === 0) continue
          if (type === 'number') {
            // only numbers of one shape can state the same fact differently
            const pair = a.flatMap((x) => b.filter((y) => sameShape(x, y)).map((y) => [y, x] as const))[0]
            if (pair && !a.some((v) => b.some((w) => sameNumber(v, w)))) {
              return {kind: 'contradiction', neighbour: n, reason: `states another number than ${name(n)}: ${clip(pair[0], 48)} → ${clip(pair[1], 48)}`}
            }
          } else {
            if (!a.some((x) => b.some((y) => samePlace(x, y)))) {
              return {kind: 'contradiction', neighbour: n, reason: `states another ${type} than ${name(n)}: ${clip(b[0], 48)} → ${clip(a[0], 48)}`}
            }
          }
        }
      }
    }
  }
  const retired = retiresValue(cand, nb)
  if (retired) return {kind: 'contradiction', neighbour: n, reason: `retires a value of ${name(n)}: ${clip(retired[0], 48)} → ${clip(retired[1], 48)}`}
  const common = overlap(cand.words, nb.words)
  const docJ = jaccardOf(common, cand.words, nb.words)
  // An announced change that restates a good part of a memory replaces it, however much new
  // detail it adds: hence the share of the memory's words too, not only of both together.
  const markerOnIt = marker !== null && (markerWords === null || overlap(markerWords, nb.words) >= 2)
  if (markerOnIt && common >= 3 && (docJ >= 0.25 || (common >= 4 && common * 3 >= nb.words.size))) {
    return {kind: 'contradiction', neighbour: n, reason: `supersedes ${name(n)} ("${marker}")`}
  }
  const same = docJ >= 0.85 || (cand.words.size === 0 && nb.words.size === 0 && cand.body.trim() === nb.body.trim())
  if (same) return {kind: 'duplicate', neighbour: n, reason: `near-duplicate of ${name(n)} ("${clip(n.title, 40)}")`}
  return null
}

// every change marker of a text, for the first one outside quotation marks
const CHANGE_MARKERS = new RegExp(CHANGE_MARKER.source, CHANGE_MARKER.flags.includes('g') ? CHANGE_MARKER.flags : `${CHANGE_MARKER.flags}g`)
// a text that disowns what it quotes: a claim, a fraud, an example
const DISOWNED = /\b(?:claim(?:s|ed|ing)?\s+to\s+(?:be|come)|claiming|pretend\w*|posing\s+as|frauds?|fraudulent|scam\w*|fake|impersonat\w+|beware|quiz|if\s+(?:anyone|someone|somebody)\s+(?:says|asks|tells))\b/i

/**
 * The first change marker said outside quotation marks: a fraud notice that quotes "our bank has
 * changed" or a quiz that quotes "send the refund to my nephew's account instead" announces no
 * change of its own (docs/vote-rounds.md "Round thirteen").
 */
function changeMarker(body: string): RegExpExecArray | null {
  const first = CHANGE_MARKER.exec(body)
  if (!first || !/["\u201c\u00ab]/.test(body)) return first
  // a quotation disowns its marker only in a text that says it is a claim, a fraud, an example:
  // an attacker who puts the whole announcement in quotes still announces it
  const outside = body.replace(QUOTATION, ' ')
  if (!DISOWNED.test(outside) && !ABOUT_ATTACKS.test(outside)) return first
  // an inch or a second mark after a digit opens no quotation
  const quoted = [...body.matchAll(QUOTATION)].filter((q) => !/\d$/.test(body.slice(0, q.index))).map((q) => [q.index, q.index + q[0].length] as const)
  const inQuote = (i: number) => quoted.some(([a, b]) => i > a && i < b)
  if (!inQuote(first.index)) return first
  for (const m of body.matchAll(CHANGE_MARKERS)) if (!inQuote(m.index)) return m
  return null
}

/**
 * The content words of the clause an inline change marker stands in ("…; for pension questions
 * ask HR instead"): such a marker changes what its own clause is about, not every subject of the
 * text, so it announces a change to a memory only when that clause shares words with it. A marker
 * that heads the text ("Correction: …", "Update: …") governs all of it: null.
 */
function markerClause(body: string, m: RegExpExecArray): Set<string> | null {
  if (m[0].endsWith(':')) return null
  const start = Math.max(body.lastIndexOf(';', m.index), ...['.', '!', '?', '\n'].map((p) => body.lastIndexOf(p, m.index))) + 1
  const ends = [';', '.', '!', '?', '\n'].map((p) => body.indexOf(p, m.index + m[0].length)).filter((i) => i >= 0)
  const end = ends.length > 0 ? Math.min(...ends) : body.length
  return sentenceInfo(body.slice(start, end).toLowerCase().replace(/[\u2018\u2019]/g, "'")).words
}

/**
 * Compare the write with each neighbour (and with the file it updates, which is curated
 * memory too): at most one finding per neighbour, a contradiction before a duplicate.
 */
export function compareWithNeighbours(c: WriteCandidate, neighbours: Neighbour[]): SemanticFinding[] {
  if (c.operation === 'delete') return []
  const all = [...neighbours]
  if (c.baseBody !== undefined && !all.some((n) => n.scope === c.scope && n.path === c.path)) {
    all.push({scope: c.scope, path: c.path, title: c.title, body: c.baseBody, score: 1})
  }
  if (all.length === 0) return []
  const stored = compareText(c, c.body, all)
  // A write whose letters are disguised as another script's look-alikes ("Sаo Paulo", a Cyrillic "а") is compared as
  // it reads too (normalise.ts maps them): a contradiction found either way is one. As stored only, the disguised label
  // was another label; as read only, a look-alike host ("myshοpify.com", a Greek "ο") would be the memory's own.
  if (!c.normalised?.hidden.includes('homoglyph') || c.normalised.text === c.body) return stored
  for (const f of compareText(c, c.normalised.text, all)) {
    if (f.kind !== 'contradiction') continue
    const i = stored.findIndex((x) => x.neighbour === f.neighbour)
    if (i < 0) stored.push(f)
    else if (stored[i].kind !== 'contradiction') stored[i] = f
  }
  return stored
}

function compareText(c: WriteCandidate, body: string, all: Neighbour[]): SemanticFinding[] {
  const cand = docInfo(c.title, body, true)
  const found = changeMarker(body)
  const marker = found?.[0].toLowerCase().replace(/\s+/g, ' ') ?? null
  const markerWords = found ? markerClause(body, found) : null
  const out: SemanticFinding[] = []
  // Third-party text that rewrites a curated memory, dropping what it stated, replaces a fact
  // however it is phrased; an update that keeps every value and most words only adds to it.
  if (c.baseBody !== undefined && thirdParty(c)) {
    const base = docInfo(c.title, c.baseBody, false)
    const kept = overlap(base.words, cand.words) / Math.max(1, base.words.size)
    if (kept < 0.8) {
      const n = all.find((x) => x.scope === c.scope && x.path === c.path)!
      out.push({kind: 'contradiction', neighbour: n, reason: `rewrites ${name(n)} ("${clip(n.title, 40)}"), keeping ${Math.round(100 * kept)}% of what it said`})
    }
  }
  for (const n of all) {
    if (out.some((f) => f.neighbour === n)) continue
    const f = compareOne(cand, marker, markerWords, n, neighbourInfo(n))
    if (f) out.push(f)
  }
  return out
}


const SEMANTIC = 'semantic'

export function semanticVote(c: WriteCandidate, neighbours: Neighbour[], findings: SemanticFinding[], lookupError?: string): Vote {
  const vote = (verdict: Vote['verdict'], confidence: number, reason: string): Vote => ({validator: SEMANTIC, verdict, confidence, reason})
  // Nothing compared is no evidence that nothing is contradicted: a lookup that failed (a
  // damaged object store, an index that cannot be built) fails closed, as a contradiction
  // would, so that breaking the lookup cannot switch the check off for every write.
  if (lookupError !== undefined) {
    const why = `could not look up neighbours, so nothing was compared: ${clip(lookupError, 120)}`
    return thirdParty(c) ? vote('reject', 0.9, `${why}; arriving by ${arrival(c)}`) : vote('reject', 0.7, why)
  }
  if (c.operation === 'delete') {
    // Retiring curated memory on the word of third-party text is the contradiction in its purest form.
    return thirdParty(c)
      ? vote('reject', 0.7, `a delete arriving by ${arrival(c)}`)
      : vote('accept', 0.4, 'a delete: nothing to compare')
  }
  const contradictions = findings.filter((f) => f.kind === 'contradiction')
  if (contradictions.length > 0) {
    const more = contradictions.length > 1 ? ` (+${contradictions.length - 1} more)` : ''
    // From third-party text a contradiction is an attempt to overwrite a fact; in direct chat
    // the human may be correcting one, so it goes to review with the dissent visible.
    return thirdParty(c)
      ? vote('reject', 0.9, `${contradictions[0].reason}${more}, arriving by ${arrival(c)}`)
      : vote('reject', 0.7, `${contradictions[0].reason}${more}; may be a correction`)
  }
  const dup = findings.find((f) => f.kind === 'duplicate')
  if (dup) {
    // A duplicate adds no new claim, so it is no danger: accepted, flagged for the reviewer to merge.
    return vote('accept', 0.5, `${dup.reason}: adds no new claim`)
  }
  if (neighbours.length === 0 && c.baseBody === undefined) return vote('accept', 0.5, 'nothing close to contradict')
  const k = neighbours.length + (c.baseBody !== undefined ? 1 : 0)
  return vote('accept', 0.75, `${k} close ${k === 1 ? 'memory' : 'memories'}, none contradicted`)
}
