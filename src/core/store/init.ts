import {existsSync, mkdirSync, readFileSync, realpathSync, statSync, writeFileSync} from 'node:fs'
import {join, relative, resolve, sep} from 'node:path'

import {commitPaths} from '../git/commit.js'
import {DEFAULT_CONFIG_YAML} from './config.js'
import {writeFileAtomic} from './fsutil.js'
import {isEngramError, refused} from './errors.js'
import {forgetSerials} from '../trust/highwater.js'
import {gitInit, gitTopLevel} from '../git/git.js'
import {requireGit} from '../git/need-git.js'
import {checkKeyName, pinFileFor, pinRoot, publicKeyPath, publicKeyRecord, unpinRoots} from '../trust/keys.js'
import {CONFIG_SIG, configSignatureText} from './policy.js'
import {PrivateKeyFile, findPrivateKey, refuseAsFirstOwner, unlockPrivateKey, writePrivateKey} from '../trust/privatekey.js'
import {refuseInsideSession} from '../session/sessions.js'
import {generateKeyPair, KeyPair} from '../trust/sign.js'
import {newStoreId, storeIdText} from '../trust/identity.js'
import {ENGRAM_DIR, Store} from './store.js'

export interface InitResult {
  root: string
  gitInitialised: boolean
  /** the project repository the store sits in, which now ignores it (its history is the store's own) */
  insideRepository?: string
  /** the project repository whose history the store shares (`--shared-history`) */
  sharedWith?: string
  /** reused: the key was found in the key folder, not made here; then keyFile and keyChanged (ISO time) say which file and when it last changed */
  owner: {name: string; keyid: string; privateKey: string | null; reused: boolean; keyFile?: string; keyChanged?: string} | null
  commit?: string
}

/** Derived and transient files that never belong in history. */
const ENGRAM_GITIGNORE = `# derived (rebuilt at will) and transient files
index/
lock
lock.stale-*
*.tmp-*
serve.sock
`

const KEEP = ['keys', 'manifests', 'proposals', 'quarantine', 'sessions']

/**
 * Make a store: the layout, `git init` when the folder is not in a work tree, the config,
 * and a first owner key (private half 0600 outside the store). Refuses to run twice.
 */
/**
 * The project's `.gitignore` with the store's folder added, or undefined when it already
 * ignores it. A store inside a project has a repository of its own: the project's
 * branches never carry memory commits, and an agent that commits to the project cannot
 * rewrite memory's history (README "The store").
 */
export function ignoreStoreIn(projectTop: string, storeRel: string, current: string | undefined): string | undefined {
  const text = current ?? ''
  const line = `/${storeRel}/`
  if (text.split('\n').some((l) => [line, `/${storeRel}`, `${storeRel}/`, storeRel].includes(l.trim()))) return undefined
  return `${text}${text === '' || text.endsWith('\n') ? '' : '\n'}# engram's store has a git repository of its own, out of the agent's reach\n${line}\n`
}

export async function initStore(dir: string, opts: {owner?: string; noKey?: boolean; sharedHistory?: boolean} = {}): Promise<InitResult> {
  const root = resolve(dir)
  if (existsSync(join(root, ENGRAM_DIR))) {
    throw refused(`${root} is already an engram store.`, 'use it as it is; `engram status` shows its state')
  }
  const ownerName = checkKeyName(opts.owner ?? 'owner')
  // A new store at a path drops this machine's pins (roots and identity) of the store that
  // was there: the owner's act, never one that needs no key (README "Store identity").
  const pinFile = pinFileFor(existsSync(root) ? realpathSync(root) : root)
  if (opts.noKey && existsSync(pinFile)) {
    throw refused(
      `This machine has pinned the root keys and identity of a store at ${root} (${pinFile}); a new store there without a key would drop them.`,
      'make the new store with the owner key (`engram init`), or, if the old store is gone for good, remove that pin file first',
    )
  }
  // Making or opening the owner key is the owner's act, never an agent session's: refuse
  // before anything is made.
  if (!opts.noKey) refuseInsideSession('Making or unlocking an owner key')
  requireGit()
  // The owner key first, unlocked or made (its passphrase read and checked), before anything
  // of the store is made: a passphrase refused, or a key file that cannot be read, leaves no
  // half-made store behind. A key made here and a store that then fails is no loss: the next
  // init reuses the key.
  let ownerKey: {key: KeyPair; reused: boolean; privateKey: string | null; keyFile?: string; keyChanged?: string} | undefined
  if (!opts.noKey) {
    // One owner key can serve many stores: reuse the named key when it already exists.
    let found: PrivateKeyFile | undefined
    // --owner names the key; without it, ENGRAM_KEY (when set) is the owner key, whatever its name
    const defaulted = opts.owner === undefined
    try {
      found = findPrivateKey(ownerName, defaulted)
    } catch (error) {
      // An ENGRAM_KEY that names a missing or broken file is the user's error, not a reason to
      // make a new key; a key named by --owner and not found is made, as without ENGRAM_KEY.
      if ((process.env.ENGRAM_KEY && defaulted) || !(isEngramError(error) && error.code === 'not-found')) throw error
    }
    if (found) {
      refuseAsFirstOwner(found)
      // said at init (README "Owner keys"): a key this init did not make becomes the owner, so its owner must know it
      ownerKey = {key: await unlockPrivateKey(found), reused: true, privateKey: null, keyFile: found.file, keyChanged: statSync(found.file).mtime.toISOString()}
    } else {
      const key = generateKeyPair(ownerName)
      ownerKey = {key, reused: false, privateKey: await writePrivateKey(key)}
    }
  }
  mkdirSync(root, {recursive: true})
  let gitInitialised = false
  const enclosing = await gitTopLevel(root)
  const here = realpathSync(root)
  let insideRepository: string | undefined
  let sharedWith: string | undefined
  if (enclosing && enclosing !== here) {
    if (opts.sharedHistory) sharedWith = enclosing
    else insideRepository = enclosing
  }
  if (!enclosing || insideRepository) {
    await gitInit(root)
    gitInitialised = true
  }
  if (insideRepository) {
    const rel = relative(insideRepository, here).split(sep).join('/')
    const file = join(insideRepository, '.gitignore')
    const next = ignoreStoreIn(insideRepository, rel, existsSync(file) ? readFileSync(file, 'utf8') : undefined)
    // atomic, and never through a symbolic link planted in the project's place
    if (next !== undefined) writeFileAtomic(file, next)
  }
  const e = join(root, ENGRAM_DIR)
  for (const d of KEEP) {
    mkdirSync(join(e, d), {recursive: true})
    writeFileSync(join(e, d, '.gitkeep'), '')
  }
  mkdirSync(join(root, 'org'), {recursive: true})
  writeFileSync(join(root, 'org', '.gitkeep'), '')
  writeFileSync(join(e, 'config.yml'), DEFAULT_CONFIG_YAML)
  // the store's identity, which config signatures and manifests bind (README "Store identity")
  const storeId = newStoreId()
  writeFileSync(join(e, 'store-id'), storeIdText(storeId))
  writeFileSync(join(e, '.gitignore'), ENGRAM_GITIGNORE)

  const store = new Store(root, (await gitTopLevel(root))!)
  // a new store at a path forgets what this machine knew of an old store there
  forgetSerials(store)
  unpinRoots(store)
  const paths = ['.engram', 'org/.gitkeep']
  let owner: InitResult['owner'] = null
  if (ownerKey) {
    const {key, reused, keyFile, keyChanged} = ownerKey
    let {privateKey} = ownerKey
    if (!privateKey && process.env.ENGRAM_KEY) privateKey = process.env.ENGRAM_KEY
    writeFileSync(store.abs(publicKeyPath(key.name)), publicKeyRecord({name: key.name, publicKey: key.publicKey}, 'owner', key))
    // The owner key is this store's root on this machine (STANDARD R19): only a pin makes a
    // root, so nothing written into the store or its history can add another.
    pinRoot(store, key, {storeId})
    // the initial policy is the owner's from the start (README "Configuration")
    writeFileSync(store.abs(CONFIG_SIG), configSignatureText(store, DEFAULT_CONFIG_YAML, key, 1))
    owner = {name: key.name, keyid: key.keyid, privateKey, reused, ...(reused ? {keyFile, keyChanged} : {})}
  }
  const commit = await commitPaths(store, {
    subject: `Initialise engram store${owner ? ` with owner key ${owner.name} (${owner.keyid})` : ''}`,
    trailers: {'Engram-Operation': 'init', 'Engram-Key': owner?.keyid},
    paths,
  })
  return {root, gitInitialised, insideRepository, sharedWith, owner, commit}
}
