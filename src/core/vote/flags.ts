/**
 * Flags: what the reviewer should look at. They never decide alone; the validators weigh
 * the same evidence. Reasons say which phrase or kind matched, never a value.
 */
import {INDIRECT_ORIGINS, type Origin} from '../memory.js'
import {detectInstructions, type InstructionHit} from './instruction.js'
import type {SemanticFinding} from './semantic.js'
import {describeSensitive, findSensitive} from './sensitive.js'
import type {FlagHit, WriteCandidate} from './types.js'

/** A body at or above this share of the limit is flagged as near it. */
export const NEAR_LIMIT = 0.9

const clip = (s: string, n = 60) => {
  const t = s.replace(/\s+/g, ' ').trim()
  return t.length > n ? `${t.slice(0, n - 1)}…` : t
}

/** The text a reader of this memory would see: title and body. */
export const visibleText = (c: WriteCandidate) => (c.title ? `${c.title}\n${c.body}` : c.body)

/**
 * Instruction hits over the visible text, the folded text and every decoded blob.
 * A shape that only appears once look-alike or hidden characters are folded away, or
 * once a blob is decoded, was disguised on purpose: it counts as strong.
 */
export function instructionHits(c: WriteCandidate): InstructionHit[] {
  const plain = detectInstructions(visibleText(c))
  const out = [...plain]
  const kinds = new Set(plain.map((h) => h.kind))
  const folded = c.normalised.text
  if (folded && folded !== c.body) {
    for (const h of detectInstructions(c.title ? `${c.title}\n${folded}` : folded)) {
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
  return out
}

export interface FlagEvidence {
  hits: InstructionHit[]
  findings: SemanticFinding[]
}

export function flagsFrom(c: WriteCandidate, ev: FlagEvidence): FlagHit[] {
  const flags: FlagHit[] = []
  if (ev.hits.length > 0) flags.push({flag: 'instruction-like', reason: ev.hits.map((h) => h.reason).join('; ')})

  const pii = describeSensitive(findSensitive(`${c.title}\n${c.body}`))
  if (pii) flags.push({flag: 'sensitive', reason: pii})

  const taint: string[] = []
  if (c.session?.tainted) taint.push(`session tainted${c.session.taint_reasons.length > 0 ? ` (${clip(c.session.taint_reasons.join(', '))})` : ''}`)
  if ((INDIRECT_ORIGINS as readonly string[]).includes(c.origin as Origin)) taint.push(`origin ${c.origin} is third-party text`)
  if (taint.length > 0) flags.push({flag: 'tainted-source', reason: taint.join('; ')})

  const contradictions = ev.findings.filter((f) => f.kind === 'contradiction')
  if (contradictions.length > 0) flags.push({flag: 'contradiction', reason: contradictions.map((f) => f.reason).join('; ')})
  const duplicates = ev.findings.filter((f) => f.kind === 'duplicate')
  if (duplicates.length > 0) flags.push({flag: 'duplicate', reason: duplicates.map((f) => f.reason).join('; ')})

  const kinds = Object.entries(c.redactions).filter(([, n]) => n > 0)
  if (kinds.length > 0) flags.push({flag: 'secret-redacted', reason: kinds.map(([k, n]) => `${k}×${n}`).join(', ')})

  const obfuscated: string[] = []
  if (c.normalised.hidden.length > 0) obfuscated.push(`hidden text: ${clip(c.normalised.hidden.slice(0, 3).join(', '))}`)
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
