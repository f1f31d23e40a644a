/**
 * The provenance validator: authority must be proven by a signature, never asserted.
 * A write that claims an elevated origin needs a valid signature bound to its path and
 * scope; text that claims to speak for the owner or the system, without one, is forged.
 */
import {AUTHORITY_CLAIMS, INDIRECT_ORIGINS, type Origin} from '../memory.js'
import type {Vote, VoteContext, WriteCandidate} from './types.js'

/** Claimed origins that need a signature: the elevated origins and "system" (memory.ts AUTHORITY_CLAIMS). */
export const ELEVATED_ORIGINS = AUTHORITY_CLAIMS

const AUTHORITY = String.raw`(?:the\s+)?(?:owner|system|admin(?:istrator)?|developer|operator|security\s+team|it\s+department|root|anthropic|openai)`
const FORGED_AUTHORITY: RegExp[] = [
  new RegExp(String.raw`\b(?:note|message|notice|memo|update|directive|instruction|order|announcement|reminder|word)s?\s+from\s+${AUTHORITY}\b`, 'i'),
  // In capitals anywhere, or as a heading ("System notice: …"); not "the system notice banner".
  /\bSYSTEM\s+(?:NOTICE|MESSAGE|OVERRIDE|UPDATE|ALERT|INSTRUCTION|DIRECTIVE|NOTE)\b/,
  /(?:^|[[(])\s*system\s+(?:notice|message|override|update|alert|instruction|directive|note)\s*[:\])]/im,
  new RegExp(String.raw`\b(?:verified|approved|authori[sz]ed|signed|confirmed|sanctioned|endorsed|certified)\s+by\s+${AUTHORITY}\b`, 'i'),
  /\b(?:owner|admin(?:istrator)?|system|operator)[- ](?:verified|approved|authori[sz]ed|signed|sanctioned|certified)\b/i,
  new RegExp(String.raw`\bthis\s+(?:message|note|memory|entry|instruction)\s+(?:is|was|comes)\s+(?:from|written\s+by|signed\s+by|issued\s+by)\s+${AUTHORITY}\b`, 'i'),
  /^\s*\[(?:owner|admin(?:istrator)?|system|root)\]\s*:?/im,
  // A frontmatter block inside the body that sets provenance fields: metadata only the tool writes.
  /^(?:[^\n]*\n)?[ \t]*---[ \t]*\r?\n(?:[^\n]*\n){0,30}?[ \t]*(?:origin[ \t]*:[ \t]*["']?(?:owner|system|dream)\b|(?:signature|signed_by|reviewed_by|approved_by)[ \t]*:[ \t]*\S)/,
]

const isElevated = (o: string | undefined) => o !== undefined && ELEVATED_ORIGINS.includes(o)
const isIndirect = (o: string) => (INDIRECT_ORIGINS as readonly string[]).includes(o as Origin)
const clip = (s: string, n = 60) => {
  const t = s.replace(/\s+/g, ' ').trim()
  return t.length > n ? `${t.slice(0, n - 1)}…` : t
}

export function forgedAuthority(text: string): string | null {
  for (const re of FORGED_AUTHORITY) {
    const m = re.exec(text)
    if (m) return clip(m[0])
  }
  return null
}

export const PROVENANCE = 'provenance'

export function provenanceVote(c: WriteCandidate, ctx: Pick<VoteContext, 'verifyClaim'>, texts: string[]): Vote {
  const vote = (verdict: Vote['verdict'], confidence: number, reason: string): Vote => ({validator: PROVENANCE, verdict, confidence, reason})
  const claimed = isElevated(c.claim?.origin) ? c.claim!.origin : isElevated(c.origin) ? c.origin : null
  const signature = c.claim?.signature

  let verified = false
  if (signature !== undefined) {
    if (!ctx.verifyClaim) {
      if (claimed) return vote('reject', 0.9, `claims origin "${claimed}" but no keyring is available to verify its signature`)
    } else {
      let check: {ok: boolean; detail: string}
      try {
        check = ctx.verifyClaim(c)
      } catch (error) {
        check = {ok: false, detail: error instanceof Error ? error.message : String(error)}
      }
      // A bad signature is refused on any tier: someone tried to borrow authority.
      if (!check.ok) return vote('reject', 0.95, `bad signature${claimed ? ` on a claim of origin "${claimed}"` : ''}: ${clip(check.detail, 120)}`)
      verified = true
    }
  } else if (claimed) {
    return vote('reject', 0.9, `claims origin "${claimed}" without a signature`)
  }

  if (verified) return vote('accept', 0.95, `signature verified${claimed ? ` for origin "${claimed}"` : ''}, bound to ${c.scope}:${c.path}`)

  for (const text of texts) {
    const forged = forgedAuthority(text)
    if (forged) {
      const confidence = isIndirect(c.origin) || c.session?.tainted ? 0.9 : 0.75
      return vote('reject', confidence, `text claims authority without a signature: "${forged}"`)
    }
  }
  return vote('accept', 0.6, `ordinary origin "${c.origin}", no claim of authority`)
}
