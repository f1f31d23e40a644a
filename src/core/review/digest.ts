import {EngramError, usageError} from '../store/errors.js'

/**
 * Review by digest (STANDARD R12): the owner approves exactly what they were shown by
 * giving its digest back. These two are the one check every approval makes — accepting a
 * proposal, releasing a quarantine entry, signing the config.
 */

/** A `--digest` argument as given: hexadecimal, 16 to 64 characters (a prefix of the SHA-256 shown). */
export function checkDigestArg(digest: string): string {
  const d = digest.trim().toLowerCase()
  if (!/^[0-9a-f]+$/.test(d)) throw usageError('--digest must be hexadecimal.', 'copy the digest that `engram review show <id>` printed')
  if (d.length < 16) throw usageError(`--digest needs at least 16 hex characters (got ${d.length}).`, 'copy the digest that `engram review show <id>` printed')
  if (d.length > 64) throw usageError('--digest is longer than a SHA-256 digest.')
  return d
}

/**
 * Refuse (digest-mismatch, exit 6) unless `current`, the digest recomputed from the thing
 * as it is now, begins with `reviewed` (from checkDigestArg). No part of either digest is
 * printed: the current one is of a change the owner has not been shown, and retrying with
 * it would approve that change unreviewed.
 */
export function requireReviewedDigest(current: string, reviewed: string, what: string, nextStep: string): void {
  if (current.startsWith(reviewed)) return
  throw new EngramError('digest-mismatch', `${what} does not match the reviewed change: it changed since it was shown, or the digest was mistyped.`, {nextStep})
}
