import {rmSync} from 'node:fs'

import {commitPaths} from '../git/commit.js'
import {parseConfig} from '../store/config.js'
import {notFound, verificationFailed} from '../store/errors.js'
import {writeFileAtomic} from '../store/fsutil.js'
import {sha256Hex} from '../memory/hash.js'
import {withStoreLock} from '../store/lock.js'
import {CONFIG_FILE, CONFIG_SIG, Policy, checkConfigSignature, configSignatureText, rememberConfigSerial, resolvePolicy} from '../store/policy.js'
import {checkDigestArg, requireReviewedDigest} from '../review/digest.js'
import {ownerKey} from '../review/review.js'
import type {Store} from '../store/store.js'
import type {KeyPair} from './sign.js'
import {loadKeyring} from './keys.js'
import {readWeights} from '../write/vote/learned.js'

export interface ConfigSignResult {
  /** true when this run wrote a new signature */
  signed: boolean
  /** config.yml as it is was already the signed config in force: nothing to do */
  unchanged: boolean
  /** SHA-256 of config.yml's bytes: the digest to sign with */
  digest: string
  /** config.yml as it is, and the signed config it replaces (text undefined: the built-in defaults) */
  text: string
  previous: {source: string; serial?: number; signed_by?: string; text?: string}
  serial?: number
  signed_by?: string
  commit?: string
  /** what in config.yml will not work as written (it is signed all the same: a file it names may be put in place after) */
  warnings: string[]
}

/**
 * `engram config sign`: config.yml is checked strictly (an unknown key, a wrong type: bad
 * input, nothing signed). Without a digest it is only shown against the signed config in
 * force, with its digest; with the digest (as `review accept`), exactly those bytes are
 * signed by a trusted owner key, the signature checked against the keyring, and both files
 * committed.
 */
export async function signConfig(store: Store, opts: {digest?: string; keyName?: string; unlocked?: KeyPair} = {}): Promise<ConfigSignResult> {
  const read = () => {
    const text = store.readText(CONFIG_FILE)
    if (text === undefined) throw notFound(`No ${CONFIG_FILE} in the store.`, 'write one (README "Configuration" has the keys), then sign it')
    return {text, config: parseConfig(text, {root: store.root})}
  }
  const {text, config} = read()
  const warnings: string[] = []
  const weights = config.vote.learned.weights
  // the validator would abstain on every write with this reason (`engram doctor` fails its "vote weights" check)
  const problem = weights ? readWeights(weights).problem : undefined
  if (problem) warnings.push(`vote.learned.weights: engram cannot read ${weights} (${problem}); the learned validator abstains on every write while it is so`)
  const digest = sha256Hex(text)
  const policy = await resolvePolicy(store)
  const previous = {source: policy.source, serial: policy.serial, signed_by: policy.signed_by, text: policy.text}
  const unchanged = policy.state === 'signed' && policy.text === text
  if (unchanged || opts.digest === undefined) return {signed: false, unchanged, digest, text, previous, warnings}
  const wanted = checkDigestArg(opts.digest)
  const again = 'review it again with `engram config sign` (without --digest)'
  requireReviewedDigest(digest, wanted, 'config.yml', again)
  // a key the caller already unlocked (detach, before it moved anything); the signature is checked against this store's keyring below all the same
  const {key, keyring} = opts.unlocked ? {key: opts.unlocked, keyring: await loadKeyring(store)} : await ownerKey(store, opts.keyName)
  return withStoreLock(store, async () => {
    const now = read().text
    // changed between the check above and the lock
    requireReviewedDigest(sha256Hex(now), digest, 'config.yml', again)
    const fresh: Policy = await resolvePolicy(store, keyring)
    const serial = fresh.highest + 1
    const before = store.readText(CONFIG_SIG)
    writeFileAtomic(store.abs(CONFIG_SIG), configSignatureText(store, now, key, serial))
    const check = checkConfigSignature(store, keyring, Buffer.from(now, 'utf8'), store.readText(CONFIG_SIG))
    if (!check.ok) {
      if (before === undefined) rmSync(store.abs(CONFIG_SIG), {force: true})
      else writeFileAtomic(store.abs(CONFIG_SIG), before)
      throw verificationFailed(`The new config signature does not verify (${check.problem}); the old one was put back.`, 'check the key with `engram keys list`')
    }
    const commit = await commitPaths(store, {
      subject: `Sign the store configuration (serial ${serial})`,
      trailers: {'Engram-Operation': 'config-sign', 'Engram-Digest': digest, 'Engram-Key': `${key.name} (${key.keyid})`},
      paths: [CONFIG_FILE, CONFIG_SIG],
    })
    rememberConfigSerial(store, serial)
    await store.loadPolicy()
    return {signed: true, unchanged: false, digest, text: now, previous, serial, signed_by: check.signer, commit, warnings}
  })
}
