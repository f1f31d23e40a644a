import {randomBytes} from 'node:crypto'

// Crockford-style lowercase base32 without i, l, o, u: short ids that read aloud well.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'

/** A random id of `len` base32 characters (5 bits each): unique without coordination between hosts. */
function randomId(len = 8): string {
  const bytes = randomBytes(len)
  let out = ''
  for (let i = 0; i < len; i++) out += ALPHABET[bytes[i] & 31]
  return out
}

export const newSessionId = () => `s-${randomId(8)}`
export const newProposalId = () => randomId(8)
export const newQuarantineId = () => `q-${randomId(8)}`
export const newMemoryId = () => `m-${randomId(10)}`
