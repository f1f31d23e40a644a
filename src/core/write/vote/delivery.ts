/**
 * The delivery validator: how did this text reach the agent, and does it read like an
 * order to the agent? Third-party vectors alone only lower confidence (an email can hold
 * a fact worth keeping); an instruction that arrived by one is refused. In direct chat the
 * human may be stating a standing preference, so only the unmistakable shapes veto there.
 */
import {clip} from '../../text/clip.js'
import {escapeRegExp} from '../../text/regexp.js'
import {visibleText} from './flags.js'
import {ABOUT_ATTACKS, type InstructionHit, strongest} from './instruction.js'
import {signals} from './intent.js'
import type {Vote, VoteContext, WriteCandidate} from './types.js'
import {arrival, thirdParty} from './types.js'

const DELIVERY = 'delivery'


interface Objection {
  confidence: number
  reason: string
}

function burstObjection(label: string, count: number, limit: number, windowMinutes: number): Objection | null {
  if (count < limit) return null
  // Twice the limit is a flood, not an enthusiastic session: veto.
  const confidence = count >= 2 * limit ? 0.9 : 0.7
  return {confidence, reason: `${count} writes by this ${label} in ${windowMinutes} min (limit ${limit})`}
}

/**
 * The protected path prefix or term a write touches (from the owner-signed config), or null.
 * Terms are matched in the folded text, case-insensitively, at word starts: "approval"
 * also catches "approvals".
 */
function protectedHit(c: Pick<WriteCandidate, 'path' | 'title' | 'body' | 'normalised'>, p: {paths: string[]; terms: string[]} | undefined): string | null {
  if (!p) return null
  const path = p.paths.find((prefix) => c.path === prefix.replace(/\/$/, '') || c.path.startsWith(prefix.endsWith('/') ? prefix : `${prefix}/`))
  if (path) return `the protected path ${path}`
  const text = `${c.title}\n${c.body}\n${c.normalised.text}`
  for (const t of p.terms) {
    if (new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(t)}`, 'iu').test(text)) return `the protected term "${t}"`
  }
  return null
}

/**
 * A word said many times in a row is padding: it crowds a model's attention towards what
 * follows ("URGENT URGENT …", "approved approved …", "기억해 기억해 …"). Honest text repeats a
 * word five times at most in the corpus; the attacks that pad, twenty times and more (docs/vote-rounds.md
 * "Round thirteen"). Only words count (letters, in any script): numbers, signs and emoji repeat
 * in logs, tables and reviews ("200 200 …", "| yes |", "👏👏👏"), though one emoji twenty times
 * over is padding as a word is. A word that asks for attention
 * (urgent, remember, approved…) is padding from eight times in a row, any word from twenty, from
 * any origin; eight times of another word ("PASS", "la la la") only dissents.
 */
const PADDING_TIMES = 8
const PADDING_ANY_WORD = 20
// the trailing run is matched from its own start (a lookbehind of its class), so a token of signs is read once
const PADDING_EDGES = /^[.,!:;?\-–—|/"'“”‘’()[\]]+|(?<![.,!:;?\-–—|/"'“”‘’()[\]])[.,!:;?\-–—|/"'“”‘’()[\]]+$/g
const ATTENTION_WORD =
  /^(?:urgent|important|attention|remember|note|notice|alert|warning|system|admin|override|priority|critical|approved|verified|confirmed|authori[sz]ed|mandatory|ignore|must|now|immediately|asap|required|pilne|wa[żz]ne|wichtig|dringend|achtung|urgente|importante|atenci[óo]n|aten[çc][ãa]o|attenzione|срочно|важно|внимание|запомни|注意|重要|紧急|緊急|了解|確認|기억해|확인|중요|긴급|주의|ध्यान|ज़रूरी|जरूरी|تنبيه|عاجل|مهم|نظام|acil|önemli|dikkat|khẩn|quan trọng|penting|segera)$/iu

export function padding(text: string): {token: string; times: number; attention: boolean} | null {
  let run = 0
  let prev = ''
  let best: {token: string; times: number; attention: boolean} | null = null
  // words apart by white space, the punctuation around them dropped ("important! important!")
  for (const raw of text.split(/\s+/)) {
    const word = raw.replace(PADDING_EDGES, '')
    if (word === '') continue
    const token = word.toLowerCase()
    run = token === prev ? run + 1 : 1
    prev = token
    if (run < PADDING_TIMES || !/\p{L}/u.test(token)) continue
    const attention = ATTENTION_WORD.test(token)
    if (best === null || run > best.times) best = {token: word, times: run, attention}
  }
  // one emoji twenty times and more ("🚨🚨🚨…", "🙏 🙏 🙏 …"): a review's "👏👏👏" is three
  for (const m of text.matchAll(EMOJI_RUN)) {
    const times = [...m[0].matchAll(EMOJI)].length
    if (best === null || times > best.times) best = {token: m[1], times, attention: false}
  }
  return best
}
const EMOJI = /\p{Extended_Pictographic}/gu
const EMOJI_RUN = /(\p{Extended_Pictographic}[\u{FE0F}\u{1F3FB}-\u{1F3FF}]?)(?:\s*\1){19,}/gu

/** Words spelt with look-alike letters from this many on: one is a typo or a quoted example, two are a disguise. */
const LOOKALIKE_WORDS = 2

/**
 * Words hidden from the human who reviews the write but read by a model: text spelt in
 * Unicode tag characters, bytes carried by a run of variation selectors (engram stores the
 * text without either), a long run of zero-width characters, or Latin words spelt with
 * look-alike letters of another script ("раураl"). Nobody types these by accident, and none
 * showed in an honest note of the corpus (docs/vote-rounds.md "Round thirteen"): a veto from any origin. A
 * text about such attacks, which shows an example to people, only dissents.
 */
function concealment(n: WriteCandidate['normalised'], visible: string): Objection | null {
  const kind = HIDDEN_TEXT.find(([k]) => n.hidden.includes(k))
  const what = kind ? kind[1] : (n.lookalikes ?? 0) >= LOOKALIKE_WORDS ? `${n.lookalikes} words spelt with look-alike letters` : null
  // A cipher the reviewer can see (ROT13, backwards, escapes, leetspeak) hides nothing from a
  // person: it is read (normalise.ts), and what it says is judged like the rest of the text.
  if (what === null) return null
  if (ABOUT_ATTACKS.test(visible)) return {confidence: 0.7, reason: `hides words from the reader (${what}), in a text about attacks`}
  return {confidence: 0.95, reason: `hides words from the reader: ${what}`}
}

/** The kinds of hidden text normalise.ts names, first found first said. */
const HIDDEN_TEXT: [kind: string, what: string][] = [
  ['tag-text', 'text spelt in invisible tag characters'],
  ['variation-text', 'bytes carried by variation selectors'],
  ['zero-width-text', 'a long run of zero-width characters'],
]

export function deliveryVote(c: WriteCandidate, ctx: {recentWrites: VoteContext['recentWrites']; config: Pick<VoteContext['config'], 'burst'> & Partial<Pick<VoteContext['config'], 'protected'>>}, hits: InstructionHit[]): Vote {
  const vote = (verdict: Vote['verdict'], confidence: number, reason: string): Vote => ({validator: DELIVERY, verdict, confidence, reason})
  const objections: Objection[] = []
  const indirect = thirdParty(c)
  const tainted = c.session?.tainted === true
  const visible = visibleText(c)
  // an order quoted in a text about attacks is dissent from any origin (flags.ts quotedOrders)
  const quoted = hits.filter((h) => h.kind === 'quoted')
  hits = hits.filter((h) => h.kind !== 'quoted')
  if (quoted.length > 0 && hits.length === 0) objections.push({confidence: 0.7, reason: quoted[0].reason})
  const level = strongest(hits)

  if (level !== null) {
    const top = hits.find((h) => h.strength === level)!
    const what = `${top.reason}${hits.length > 1 ? ` (+${hits.length - 1} more)` : ''}`
    if (level === 'strong') objections.push({confidence: 0.95, reason: `instruction shape: ${what}`})
    // A mail is written to its recipient: a mail that only asks someone to act ("could you send me the
    // contract?") asks a person, as a request in chat asks the owner's assistant. Dissent, no veto,
    // unless the act is a sensitive one (money, secrets, access, deploys, data leaving).
    else if (c.origin === 'email' && !tainted && hits.every((h) => h.kind === 'asks-to-act') && !signals(visible).has('sensitive')) {
      objections.push({confidence: 0.6, reason: `instruction shape in ${c.origin}, asking its recipient: ${what}`})
    } else if (indirect) objections.push({confidence: 0.9, reason: `instruction shape arriving by ${arrival(c)}: ${what}`})
    else if (tainted) objections.push({confidence: 0.9, reason: `instruction shape from a tainted session: ${what}`})
    else objections.push({confidence: level === 'medium' ? 0.7 : 0.6, reason: `instruction shape in ${c.origin}: ${what}`})
  }

  const hides = concealment(c.normalised, visible)
  if (hides) objections.push(hides)
  const pad = padding(visible)
  if (pad) {
    const what = `"${clip(pad.token, 24)}" ${pad.times} times in a row`
    const steers = pad.attention || pad.times >= PADDING_ANY_WORD
    // from any origin: a person who types "please" twenty times before a rule is padding it too
    // (docs/vote-rounds.md "Round fourteen": out of fold 15 padded chat attacks more, no honest write)
    if (steers) objections.push({confidence: 0.9, reason: `padding that steers a model's attention, ${indirect || tainted ? `arriving by ${arrival(c)}` : `in ${c.origin}`}: ${what}`})
    else objections.push({confidence: 0.7, reason: `a word repeated to pad the text: ${what}`})
  }

  const guarded = protectedHit(c, ctx.config.protected)
  if (guarded && (indirect || tainted)) {
    objections.push({confidence: 0.9, reason: `touches ${guarded}, which the signed config protects, ${indirect ? `arriving by ${arrival(c)}` : 'from a tainted session'}`})
  }

  const {burst} = ctx.config
  const s = burstObjection('session', ctx.recentWrites.session, burst.per_session, burst.window_minutes)
  if (s) objections.push(s)
  const a = burstObjection('author', ctx.recentWrites.author, burst.per_author, burst.window_minutes)
  if (a) objections.push(a)

  if (objections.length > 0) {
    objections.sort((x, y) => y.confidence - x.confidence)
    return vote('reject', objections[0].confidence, objections.map((o) => o.reason).join('; '))
  }
  if (indirect) return vote('accept', tainted ? 0.45 : 0.55, `arrived by ${arrival(c)} (third-party text); no instruction shape`)
  if (tainted) return vote('accept', 0.55, `session tainted (${c.session!.taint_reasons.slice(0, 3).join(', ') || 'no reason recorded'}); no instruction shape`)
  return vote('accept', 0.8, `${c.origin}, no instruction shape, within burst limits`)
}
