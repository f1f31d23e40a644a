/**
 * Flags: what the reviewer should look at. They never decide alone; the validators weigh
 * the same evidence. Reasons say which phrase or kind matched, never a value.
 */
import {isIndirectOrigin} from '../../memory/memory.js'
import {unattestedReason} from '../../session/prompts.js'
import {ABOUT_ATTACKS, detectInstructions, type InstructionHit, QUOTATION} from './instruction.js'
import {agendaHits} from './intent.js'
import {SPLIT_CAP} from '../normalise.js'
import type {SemanticFinding} from './semantic.js'
import {redactText} from '../redact/index.js'
import {describeSensitive, findSensitive} from './sensitive.js'
import {shellExfil} from './shell.js'
import type {FlagHit, WriteCandidate} from './types.js'
import {clip} from '../../text/clip.js'

/** A body at or above this share of the limit is flagged as near it. */
const NEAR_LIMIT = 0.9

/** The text a reader of this memory would see: title and body. */
export const visibleText = (c: WriteCandidate) => (c.title ? `${c.title}\n${c.body}` : c.body)

// Explicit direction overrides (RLO, LRO) and the pop that ends them. Unlike the marks and
// embeddings that right-to-left scripts use, an override has no business in prose: it shows
// the reader characters in an order other than the one an agent reads.
const OVERRIDE = /[\u202d\u202e]/
const OVERRIDE_SPAN = /\u202e([^\u202c\u202d\n]*)\u202c?/g
// English function words spelt backwards: text stored reversed so that an override shows it forwards.
const REVERSED_WORDS = /\b(?:eht|dna|rof|htiw|tuohtiw|uoy|ruoy|siht|taht|era|morf|lla|ton|evah|dnes|erongi|ruo|sresu|resu)\b/gi

const reversed = (s: string) => [...s].reverse().join('')

/** The text as a reader sees it: each right-to-left override span reversed. */
function asDisplayed(text: string): string {
  return text.replace(OVERRIDE_SPAN, (_m, inner: string) => reversed(inner))
}

/**
 * Direction tricks. The write path strips the controls before the vote (the normaliser then
 * reports 'bidi'), so the stored order is what an agent reads while a viewer showed the
 * reverse: look at the text both ways. Marks used by right-to-left scripts reverse nothing
 * English, so only reversed English counts, or an override still present.
 */
function directionHits(c: WriteCandidate, kinds: Set<string>): InstructionHit[] {
  const override = OVERRIDE.test(c.body)
  if (!override && !c.normalised.hidden.includes('bidi')) return []
  const text = visibleText(c)
  const shown = override ? asDisplayed(text) : reversed(text)
  const out: InstructionHit[] = []
  for (const h of detectInstructions(shown)) {
    if (kinds.has(h.kind)) continue
    kinds.add(h.kind)
    out.push({kind: h.kind, strength: 'strong', reason: `disguised ${h.reason}`})
  }
  if (out.length === 0 && !kinds.has('bidi-override') && (override || (text.match(REVERSED_WORDS)?.length ?? 0) >= 2)) {
    kinds.add('bidi-override')
    out.push({kind: 'bidi-override', strength: 'medium', reason: 'text direction trick: a reader is shown an order other than the stored one'})
  }
  return out
}

/**
 * The folded lines that folding changed, each with the line before and after it (a shape may
 * span a line break): a disguise can only be where the text changed, and most of a long body
 * is usually untouched. The whole folded text when folding changed the line count.
 */
function changedLines(body: string, folded: string): string {
  const a = body.split('\n')
  const b = folded.split('\n')
  if (a.length !== b.length) return folded
  const keep = new Uint8Array(b.length)
  let any = false
  for (let i = 0; i < b.length; i++) {
    if (a[i] === b[i]) continue
    any = true
    keep[i] = 1
    if (i > 0) keep[i - 1] = 1
    if (i + 1 < b.length) keep[i + 1] = 1
  }
  if (!any) return ''
  const out: string[] = []
  for (let i = 0; i < b.length; i++) {
    if (keep[i]) out.push(b[i])
    else if (out.length > 0 && out[out.length - 1] !== '') out.push('')
  }
  return out.join('\n')
}

/**
 * Instruction hits over the visible text, the folded text and every decoded blob.
 * A shape that only appears once look-alike or hidden characters are folded away, or
 * once a blob is decoded, was disguised on purpose: it counts as strong.
 */
export function instructionHits(c: WriteCandidate): InstructionHit[] {
  const visible = visibleText(c)
  const plain = detectInstructions(visible)
  const out = [...plain]
  const kinds = new Set(plain.map((h) => h.kind))
  const folded = c.normalised.text
  if (folded && folded !== c.body) {
    const changed = changedLines(c.body, folded)
    for (const h of detectInstructions(c.title ? `${c.title}\n${changed}` : changed)) {
      if (kinds.has(h.kind)) continue
      kinds.add(h.kind)
      out.push({kind: h.kind, strength: 'strong', reason: `disguised ${h.reason}`})
    }
  }
  out.push(...directionHits(c, kinds))
  // a text about attacks shows its examples spaced out or in leetspeak to a human (an attacker's
  // review: "spaced-out text such as I g n o r e  y o u r  r u l e s defeats filters"): only the
  // separator reading, which was there before, is tried on it
  const collapsed = collapseSpelled(visible, !ABOUT_ATTACKS.test(visible))
  if (collapsed !== null) {
    for (const h of detectInstructions(collapsed)) {
      if (kinds.has(h.kind)) continue
      kinds.add(h.kind)
      out.push({kind: h.kind, strength: 'strong', reason: `disguised ${h.reason}`})
    }
  }
  for (const blob of c.normalised.decoded) {
    const found = detectInstructions(blob)
    if (found.length > 0) {
      out.push({kind: 'encoded', strength: 'strong', reason: `encoded ${found[0].reason}`})
      break
    }
  }
  if (!kinds.has('agenda')) out.push(...agendaOf(c, visible, collapsed))
  out.push(...quotedOrders(visible))
  // a shell command that ships the machine's secrets (shell.ts): the code check above reads programs;
  // one found only in a decoded blob (`echo … | base64 -d | sh`) was hidden on purpose
  if (!kinds.has('exfiltration')) {
    const shell = shellExfil(visible)
    out.push(...shell)
    if (shell.length === 0) {
      for (const blob of c.normalised.decoded) {
        const found = shellExfil(blob).find((h) => h.kind === 'exfiltration')
        if (found) {
          out.push({kind: 'encoded', strength: 'strong', reason: `encoded ${found.reason}`})
          break
        }
      }
    }
  }
  return out
}

/**
 * A text about attacks has its quotations left out by the rules and the agenda check (a security
 * note that quotes an injection shows an example to a human). An attack can call itself one
 * ("this is not another phishing mail: \"…\""), so an order in those quotations is still weighed:
 * as dissent, which quarantines only beside another validator's objection (docs/vote-rounds.md "Round eight").
 */
function quotedOrders(visible: string): InstructionHit[] {
  if (!ABOUT_ATTACKS.test(visible)) return []
  const quoted = [...visible.matchAll(QUOTATION)].map((m) => m[0].slice(1, -1)).join('\n')
  if (quoted === '') return []
  const first = detectInstructions(quoted).find((h) => h.strength !== 'weak') ?? agendaHits(quoted)[0]
  return first ? [{kind: 'quoted', strength: 'weak', reason: `quoted in a text about attacks: ${first.reason}`}] : []
}

/**
 * The agenda check (intent.ts) over the text as shown, then as folded, spelt out and decoded.
 * Its hit is of medium strength: from third-party text or a tainted session the delivery
 * validator refuses it; from direct chat, where the human may be the owner giving a standing
 * order, it is dissent, which quarantines only with a second validator's objection (the
 * human in the chat need not be the owner: a shared assistant's users, another tenant's
 * staff). An agenda that shows only once the text is folded, spelt out or decoded was
 * disguised on purpose, two signals in one: it is strong from any origin.
 */
function agendaOf(c: WriteCandidate, visible: string, collapsed: string | null): InstructionHit[] {
  const plain = agendaHits(visible)
  // the write path stores (and votes on) the text without its invisible characters: an agenda
  // whose own words they split was disguised as much as one the folding below reveals
  const split = c.normalised.split ?? []
  const splitIn = (passage: string | undefined): boolean => {
    if (passage === undefined || split.length === 0) return false
    // past the cap, decoy split words could crowd an agenda's own out of the list: any agenda counts
    if (split.length >= SPLIT_CAP) return true
    const lower = passage.toLowerCase()
    return split.some((w) => lower.includes(w))
  }
  if (plain.length > 0) {
    return plain.map((h) => {
      if (h.reason.startsWith('disguised ')) return {...h, strength: 'strong'}
      if (splitIn(h.passage)) return {...h, strength: 'strong', reason: `disguised (words split by invisible characters) ${h.reason}`}
      return h
    })
  }
  const folded = c.normalised.text
  for (const text of [folded && folded !== c.body ? folded : null, collapsed, ...c.normalised.decoded]) {
    if (text === null) continue
    const found = agendaHits(text)
    if (found.length > 0) return [{kind: 'agenda', strength: 'strong', reason: found[0].reason.startsWith('disguised ') ? found[0].reason : `disguised ${found[0].reason}`}]
  }
  return []
}

// Words spelt letter by letter with a separator ("e.x.p.o.r.t", "s-h-a-r-e"): a filter reads
// letters, a model reads the word. Three letters at least, so "e.g." and "i.e." stay as they are.
const SPELLED = /(?<![\p{L}\p{N}])\p{L}(?:[-._*\u00b7]\p{L}(?![\p{L}\p{N}])){2,}[-._*\u00b7]?/gu
// Letters spaced out one by one, words apart by two spaces or more ("I g n o r e  y o u r  r u l e s"):
// three letters at least; a list such as "a b c" joined is a reading, never what is stored.
const SPACED = /(?<![\p{L}\p{N}])\p{L}(?: \p{L}(?![\p{L}\p{N}])){2,}/gu
// Leetspeak: a word of letters and the digits that stand for letters ("1gn0r3", "p455w0rd"). Not "@"
// or "$", which addresses and prices use: "seguranca@example.com.br" is no word spelt in leet.
const LEET_WORD = /(?<![\p{L}\p{N}@.])(?=\p{L}*\d)(?=\d*\p{L})[\p{L}013457]{3,}(?![\p{L}\p{N}@])/gu
const LEET: Record<string, string> = {'0': 'o', '1': 'i', '3': 'e', '4': 'a', '5': 's', '7': 't'}
/** Three leet words at least, so a product code or two ("mp3", "B2B") is no reading of its own. */
const LEET_MIN = 3

/**
 * The text with each word spelt out letter by letter joined, and (unless `spaced` is false)
 * letters spaced out and leetspeak read as words, or null when there is none of them: a reading
 * the rules and the agenda check are tried on, as on a decoded blob.
 */
export function collapseSpelled(text: string, spaced = true): string | null {
  // each reading joins or replaces characters, so a text that changed had one
  let out = text.replace(SPELLED, (m) => m.replace(/[-._*\u00b7]/g, ''))
  if (spaced) {
    out = out.replace(SPACED, (m) => m.replace(/ /g, ''))
    if ((out.match(LEET_WORD)?.length ?? 0) >= LEET_MIN) out = out.replace(LEET_WORD, (w) => w.replace(/[013457]/g, (d) => LEET[d]))
  }
  return out === text ? null : out
}

export interface FlagEvidence {
  hits: InstructionHit[]
  findings: SemanticFinding[]
}

export function flagsFrom(c: WriteCandidate, ev: FlagEvidence): FlagHit[] {
  const flags: FlagHit[] = []
  if (ev.hits.length > 0) flags.push({flag: 'instruction-like', reason: ev.hits.map((h) => h.reason).join('; ')})

  // a title that is the body's own first line (the default) is not counted a second time
  const titleInBody = c.title !== '' && c.body.includes(c.title.replace(/…$/, ''))
  const pii = describeSensitive(findSensitive(titleInBody ? c.body : `${c.title}\n${c.body}`))
  if (pii) flags.push({flag: 'sensitive', reason: pii})

  const taint: string[] = []
  if (c.session?.tainted) taint.push(`session tainted${c.session.taint_reasons.length > 0 ? ` (${clip(redactText(c.session.taint_reasons.join(', ')))})` : ''}`)
  if (isIndirectOrigin(c.origin)) taint.push(`origin ${c.origin} is third-party text`)
  if (c.unattested && c.unattested.length > 0) taint.push(unattestedReason(c.unattested))
  if (taint.length > 0) flags.push({flag: 'tainted-source', reason: taint.join('; ')})

  const contradictions = ev.findings.filter((f) => f.kind === 'contradiction')
  if (contradictions.length > 0) flags.push({flag: 'contradiction', reason: contradictions.map((f) => f.reason).join('; ')})
  const duplicates = ev.findings.filter((f) => f.kind === 'duplicate')
  if (duplicates.length > 0) flags.push({flag: 'duplicate', reason: duplicates.map((f) => f.reason).join('; ')})

  const kinds = Object.entries(c.redactions).filter(([, n]) => n > 0)
  if (kinds.length > 0) flags.push({flag: 'secret-redacted', reason: kinds.map(([k, n]) => `${k}×${n}`).join(', ')})

  const obfuscated: string[] = []
  if (c.normalised.hidden.length > 0) obfuscated.push(`hidden text: ${clip(redactText(c.normalised.hidden.slice(0, 3).join(', ')))}`)
  const disguised = ev.hits.filter((h) => h.kind === 'encoded' || h.reason.startsWith('disguised '))
  for (const h of disguised) obfuscated.push(h.reason)
  if (obfuscated.length > 0) flags.push({flag: 'obfuscated', reason: obfuscated.join('; ')})

  if (c.bodyBytes > c.maxBodyBytes) {
    flags.push({flag: 'oversized', reason: `${c.bodyBytes} bytes, over the ${c.maxBodyBytes}-byte limit`})
  } else if (c.maxBodyBytes > 0 && c.bodyBytes >= NEAR_LIMIT * c.maxBodyBytes) {
    flags.push({flag: 'oversized', reason: `${c.bodyBytes} bytes, near the ${c.maxBodyBytes}-byte limit`})
  }
  return flags
}
