/**
 * Whole-store verification's check (src/core/trust/verify.ts checkStore) over a view made
 * of plain values: real signatures and manifests, no repository, no files.
 */
import {describe, expect, it} from 'vitest'

import {gitBlobHash} from '../../src/core/memory/hash.js'
import {MemoryFile, serializeMemory} from '../../src/core/memory/memory.js'
import {Keyring} from '../../src/core/trust/keys.js'
import {manifestEntry, manifestPath, serializeManifest, signManifest} from '../../src/core/trust/manifest.js'
import {generateKeyPair, signMemory} from '../../src/core/trust/sign.js'
import {VerifyView, checkStore} from '../../src/core/trust/verify.js'

const owner = generateKeyPair('alice')
const keyring = new Keyring({records: [], revocations: [], roots: [{keyid: owner.keyid, name: owner.name, publicKey: owner.publicKey, reason: 'root: test'}]})
const SCOPE = 'project:alpha'

function memory(rel: string, body: string, version = 1, scope = SCOPE): string {
  const m: MemoryFile = {
    frontmatter: {
      id: `m-${rel.length}${version}`, title: body.slice(0, 10), scope, tags: [], author: 'claude-code', source_session: null, origin: 'direct_chat', tainted: false,
      taint_reasons: [], created: '2026-01-01T00:00:00.000Z', updated: '2026-01-01T00:00:00.000Z', version, proposal: null, reviewed_by: 'alice', digest: null, signature: null,
    },
    body,
  }
  return serializeMemory(signMemory(owner, rel, m))
}

/** A view over in-memory files: store-relative path → text. */
function view(files: Record<string, string>, over: Partial<VerifyView> = {}): VerifyView {
  const names = Object.keys(files).filter((f) => f.startsWith('.engram/manifests/')).map((f) => ({name: f.split('/').pop()!, regular: true}))
  return {
    manifestFiles: names,
    manifestText: (rel) => files[rel],
    seenSerial: {},
    seenIn: () => undefined,
    folders: [{scope: SCOPE, dir: 'project/alpha'}],
    walk: (dir) => ({files: Object.keys(files).filter((f) => f.startsWith(`${dir}/`)), links: []}),
    bytes: (rel) => Buffer.from(files[rel]),
    signedBefore: () => undefined,
    ...over,
  }
}
function store(serial = 2): Record<string, string> {
  const a = memory('project/alpha/a.md', 'listed and signed\n')
  const gone = memory('project/alpha/gone.md', 'listed, then deleted\n')
  const m = signManifest(owner, {scope: SCOPE, updated: '2026-01-01T00:00:00.000Z', serial, entries: [manifestEntry('project/alpha/a.md', a), manifestEntry('project/alpha/gone.md', gone)]})
  return {
    'project/alpha/a.md': a,
    'project/alpha/extra.md': memory('project/alpha/extra.md', 'signed, never listed\n'),
    [manifestPath(SCOPE)]: serializeManifest(m),
  }
}
const kinds = (o: ReturnType<typeof checkStore>) => o.report.problems.map((p) => `${p.kind} ${p.path}`).sort()

describe('checkStore', () => {
  it('serves only what is signed and listed; names the extra and the missing; records the serial it accepted', () => {
    const out = checkStore(keyring, view(store()))
    expect([...out.report.servable]).toEqual(['project/alpha/a.md'])
    expect(out.report.checked).toBe(2)
    expect(kinds(out)).toEqual(['extra project/alpha/extra.md', 'missing project/alpha/gone.md'])
    expect(out.serials).toEqual({[SCOPE]: 2})
    expect([...out.signed.keys()].map((k) => k.split('\0')[0]).sort()).toEqual(['project/alpha/a.md', 'project/alpha/extra.md'])
  })

  it('a manifest older than the serial seen is a rollback: nothing of the scope is served, its serial not recorded', () => {
    const out = checkStore(keyring, view(store(2), {seenSerial: {[SCOPE]: 5}, seenIn: () => 'c'.repeat(40)}))
    expect(out.report.servable.size).toBe(0)
    expect(out.serials).toEqual({})
    const rb = out.report.problems.find((p) => p.kind === 'rolled-back')!
    expect(rb.detail).toContain(`serial 2 is older than serial 5 seen in commit ${'c'.repeat(10)}`)
  })

  it('a file edited after signing, or in the wrong scope\'s folder, is not served', () => {
    const files = store()
    files['project/alpha/a.md'] = files['project/alpha/a.md'].replace('listed and signed', 'listed and edited')
    files['project/alpha/moved.md'] = memory('project/alpha/moved.md', 'from beta\n', 1, 'project:beta')
    const out = checkStore(keyring, view(files))
    expect(out.report.servable.size).toBe(0)
    expect(kinds(out)).toEqual(['bad-signature project/alpha/a.md', 'extra project/alpha/extra.md', 'missing project/alpha/gone.md', 'moved project/alpha/moved.md'])
  })

  it('trusts a remembered signature only while its key is trusted now, without reading the file as memory', () => {
    const files = store()
    const a = files['project/alpha/a.md']
    const key = `project/alpha/a.md\0${gitBlobHash(a)}`
    const remembered = checkStore(keyring, view(files, {signedBefore: (k) => (k === key ? {keyid: owner.keyid, version: 1} : undefined)}))
    expect(remembered.report.servable.has('project/alpha/a.md')).toBe(true)
    const stranger = checkStore(keyring, view(files, {signedBefore: (k) => (k === key ? {keyid: 'ffffffffffffffff', version: 1} : undefined)}))
    expect(stranger.report.problems.find((p) => p.path === 'project/alpha/a.md')?.kind).toBe('unknown-key')
  })

  it('limits itself to the scopes asked for, and reports an unpinned root and a scope with no manifest', () => {
    const files = {...store(), 'project/beta/x.md': memory('project/beta/x.md', 'beta\n', 1, 'project:beta')}
    const folders = [{scope: SCOPE, dir: 'project/alpha'}, {scope: 'project:beta', dir: 'project/beta'}]
    const all = checkStore(keyring, view(files, {folders, unpinned: 'not pinned here'}))
    expect(kinds(all)).toContain('manifest-missing .engram/manifests/project_beta.json')
    expect(kinds(all)).toContain('root-not-pinned (root pin on this machine)')
    const beta = checkStore(keyring, view(files, {folders}), ['project:beta'])
    expect(kinds(beta)).toEqual(['manifest-missing .engram/manifests/project_beta.json'])
    expect([...beta.scopes]).toEqual(['project:beta'])
  })

  it('a manifest that is not a regular file, or does not verify, makes its scope unservable', () => {
    const files = store()
    const link = checkStore(keyring, view(files, {manifestFiles: [{name: 'project_alpha.json', regular: false}]}))
    expect(kinds(link)).toContain('manifest-bad-signature .engram/manifests/project_alpha.json')
    expect(link.report.servable.size).toBe(0)
    const forged = {...files, [manifestPath(SCOPE)]: files[manifestPath(SCOPE)].replace('"serial": 2', '"serial": 9')}
    const out = checkStore(keyring, view(forged))
    expect(out.report.problems.find((p) => p.kind === 'manifest-bad-signature')?.detail).toMatch(/does not match/)
    expect(out.report.servable.size).toBe(0)
  })
})
