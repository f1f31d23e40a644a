import {execFileSync} from 'node:child_process'
import {mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {EngramError} from '../../src/core/store/errors.js'
import {
  configDir,
  loadKeyring,
  parsePublicKeyInput,
  pinRoot,
  publicKeyPath,
  publicKeyRecord,
  revocationPath,
  revocationRecord,
} from '../../src/core/trust/keys.js'
import {loadPrivateKey, parsePrivateKeyFile, sealPrivateKey, writePrivateKey} from '../../src/core/trust/privatekey.js'
import {MemoryFile} from '../../src/core/memory/memory.js'
import {generateKeyPair, KeyPair, signMemory, verifyMemory} from '../../src/core/trust/sign.js'
import {Store} from '../../src/core/store/store.js'

let tmp: string
const saved = {config: process.env.ENGRAM_CONFIG_DIR, key: process.env.ENGRAM_KEY, pass: process.env.ENGRAM_PASSPHRASE_FILE, session: process.env.ENGRAM_SESSION}

beforeEach(() => {
  tmp = mkdtempSync(join(tmpdir(), 'engram-keys-'))
  process.env.ENGRAM_CONFIG_DIR = join(tmp, 'config')
  process.env.ENGRAM_PASSPHRASE_FILE = join(tmp, 'passphrase')
  writeFileSync(process.env.ENGRAM_PASSPHRASE_FILE, 'unit passphrase\n', {mode: 0o600})
  delete process.env.ENGRAM_KEY
  delete process.env.ENGRAM_SESSION
})
afterEach(() => {
  for (const [k, v] of [['ENGRAM_CONFIG_DIR', saved.config], ['ENGRAM_KEY', saved.key], ['ENGRAM_PASSPHRASE_FILE', saved.pass], ['ENGRAM_SESSION', saved.session]] as const) {
    if (v === undefined) delete process.env[k]
    else process.env[k] = v
  }
  rmSync(tmp, {recursive: true, force: true})
})

const thrown = (fn: () => unknown): EngramError => {
  try {
    fn()
  } catch (error) {
    return error as EngramError
  }
  throw new Error('expected an error')
}
const rejected = async (p: Promise<unknown>): Promise<EngramError> => {
  try {
    await p
  } catch (error) {
    return error as EngramError
  }
  throw new Error('expected an error')
}

describe('private keys', () => {
  it('are written encrypted, 0600 in a 0700 folder, and read back with the passphrase', async () => {
    const kp = generateKeyPair('alice')
    const file = await writePrivateKey(kp)
    expect(file).toBe(join(configDir(), 'keys', 'alice.key'))
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(statSync(join(configDir(), 'keys')).mode & 0o777).toBe(0o700)
    const text = readFileSync(file, 'utf8')
    expect(text.split('\n')[0]).toBe(`engram encrypted secret key ${kp.keyid} name=alice`)
    expect(text).not.toContain(Buffer.from(kp.secretKey).toString('base64'))
    const back = await loadPrivateKey('alice')
    expect(back.keyid).toBe(kp.keyid)
    expect(Buffer.from(back.secretKey).equals(Buffer.from(kp.secretKey))).toBe(true)
  })

  it('are never overwritten unless the caller confirmed a replacement', async () => {
    const first = generateKeyPair('alice')
    const file = await writePrivateKey(first)
    const before = readFileSync(file, 'utf8')
    const err = await rejected(writePrivateKey(generateKeyPair('alice')))
    expect(err).toBeInstanceOf(EngramError)
    expect(err.code).toBe('refused')
    expect(err.nextStep).toMatch(/--force/)
    expect(readFileSync(file, 'utf8')).toBe(before)
    const second = generateKeyPair('alice')
    await writePrivateKey(second, {replace: true})
    expect((await loadPrivateKey('alice')).keyid).toBe(second.keyid)
    expect(statSync(file).mode & 0o777).toBe(0o600)
  })

  it('load the only key, refuse to guess among several, and say what to do when there is none', async () => {
    expect((await rejected(loadPrivateKey())).code).toBe('not-found')
    expect((await rejected(loadPrivateKey())).nextStep).toMatch(/keys generate/)
    const a = generateKeyPair('alice')
    await writePrivateKey(a, {passphrase: 'unit passphrase'})
    expect((await loadPrivateKey()).keyid).toBe(a.keyid)
    await writePrivateKey(generateKeyPair('bob'), {passphrase: 'unit passphrase'})
    expect((await rejected(loadPrivateKey())).code).toBe('usage')
    expect((await rejected(loadPrivateKey('carol'))).code).toBe('not-found')
  })

  it('ENGRAM_KEY names the key file to use when no key is named, or its own name is', async () => {
    const ci = generateKeyPair('ci')
    const file = join(tmp, 'ci.key')
    writeFileSync(file, sealPrivateKey(ci, 'unit passphrase'))
    process.env.ENGRAM_KEY = file
    expect((await loadPrivateKey()).keyid).toBe(ci.keyid)
    expect((await loadPrivateKey('ci')).keyid).toBe(ci.keyid)
    // a command's default name is no choice: the variable wins over it
    expect((await loadPrivateKey('owner', true)).keyid).toBe(ci.keyid)
  })

  it('a key named by --key wins over ENGRAM_KEY holding another', async () => {
    const alice = generateKeyPair('alice')
    await writePrivateKey(alice, {passphrase: 'unit passphrase'})
    const ci = generateKeyPair('ci')
    const file = join(tmp, 'ci.key')
    writeFileSync(file, sealPrivateKey(ci, 'unit passphrase'))
    process.env.ENGRAM_KEY = file
    expect((await loadPrivateKey('alice')).keyid).toBe(alice.keyid)
    const err = await rejected(loadPrivateKey('bob'))
    expect(err.code).toBe('not-found')
    expect(err.nextStep).toMatch(/ENGRAM_KEY holds key ci, not bob/)
  })

  it('a wrong passphrase, an edited key id and an edited cost do not open the key (refused)', async () => {
    const kp = generateKeyPair('alice')
    const text = sealPrivateKey(kp, 'unit passphrase')
    const file = join(tmp, 'alice.key')
    process.env.ENGRAM_KEY = file
    writeFileSync(file, sealPrivateKey(kp, 'another one'))
    expect((await rejected(loadPrivateKey())).message).toMatch(/Wrong passphrase/)
    const other = generateKeyPair('x')
    writeFileSync(file, text.replaceAll(kp.keyid, other.keyid))
    expect((await rejected(loadPrivateKey())).code).toBe('refused')
    writeFileSync(file, text.replace('"N":65536', '"N":32768'))
    expect((await rejected(loadPrivateKey())).code).toBe('refused')
    // a cost past 1 GiB of memory is not even tried
    expect(thrown(() => parsePrivateKeyFile(text.replace('"N":65536', `"N":${2 ** 24}`), file)).code).toBe('bad-input')
  })

  it('none is made or opened inside an agent session, even with ENGRAM_SESSION empty', async () => {
    process.env.ENGRAM_SESSION = ''
    expect((await rejected(writePrivateKey(generateKeyPair('alice'), {passphrase: 'x'}))).message).toMatch(/inside an agent session/)
    delete process.env.ENGRAM_SESSION
  })
})

// ------------------------------------------------------------------ keyring over real git

function git(root: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'commit.gpgsign=false', ...args], {cwd: root, encoding: 'utf8'})
}

/** A store whose initial key commit holds the owner `alice`, pinned on this machine as `engram init` does (unless `pin: false`). */
async function storeWithOwner(opts: {pin?: boolean} = {}): Promise<{root: string; alice: KeyPair; store: () => Promise<Store>; put: (rel: string, text: string) => void; commit: (msg: string) => void}> {
  const root = join(tmp, 'repo')
  mkdirSync(join(root, '.engram', 'keys'), {recursive: true})
  git(root, 'init', '-q', '-b', 'main')
  writeFileSync(join(root, '.engram', 'config.yml'), 'version: 1\n')
  git(root, 'add', '.')
  git(root, 'commit', '-q', '-m', 'init')
  const alice = generateKeyPair('alice')
  const put = (rel: string, text: string) => {
    mkdirSync(join(root, rel, '..'), {recursive: true})
    writeFileSync(join(root, rel), text)
  }
  put(publicKeyPath('alice'), publicKeyRecord(alice, 'owner', alice))
  const commit = (msg: string) => {
    git(root, 'add', '-A')
    git(root, 'commit', '-q', '-m', msg)
  }
  commit('add owner key')
  if (opts.pin !== false) pinRoot(await Store.open(root), alice)
  return {root, alice, store: () => Store.open(root), put, commit}
}

const memory = (): MemoryFile => ({
  frontmatter: {
    id: 'm-1', title: 't', scope: 'org', tags: [], author: 'alice', source_session: null, origin: 'owner', tainted: false,
    taint_reasons: [], created: '2025-01-01T00:00:00.000Z', updated: '2025-01-01T00:00:00.000Z', version: 1, proposal: null,
    reviewed_by: null, digest: null, signature: null,
  },
  body: 'Fact.\n',
})

describe('keyring', () => {
  it('the owner key of the initial key commit is a root only once pinned on this machine', async () => {
    const s = await storeWithOwner({pin: false})
    const unpinned = await loadKeyring(await s.store())
    expect(unpinned.trusted(s.alice.keyid)).toBeUndefined()
    expect(unpinned.status(s.alice.keyid)?.reason).toMatch(/not a root key pinned on this machine/)
    pinRoot(await s.store(), s.alice)
    const ring = await loadKeyring(await s.store())
    expect(ring.trusted(s.alice.keyid)?.name).toBe('alice')
    expect(ring.isOwner(s.alice.keyid)).toBe(true)
    expect(ring.list()).toEqual([expect.objectContaining({name: 'alice', status: 'trusted', root: true, role: 'owner'})])
  })

  it('nothing is trusted before the first key is committed', async () => {
    // a repository where the owner's key file exists but was never committed
    const fresh = join(tmp, 'fresh')
    mkdirSync(join(fresh, '.engram', 'keys'), {recursive: true})
    git(fresh, 'init', '-q')
    const alice = generateKeyPair('alice')
    writeFileSync(join(fresh, publicKeyPath('alice')), publicKeyRecord(alice, 'owner', alice))
    const ring = await loadKeyring(await Store.open(fresh))
    expect(ring.trusted(alice.keyid)).toBeUndefined()
    expect(ring.status(alice.keyid)?.reason).toMatch(/self-endorsed/)
  })

  it('a .pub planted later is untrusted, committed or not, and its signatures do not verify', async () => {
    const s = await storeWithOwner()
    const mallory = generateKeyPair('mallory')
    s.put(publicKeyPath('mallory'), publicKeyRecord(mallory, 'owner', mallory))
    let ring = await loadKeyring(await s.store())
    expect(ring.status(mallory.keyid)).toMatchObject({status: 'untrusted'})
    s.commit('add a key')
    ring = await loadKeyring(await s.store())
    expect(ring.trusted(mallory.keyid)).toBeUndefined()
    expect(ring.isOwner(mallory.keyid)).toBe(false)
    expect(verifyMemory(ring, 'org/a.md', signMemory(mallory, 'org/a.md', memory()))).toMatchObject({ok: false, problem: 'unknown-key'})
  })

  it('a record endorsed by an unknown key, or with a forged or re-used endorsement, is untrusted', async () => {
    const s = await storeWithOwner()
    const mallory = generateKeyPair('mallory')
    const eve = generateKeyPair('eve')
    s.put(publicKeyPath('eve'), publicKeyRecord(eve, 'owner', mallory))
    // take a genuine endorsement by alice (for a dreamer) and paste it onto an owner record
    const genuine = JSON.parse(publicKeyRecord(eve, 'dreamer', s.alice).split('\n')[1])
    const forged = {...genuine, role: 'owner'}
    s.put(publicKeyPath('fake'), `engram public key ${eve.keyid} name=eve role=owner\n${JSON.stringify(forged)}\n`)
    const ring = await loadKeyring(await s.store())
    expect(ring.trusted(eve.keyid)).toBeUndefined()
    expect(ring.trusted(mallory.keyid)).toBeUndefined()
    expect(ring.list().filter((k) => k.status === 'untrusted').length).toBeGreaterThan(0)

    rmSync(join(s.root, publicKeyPath('fake')))
    s.put(publicKeyPath('eve'), `engram public key ${eve.keyid} name=eve role=owner\n${JSON.stringify(forged)}\n`)
    const ring2 = await loadKeyring(await s.store())
    expect(ring2.status(eve.keyid)).toMatchObject({status: 'untrusted', reason: expect.stringMatching(/does not verify/)})
  })

  it('owners endorse keys, chains are allowed, dreamers cannot endorse', async () => {
    const s = await storeWithOwner()
    const bob = generateKeyPair('bob')
    const carol = generateKeyPair('carol')
    const dream = generateKeyPair('dream')
    const eve = generateKeyPair('eve')
    s.put(publicKeyPath('bob'), publicKeyRecord(bob, 'owner', s.alice))
    s.put(publicKeyPath('carol'), publicKeyRecord(carol, 'owner', bob))
    s.put(publicKeyPath('dream'), publicKeyRecord(dream, 'dreamer', s.alice))
    s.put(publicKeyPath('eve'), publicKeyRecord(eve, 'owner', dream))
    const ring = await loadKeyring(await s.store())
    expect(ring.isOwner(bob.keyid)).toBe(true)
    expect(ring.isOwner(carol.keyid)).toBe(true)
    expect(ring.trusted(dream.keyid)?.role).toBe('dreamer')
    expect(ring.isOwner(dream.keyid)).toBe(false)
    expect(ring.status(eve.keyid)).toMatchObject({status: 'untrusted', reason: expect.stringMatching(/only owners endorse/)})
    expect(verifyMemory(ring, 'org/a.md', signMemory(carol, 'org/a.md', memory())).ok).toBe(true)
    expect(verifyMemory(ring, 'org/a.md', signMemory(dream, 'org/a.md', memory()))).toMatchObject({ok: false, problem: 'not-owner'})
  })

  it('the root stays trusted when its work-tree record is deleted or edited', async () => {
    const s = await storeWithOwner()
    unlinkSync(join(s.root, publicKeyPath('alice')))
    s.commit('delete the owner key')
    const ring = await loadKeyring(await s.store())
    expect(ring.isOwner(s.alice.keyid)).toBe(true)
  })

  it('a revoked key is revoked, its signatures fail, and keys it endorsed lose trust unless kept', async () => {
    const s = await storeWithOwner()
    const bob = generateKeyPair('bob')
    const carol = generateKeyPair('carol')
    const dave = generateKeyPair('dave')
    s.put(publicKeyPath('bob'), publicKeyRecord(bob, 'owner', s.alice))
    s.put(publicKeyPath('carol'), publicKeyRecord(carol, 'owner', bob))
    s.put(publicKeyPath('dave'), publicKeyRecord(dave, 'dreamer', bob))
    const signed = signMemory(bob, 'org/a.md', memory())
    expect(verifyMemory(await loadKeyring(await s.store()), 'org/a.md', signed).ok).toBe(true)

    s.put(revocationPath('bob'), revocationRecord(bob, s.alice, {reason: 'laptop lost', keep: [carol.keyid]}))
    const ring = await loadKeyring(await s.store())
    expect(ring.status(bob.keyid)).toMatchObject({status: 'revoked', reason: expect.stringMatching(/revoked by alice.*laptop lost/)})
    expect(ring.trusted(bob.keyid)).toBeUndefined()
    expect(verifyMemory(ring, 'org/a.md', signed)).toMatchObject({ok: false, problem: 'revoked-key'})
    expect(ring.isOwner(carol.keyid)).toBe(true)
    expect(ring.status(dave.keyid)).toMatchObject({status: 'untrusted', reason: expect.stringMatching(/revoked/)})
  })

  it('a key can revoke itself; a revocation by an untrusted key is ignored', async () => {
    const s = await storeWithOwner()
    const bob = generateKeyPair('bob')
    const mallory = generateKeyPair('mallory')
    s.put(publicKeyPath('bob'), publicKeyRecord(bob, 'owner', s.alice))
    s.put(publicKeyPath('mallory'), publicKeyRecord(mallory, 'owner', mallory))
    s.put(revocationPath('alice'), revocationRecord(s.alice, mallory))
    let ring = await loadKeyring(await s.store())
    expect(ring.isOwner(s.alice.keyid)).toBe(true)
    expect(ring.isOwner(bob.keyid)).toBe(true)
    s.put(revocationPath('bob'), revocationRecord(bob, bob, {reason: 'retired'}))
    ring = await loadKeyring(await s.store())
    expect(ring.status(bob.keyid)?.status).toBe('revoked')
  })

  it('a revoked owner cannot endorse new keys', async () => {
    const s = await storeWithOwner()
    const bob = generateKeyPair('bob')
    const eve = generateKeyPair('eve')
    s.put(publicKeyPath('bob'), publicKeyRecord(bob, 'owner', s.alice))
    s.put(revocationPath('bob'), revocationRecord(bob, s.alice))
    s.put(publicKeyPath('eve'), publicKeyRecord(eve, 'owner', bob))
    const ring = await loadKeyring(await s.store())
    expect(ring.trusted(eve.keyid)).toBeUndefined()
  })

  it('two records for one key make it untrusted (which role was meant is unknowable)', async () => {
    const s = await storeWithOwner()
    const bob = generateKeyPair('bob')
    s.put(publicKeyPath('bob'), publicKeyRecord(bob, 'owner', s.alice))
    s.put(publicKeyPath('bob2'), publicKeyRecord({...bob, name: 'bob2'}, 'dreamer', s.alice))
    const ring = await loadKeyring(await s.store())
    expect(ring.status(bob.keyid)).toMatchObject({status: 'untrusted', reason: expect.stringMatching(/2 records/)})
  })

  it('a malformed record is listed as untrusted, and a record under another name is refused', async () => {
    const s = await storeWithOwner()
    const bob = generateKeyPair('bob')
    s.put(publicKeyPath('junk'), 'hello\n')
    s.put(publicKeyPath('other'), publicKeyRecord(bob, 'owner', s.alice))
    const ring = await loadKeyring(await s.store())
    expect(ring.trusted(bob.keyid)).toBeUndefined()
    const names = ring.list().filter((k) => k.status === 'untrusted').map((k) => k.path)
    expect(names).toEqual(expect.arrayContaining(['.engram/keys/junk.pub', '.engram/keys/other.pub']))
  })

  it('a local pin for this store makes a key a root; a pin for another store, or a pin file of another form, does not', async () => {
    const s = await storeWithOwner()
    const hsm = generateKeyPair('hsm')
    s.put(publicKeyPath('hsm'), publicKeyRecord(hsm, 'owner', hsm))
    expect((await loadKeyring(await s.store())).isOwner(hsm.keyid)).toBe(false)
    // a pin file of the old global form names no store: it is not read
    mkdirSync(join(configDir(), 'trust'), {recursive: true})
    writeFileSync(join(configDir(), 'trust', 'pin.json'), JSON.stringify({keyid: hsm.keyid, public_key: Buffer.from(hsm.publicKey).toString('base64')}))
    expect((await loadKeyring(await s.store())).isOwner(hsm.keyid)).toBe(false)
    const other = join(tmp, 'other')
    mkdirSync(join(other, '.engram'), {recursive: true})
    git(other, 'init', '-q')
    pinRoot(await Store.open(other), hsm)
    expect((await loadKeyring(await s.store())).isOwner(hsm.keyid)).toBe(false)
    pinRoot(await s.store(), hsm)
    expect((await loadKeyring(await s.store())).isOwner(hsm.keyid)).toBe(true)
  })

  it('parsePublicKeyInput takes a .pub record or a raw base64 key', () => {
    const kp = generateKeyPair('bob')
    const raw = Buffer.from(kp.publicKey).toString('base64')
    expect(Buffer.from(parsePublicKeyInput(raw)).toString('base64')).toBe(raw)
    expect(Buffer.from(parsePublicKeyInput(publicKeyRecord(kp, 'dreamer', kp))).toString('base64')).toBe(raw)
    expect(() => parsePublicKeyInput('nope')).toThrow(EngramError)
  })
})
