/**
 * The store's policy (config.yml) is owner-signed, like manifests: the vote thresholds and
 * veto, the read-only scopes, body limit, burst limits, escalation, extra redaction rules
 * and the external validators (commands the tool runs) only ever come from a config.yml
 * whose exact bytes carry a valid signature by a trusted owner key.
 *
 *   .engram/config.sig
 *     engram config signature <keyid> serial=<n> sha256=<hex of config.yml's bytes>
 *     {"keyid":…,"kind":"engram-config/1","path":".engram/config.yml","serial":n,"sha256":…,"signature":"ed25519:<keyid>:<base64>","signed_at":…,"store":"<store folder in its repository, . for the top>","store_id":"<the store's identity>","v":1}
 *
 * The signature covers kind, store, store_id, path, sha256, serial and signed_at. store_id
 * is the identity pinned for the store on this machine (trust/identity.ts): where one is
 * pinned, a signature must name it, so a config signed for another store of the same owner
 * key is not in force here; a store pinned before stores had an identity accepts either
 * (README "Store identity"). When the work tree's
 * config.yml is not signed (edited, the signature copied from another version, signed by a
 * key that is not a trusted owner, an older signed version put back), every command uses
 * the newest signed version in the file's committed history — the one with the highest
 * serial, in any ancestor of HEAD (both sides of every merge), whose signature at the same
 * commit verifies now — or the built-in defaults (also when that version is older than a
 * serial this machine has seen), and says so. Nothing an agent can write (a cache in the store, an environment variable)
 * decides which version that is.
 */
import {canonicalJson} from '../memory/canonical.js'
import {readStoreCache, writeStoreCache} from './cachefile.js'
import {DEFAULT_CONFIG, DEFAULT_CONFIG_YAML, EngramConfig, parseConfig} from './config.js'
import {badInput} from './errors.js'
import {catBlobs, gitRead} from '../git/git.js'
import {sha256Hex} from '../memory/hash.js'
import {recordSerial, seenSerials} from '../trust/highwater.js'
import {readHeadFromFiles} from '../index/head.js'
import {changesSince} from '../git/loose.js'
import {Keyring, loadKeyring, pinnedStoreId, readRecordLines} from '../trust/keys.js'
import {printable} from './scope.js'
import {isStoreId, storeBindingProblem} from '../trust/identity.js'
import {KeyPair, describeNotOwner, ownerVerdict, parseSignature, signToString, verifyBytes} from '../trust/sign.js'
import type {Store} from './store.js'

export const CONFIG_FILE = '.engram/config.yml'
export const CONFIG_SIG = '.engram/config.sig'
const KIND = 'engram-config/1'
/** the config's serial among the serials this machine has seen (highwater.ts); no scope has this name */
const SERIAL_KEY = '.engram/config.yml'

export interface ConfigSignature {
  v: 1
  kind: typeof KIND
  store: string
  /** the store identity signed for; absent in a signature made before stores had one */
  store_id?: string
  path: string
  sha256: string
  serial: number
  signed_at: string
  keyid: string
  signature: string
}

export type PolicyState = 'signed' | 'default' | 'unsigned'

export interface Policy {
  /** the config every command uses */
  config: EngramConfig
  /** signed: config.yml as it is is signed; default: no config was ever signed and config.yml says nothing beyond the defaults; unsigned: config.yml is not in force */
  state: PolicyState
  /** where the config in force comes from: "work tree", "commit <id>" or "built-in defaults" */
  source: string
  /** its signature's serial, and who signed it (name and key id) */
  serial?: number
  signed_by?: string
  /** the YAML text in force (undefined for the built-in defaults) */
  text?: string
  /** why config.yml as it is is not in force (state unsigned) */
  problem?: string
  /** the one warning to show when config.yml is not in force */
  warning?: string
  /** the highest serial of any signed config known (history and this machine): a new signature's serial is above it */
  highest: number
}

/** The store's folder inside its repository, as signed: `.` for the top. */
function storeLabel(store: Store): string {
  return store.prefix.replace(/\/$/, '') || '.'
}

function payload(r: Omit<ConfigSignature, 'v' | 'keyid' | 'signature'>): string {
  return canonicalJson({kind: r.kind, store: r.store, ...(r.store_id === undefined ? {} : {store_id: r.store_id}), path: r.path, sha256: r.sha256, serial: r.serial, signed_at: r.signed_at})
}

/**
 * The text of `.engram/config.sig` for config.yml's exact bytes, signed by `key` for the
 * store identity pinned on this machine (or `storeId` given; null: none) (sign-then-verify in signToString).
 */
export function configSignatureText(store: Store, bytes: Buffer | string, key: KeyPair, serial: number, signedAt: string = new Date().toISOString(), storeId: string | null = pinnedStoreId(store) ?? null): string {
  const body = {kind: KIND, store: storeLabel(store), ...(storeId === null ? {} : {store_id: storeId}), path: CONFIG_FILE, sha256: sha256Hex(bytes), serial, signed_at: signedAt} as const
  const rec: ConfigSignature = {v: 1, ...body, keyid: key.keyid, signature: signToString(key, payload(body))}
  return `engram config signature ${rec.keyid} serial=${rec.serial} sha256=${rec.sha256}\n${canonicalJson(rec)}\n`
}

function parseConfigSignature(text: string, label = CONFIG_SIG): ConfigSignature {
  const {comment, json: j} = readRecordLines(text, label)
  if (j.v !== 1 || j.kind !== KIND || typeof j.store !== 'string' || typeof j.path !== 'string' || typeof j.sha256 !== 'string' ||
    !/^[0-9a-f]{64}$/.test(j.sha256) || !Number.isInteger(j.serial) || (j.serial as number) < 1 || typeof j.signed_at !== 'string' ||
    typeof j.keyid !== 'string' || typeof j.signature !== 'string' || (j.store_id !== undefined && !isStoreId(j.store_id))) {
    throw badInput(`${label} is not an engram config signature.`)
  }
  if (comment !== `engram config signature ${j.keyid} serial=${j.serial} sha256=${j.sha256}`) throw badInput(`${label}: the comment line does not match the record.`)
  return {v: 1, kind: KIND, store: j.store, ...(j.store_id === undefined ? {} : {store_id: j.store_id as string}), path: j.path, sha256: j.sha256, serial: j.serial as number, signed_at: j.signed_at, keyid: j.keyid, signature: j.signature}
}

/** The store identity a config.sig names (undefined: none, or not a config signature). */
export function configSignedFor(sigText: string | undefined): string | undefined {
  try {
    return sigText === undefined ? undefined : parseConfigSignature(sigText).store_id
  } catch {
    return undefined
  }
}

export type SignatureCheck = {ok: true; serial: number; keyid: string; signer: string} | {ok: false; problem: string}

/** Whether config.sig is a valid signature of config.yml's exact bytes, for this store, by a key that is a trusted owner now. */
export function checkConfigSignature(store: Store, keyring: Keyring, bytes: Buffer | undefined, sigText: string | undefined): SignatureCheck {
  if (bytes === undefined) return {ok: false, problem: 'config.yml is missing'}
  if (sigText === undefined) return {ok: false, problem: 'it is not signed (no .engram/config.sig)'}
  let rec: ConfigSignature
  try {
    rec = parseConfigSignature(sigText)
  } catch (error) {
    return {ok: false, problem: (error as Error).message}
  }
  const sig = parseSignature(rec.signature)
  if (!sig || sig.keyid !== rec.keyid) return {ok: false, problem: 'config.sig holds no well-formed signature by the key it names'}
  if (rec.store !== storeLabel(store) || rec.path !== CONFIG_FILE) return {ok: false, problem: `config.sig was made for the store at ${printable(rec.store)}, not this one (${storeLabel(store)})`}
  if (rec.sha256 !== sha256Hex(bytes)) return {ok: false, problem: 'it was changed since it was signed (config.sig signs other bytes)'}
  const owner = ownerVerdict(keyring, rec.keyid)
  if (!owner.ok) return {ok: false, problem: `config.sig is signed by ${describeNotOwner(owner)}`}
  if (!verifyBytes(owner.publicKey, payload(rec), sig.sig)) return {ok: false, problem: `the signature by ${owner.name} does not verify`}
  // a genuine owner signature, for another store (or for none, where this one has an identity)
  const bound = storeBindingProblem('config.sig', rec.store_id, keyring.storeId)
  if (bound) return {ok: false, problem: bound}
  return {ok: true, serial: rec.serial, keyid: rec.keyid, signer: `${owner.name} (${rec.keyid})`}
}

interface SignedVersion {
  commit: string
  serial: number
  keyid: string
  signer: string
  text: string
}

/**
 * The committed versions of config.yml whose signature at the same commit verifies now: the
 * one with the highest serial (the newest among equals), and that serial. Cached per HEAD
 * and set of trusted owners beside the private keys (out of the agent's reach); the signer's trust is checked again on
 * every use of the cache.
 */
async function signedHistory(store: Store, keyring: Keyring): Promise<{best?: SignedVersion; highest: number}> {
  const head = readHeadFromFiles(store.top)
  const cached = head === undefined ? undefined : readStoreCache('policy', store.root)
  // Keyed by the trusted owners too: a scan made before a root was pinned counted nothing, and
  // must not stand for one made after (or a clone would keep the serial an older version had).
  const owners = `ancestry;${keyring.ownersKey()}`
  // a cache made at an ancestor still holds when no commit since changed config.yml or config.sig (loose.ts)
  const current = cached && head !== undefined && typeof cached.head === 'string' && (cached.head === head || changesSince(store.top, head, cached.head, [store.gitPath(CONFIG_FILE), store.gitPath(CONFIG_SIG)])?.length === 0)
  if (cached && current && cached.prefix === store.prefix && cached.owners === owners && typeof cached.highest === 'number') {
    const best = cached.best as SignedVersion | undefined
    const valid = !best || (typeof best.text === 'string' && typeof best.keyid === 'string' && ownerVerdict(keyring, best.keyid).ok)
    if (valid) {
      // carried forward, so the next command walks only the commits after this one
      if (cached.head !== head) writeStoreCache('policy', store.root, {...cached, head})
      return best ? {best, highest: cached.highest} : {highest: cached.highest}
    }
  }
  const cfg = store.gitPath(CONFIG_FILE)
  const sigPath = store.gitPath(CONFIG_SIG)
  // --full-history: the default simplification follows only a TREESAME parent of a merge, so a
  // newer signed version behind `merge -s ours` would never be read (STANDARD R21: any ancestor).
  const log = await gitRead(store.top, ['log', '--full-history', '--format=%H', '--end-of-options', head ?? 'HEAD', '--', cfg, sigPath], {allowFail: true})
  const commits = log.split('\n').map((l) => l.trim()).filter((l) => /^[0-9a-f]{40,64}$/.test(l))
  const blobs: (Buffer | null)[] = []
  for await (const {data} of catBlobs(store, commits.flatMap((c) => [`${c}:${cfg}`, `${c}:${sigPath}`]))) blobs.push(data)
  let best: SignedVersion | undefined
  let highest = 0
  commits.forEach((commit, i) => {
    const bytes = blobs[2 * i]
    const sig = blobs[2 * i + 1]
    if (!bytes || !sig) return
    const check = checkConfigSignature(store, keyring, bytes, sig.toString('utf8'))
    if (!check.ok) return
    highest = Math.max(highest, check.serial)
    if (!best || check.serial > best.serial) best = {commit, serial: check.serial, keyid: check.keyid, signer: check.signer, text: bytes.toString('utf8')}
  })
  if (head !== undefined) writeStoreCache('policy', store.root, {head, prefix: store.prefix, owners, highest, ...(best ? {best} : {})})
  return {best, highest}
}

function readBytes(store: Store, rel: string): Buffer | undefined {
  const text = store.readText(rel)
  return text === undefined ? undefined : Buffer.from(text, 'utf8')
}

const sameConfig = (a: EngramConfig, b: EngramConfig) => canonicalJson(a) === canonicalJson(b)

/** The config in force for this store, and whether config.yml as it is in the work tree is it. */
export async function resolvePolicy(store: Store, keyring?: Keyring): Promise<Policy> {
  const ring = keyring ?? (await loadKeyring(store))
  const bytes = readBytes(store, CONFIG_FILE)
  const sigText = store.readText(CONFIG_SIG)
  const history = await signedHistory(store, ring)
  const highest = Math.max(history.highest, seenSerials(store)[SERIAL_KEY] ?? 0)
  const check = checkConfigSignature(store, ring, bytes, sigText)
  let problem: string
  if (check.ok && check.serial < highest) {
    problem = `its signature has serial ${check.serial}, older than serial ${highest} signed before (an old config was put back)`
  } else if (check.ok) {
    try {
      const config = parseConfig(bytes!.toString('utf8'), {root: store.root})
      recordSerial(store, SERIAL_KEY, check.serial)
      return {config, state: 'signed', source: 'work tree', serial: check.serial, signed_by: check.signer, text: bytes!.toString('utf8'), highest: Math.max(highest, check.serial)}
    } catch (error) {
      problem = `it is signed but cannot be used: ${(error as Error).message}`
    }
  } else {
    problem = check.problem
  }
  // What config.yml as it is would say, to name its problem too (an unsigned bad config is ignored anyway).
  let current: EngramConfig | undefined
  if (bytes !== undefined && !problem.includes('cannot be used')) {
    try {
      current = parseConfig(bytes.toString('utf8'), {root: store.root})
    } catch (error) {
      problem += `; it is also invalid: ${(error as Error).message}`
    }
  }
  let fallback: Omit<Policy, 'state' | 'problem' | 'warning' | 'highest'> = {config: structuredClone(DEFAULT_CONFIG), source: 'built-in defaults'}
  // Never a version older than a serial seen (in any ancestor or on this machine): when the highest
  // signed version is gone from history, the defaults apply, not an older signed one.
  if (history.best && history.best.serial >= highest) {
    try {
      const b = history.best
      fallback = {config: parseConfig(b.text, {root: store.root}), source: `commit ${b.commit.slice(0, 12)}`, serial: b.serial, signed_by: b.signer, text: b.text}
    } catch {
      // a signed version this engram can no longer read (its rules got stricter): the defaults apply
    }
  }
  // A store never signed (made with `init --no-key`) whose config.yml sets nothing beyond the defaults ignores nothing.
  if (!history.best && sigText === undefined && (bytes === undefined || (current && (sameConfig(current, DEFAULT_CONFIG) || sameConfig(current, parseConfig(DEFAULT_CONFIG_YAML)))))) {
    return {...fallback, state: 'default', highest}
  }
  const using = history.best && fallback.source !== 'built-in defaults'
    ? `the last signed version (${fallback.source}, serial ${fallback.serial}, signed by ${fallback.signed_by})`
    : 'the built-in defaults'
  const warning = `.engram/config.yml is not in force: ${problem}${/[.?!]$/.test(problem) ? '' : '.'} Every command uses ${using}. ` +
    `If the owner made the change, review and sign it with \`engram config sign\`; if not, put the signed version back${history.best && history.best.serial >= highest ? ` with \`git checkout ${history.best.commit.slice(0, 12)} -- ${store.gitPath(CONFIG_FILE)} ${store.gitPath(CONFIG_SIG)}\`` : ''}.`
  return {...fallback, state: 'unsigned', problem, warning, highest}
}

/**
 * Whether the policy in force may hold `redaction.extra` rules: false only when config.yml
 * as it is does not mention them and neither does the last signed version (from the cache
 * for this HEAD, outside the store). Lets a read-only command skip working out the policy
 * (a keyring load) when there is nothing for it to find.
 */
export function mayHaveExtraRules(store: Store): boolean {
  const bytes = readBytes(store, CONFIG_FILE)
  if (bytes?.includes('extra')) return true
  const head = readHeadFromFiles(store.top)
  const cached = head === undefined ? undefined : readStoreCache('policy', store.root)
  if (!cached || cached.head !== head || cached.prefix !== store.prefix) return true
  const best = cached.best as SignedVersion | undefined
  return typeof best?.text === 'string' && best.text.includes('extra')
}

/** Remember a config serial that was just signed here (the rollback witness outside the store). */
export function rememberConfigSerial(store: Store, serial: number): void {
  recordSerial(store, SERIAL_KEY, serial)
}
