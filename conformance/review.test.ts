/**
 * R6, R8, R12, R13, R16: history and restore, who may promote, accepting exactly what was
 * reviewed, signed curated memory, and what a reviewer's terminal is shown.
 */
import {createHash} from 'node:crypto'
import {execFileSync} from 'node:child_process'
import {existsSync, rmSync, unlinkSync} from 'node:fs'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'

import {Store, curate, newStore, reviewedDigest, startSession, tempDir, write} from './harness.js'

describe('C6 — full history with provenance, and one-step restore (R6)', () => {
  let store: Store
  let s: string
  beforeAll(() => {
    store = newStore()
    s = startSession(store, 'tenant:acme', {agent: 'agent-h'})
  })

  it('history names author, session, reviewer and digest of each version; restore brings one back in one signed commit', () => {
    const v1 = curate(store, s, 'tenant:acme', 'plan.md', 'The plan is Gold, renewed yearly.\n')
    const v1commit = store.git('rev-parse', 'HEAD').trim()
    const v2 = curate(store, s, 'tenant:acme', 'plan.md', 'The plan is Platinum, renewed monthly.\n')
    const h = store.ok(['history', 'plan.md', '--scope', 'tenant:acme'])
    const text = JSON.stringify(h)
    for (const needle of ['agent-h', s, v1.digest, v2.digest, 'owner']) expect(text).toContain(needle)
    expect(h.items.length).toBeGreaterThanOrEqual(2)

    // An agent session cannot restore, and neither can someone without an owner key.
    const before = store.state()
    expect(store.run(['restore', 'plan.md', '--scope', 'tenant:acme', '--to', v1commit, '--json'], {session: s}).code).toBe(3)
    // No key at all: refused, or "no key found".
    expect([3, 4]).toContain(store.run(['restore', 'plan.md', '--scope', 'tenant:acme', '--to', v1commit, '--json'], {env: {ENGRAM_CONFIG_DIR: tempDir()}}).code)
    // A revision that is really a git option.
    expect(store.run(['restore', 'plan.md', '--scope', 'tenant:acme', '--to', '--output=/tmp/x', '--json']).code).toBe(2)
    expect(store.state()).toBe(before)

    const count = store.commitCount()
    const r = store.ok(['restore', 'plan.md', '--scope', 'tenant:acme', '--to', v1commit])
    expect(store.commitCount()).toBe(count + 1)
    expect(JSON.stringify(r)).toContain(v1commit)
    const read = store.ok(['read', 'plan.md', '--scope', 'tenant:acme'], {session: s})
    expect(read.body).toBe('The plan is Gold, renewed yearly.\n')
    const after = store.ok(['history', 'plan.md', '--scope', 'tenant:acme'])
    expect(after.items.length).toBe(h.items.length + 1)
    expect(JSON.stringify(after)).toContain(v1commit)
    expect(store.run(['verify', '--json']).code).toBe(0)
  })
})

describe('C8 — only a trusted owner key promotes; the dreaming role proposes but never writes (R8)', () => {
  let store: Store
  let s: string
  let proposal: string
  let digest: string
  const keyFile = (dir: string, name: string) => join(dir, 'keys', `${name}.key`)
  let dreamerDir: string
  let strangerDir: string
  let revokedDir: string
  beforeAll(() => {
    store = newStore()
    s = startSession(store, 'tenant:acme')
    const w = write(store, s, 'tenant:acme', 'billing.md', 'Acme pays by bank transfer.\n')
    proposal = w.json.proposal
    digest = reviewedDigest(store, proposal)
    // A dreamer key, trusted with role dreamer.
    dreamerDir = tempDir()
    const pub = join(dreamerDir, 'dreamer.pub')
    store.ok(['keys', 'generate', 'dreamer', '--out', pub], {env: {ENGRAM_CONFIG_DIR: dreamerDir}})
    store.ok(['keys', 'trust', pub, '--role', 'dreamer'])
    // A key nobody trusted.
    strangerDir = tempDir()
    store.ok(['keys', 'generate', 'mallory'], {env: {ENGRAM_CONFIG_DIR: strangerDir}})
    // An owner key that was trusted and then revoked.
    revokedDir = tempDir()
    const bobPub = join(revokedDir, 'bob.pub')
    store.ok(['keys', 'generate', 'bob', '--out', bobPub], {env: {ENGRAM_CONFIG_DIR: revokedDir}})
    store.ok(['keys', 'trust', bobPub, '--role', 'owner'])
    store.ok(['keys', 'revoke', 'bob', '--reason', 'left the team'])
  })

  it('refuses accept, reject, restore and key trust by a dreamer, an untrusted, a revoked or no key', () => {
    const before = store.state()
    const envs: [string, NodeJS.ProcessEnv][] = [
      ['dreamer', {ENGRAM_CONFIG_DIR: dreamerDir, ENGRAM_KEY: keyFile(dreamerDir, 'dreamer')}],
      ['untrusted', {ENGRAM_CONFIG_DIR: strangerDir, ENGRAM_KEY: keyFile(strangerDir, 'mallory')}],
      ['revoked', {ENGRAM_CONFIG_DIR: revokedDir, ENGRAM_KEY: keyFile(revokedDir, 'bob')}],
      ['no key', {ENGRAM_CONFIG_DIR: tempDir()}],
    ]
    const pub = join(strangerDir, 'again.pub')
    store.ok(['keys', 'generate', 'again', '--out', pub], {env: {ENGRAM_CONFIG_DIR: strangerDir}})
    // With no key at all "not found" (4) is as good as "refused" (3).
    const refusedCodes = (who: string) => (who === 'no key' ? [3, 4] : [3])
    for (const [who, env] of envs) {
      expect(refusedCodes(who), `${who} accept`).toContain(store.run(['review', 'accept', proposal, '--digest', digest, '--json'], {env}).code)
      expect(refusedCodes(who), `${who} reject`).toContain(store.run(['review', 'reject', proposal, '--reason', 'no', '--json'], {env}).code)
      expect(refusedCodes(who), `${who} trust`).toContain(store.run(['keys', 'trust', pub, '--role', 'owner', '--json'], {env}).code)
    }
    expect(store.state()).toBe(before)
    expect(existsSync(store.path('tenant/acme/billing.md'))).toBe(false)
  })

  it('the owner key inside an agent session is refused too', () => {
    expect(store.run(['review', 'accept', proposal, '--digest', digest, '--json'], {session: s}).code).toBe(3)
    expect(existsSync(store.path('tenant/acme/billing.md'))).toBe(false)
  })
})

describe('C12 — the owner promotes exactly what they reviewed (R12)', () => {
  let store: Store
  let s: string
  beforeAll(() => {
    store = newStore()
    s = startSession(store, 'tenant:acme', {tainted: true, reason: 'read a web page'})
    curate(store, s, 'tenant:acme', 'deploy.md', 'Deploys go out on Tuesdays from host alpha.\n')
  })

  it('refuses wrong, short, non-hex and over-long digests; accepts a 16-character prefix', () => {
    const w = write(store, s, 'tenant:acme', 'team.md', 'The on-call lead is Dana.\n')
    const id = w.json.proposal
    const d = reviewedDigest(store, id)
    const before = store.state()
    const wrong = d.startsWith('0') ? `1${d.slice(1)}` : `0${d.slice(1)}`
    expect(store.run(['review', 'accept', id, '--digest', wrong, '--json']).code).toBe(6)
    expect(store.run(['review', 'accept', id, '--digest', d.slice(0, 15), '--json']).code).toBe(2)
    expect(store.run(['review', 'accept', id, '--digest', 'zz'.repeat(32), '--json']).code).toBe(2)
    expect(store.run(['review', 'accept', id, '--digest', `${d}00`, '--json']).code).toBe(2)
    expect(store.state()).toBe(before)
    expect(store.ok(['review', 'accept', id, '--digest', d.slice(0, 16)]).id).toBe(id)
    // Replaying the accept finds nothing to accept.
    expect(store.run(['review', 'accept', id, '--digest', d, '--json']).code).toBe(4)
  })

  it('refuses the accept when the proposal file was edited after the review — body, path, scope or base', () => {
    const edits: [string, (t: string) => string][] = [
      ['body', (t) => t.replace('Wednesdays', 'Saturdays')],
      ['path', (t) => t.replace('path: "rota-path.md"', 'path: "deploy.md"')],
      ['scope', (t) => t.replace(/^scope: "tenant:acme"/m, 'scope: "tenant:globex"')],
      ['base', (t) => t.replace('base: null', 'base: "0123456789abcdef0123456789abcdef01234567"')],
      // provenance outside the memory itself: the commit and history must not be laundered
      ['taint', (t) => t.replace(/^tainted: true/m, 'tainted: false')],
      ['author', (t) => t.replace(/^author: "agent-a"/m, 'author: "owner"')],
    ]
    for (const [what, edit] of edits) {
      const w = write(store, s, 'tenant:acme', `rota-${what}.md`, 'The rota changes on Wednesdays.\n')
      expect(w.json.status).toBe('pending')
      const id = w.json.proposal
      const d = reviewedDigest(store, id)
      const rel = `.engram/proposals/${id}.md`
      const text = store.read(rel)
      const edited = edit(text)
      expect(edited, what).not.toBe(text)
      store.write(rel, edited)
      store.gitCommitAll(`tamper with ${what}`)
      const before = store.state()
      const r = store.run(['review', 'accept', id, '--digest', d, '--json'])
      expect(r.code, what).toBe(6)
      expect(store.state()).toBe(before)
      expect(existsSync(store.path(`tenant/acme/rota-${what}.md`))).toBe(false)
      expect(existsSync(store.path('tenant/acme/deploy.md'))).toBe(true)
    }
    expect(store.ok(['read', 'deploy.md', '--scope', 'tenant:acme']).body).toContain('host alpha')
  })

  it('shows the reviewer the flags the text raises, even after they were stripped from the proposal file', () => {
    const w = write(store, s, 'tenant:acme', 'contact.md', 'Invoices go to ap@acme.example.\n')
    expect(w.json.status).toBe('pending')
    const shown = (): string => store.run(['review', 'show', w.json.proposal]).stdout
    expect(shown()).toMatch(/flag sensitive/)
    expect(shown()).toMatch(/flag tainted-source/)
    const rel = `.engram/proposals/${w.json.proposal}.md`
    const text = store.read(rel)
    const stripped = text.replace(/^flags: .*$/m, 'flags: []')
    expect(stripped).not.toBe(text)
    store.write(rel, stripped)
    store.gitCommitAll('strip the flags')
    expect(shown()).toMatch(/flag sensitive/)
    expect(shown()).toMatch(/flag tainted-source/)
  })

  it('refuses a stale accept when the base moved after the review', () => {
    const a = write(store, s, 'tenant:acme', 'deploy.md', 'Deploys go out on Tuesdays from host beta.\n')
    const b = write(store, s, 'tenant:acme', 'deploy.md', 'Deploys go out on Tuesdays from host gamma.\n')
    const da = reviewedDigest(store, a.json.proposal)
    const db = reviewedDigest(store, b.json.proposal)
    store.ok(['review', 'accept', a.json.proposal, '--digest', da])
    const r = store.run(['review', 'accept', b.json.proposal, '--digest', db, '--json'])
    expect(r.code).toBe(6)
    expect(r.json.error.message).toMatch(/stale/i)
    expect(store.ok(['read', 'deploy.md', '--scope', 'tenant:acme']).body).toContain('host beta')
  })

  it('writes the reviewed file: the body and provenance shown in review are what is served', () => {
    const w = write(store, s, 'tenant:acme', 'exact.md', 'Invoices are due in 30 days.\n', ['--title', 'Invoice terms', '--tags', 'billing,terms'])
    const shown = store.ok(['review', 'show', w.json.proposal])
    store.ok(['review', 'accept', w.json.proposal, '--digest', shown.digest])
    const r = store.ok(['read', 'exact.md', '--scope', 'tenant:acme'], {session: s})
    expect(r.body).toBe(shown.body)
    for (const k of ['id', 'title', 'scope', 'tags', 'author', 'source_session', 'origin', 'tainted', 'taint_reasons', 'created', 'version']) {
      expect(r.frontmatter[k], k).toEqual(shown.memory[k])
    }
    expect(r.frontmatter.tainted).toBe(true)
    expect(r.frontmatter.reviewed_by).toBeTruthy()
  })
})

describe('C13 — curated memory is signed; a hand edit, move, copy, deletion or rollback is detected (R13)', () => {
  let store: Store
  let s: string
  let g: string
  beforeAll(() => {
    store = newStore()
    s = startSession(store, 'tenant:acme')
    g = startSession(store, 'tenant:globex', {agent: 'agent-g'})
    for (const name of ['edited', 'moved', 'copied', 'deleted', 'rolled', 'intact']) {
      curate(store, s, 'tenant:acme', `${name}.md`, `The ${name} memory says the limit is 100.\n`)
    }
    curate(store, g, 'tenant:globex', 'own.md', 'Globex keeps its own memory.\n')
    const v1 = store.git('show', 'HEAD~0:tenant/acme/rolled.md')
    curate(store, s, 'tenant:acme', 'rolled.md', 'The rolled memory says the limit is 200.\n')
    // The attacks, made with a shell and git as a compromised agent would.
    store.write('tenant/acme/edited.md', store.read('tenant/acme/edited.md').replace('100', '999'))
    store.git('mv', 'tenant/acme/moved.md', 'tenant/acme/moved-elsewhere.md')
    store.write('tenant/globex/copied.md', store.read('tenant/acme/copied.md'))
    unlinkSync(store.path('tenant/acme/deleted.md'))
    store.write('tenant/acme/rolled.md', v1)
    store.write('tenant/acme/planted.md', store.read('tenant/acme/intact.md').replace('intact', 'planted').replace('100', '5'))
    store.gitCommitAll('hand edits')
  })

  it('serves none of the tampered files, and still serves the intact ones', () => {
    expect(store.ok(['read', 'intact.md', '--scope', 'tenant:acme'], {session: s}).body).toContain('100')
    expect(store.ok(['read', 'own.md', '--scope', 'tenant:globex'], {session: g}).body).toContain('Globex')
    for (const [scope, path, session] of [
      ['tenant:acme', 'edited.md', s],
      ['tenant:acme', 'moved-elsewhere.md', s],
      ['tenant:globex', 'copied.md', g],
      ['tenant:acme', 'deleted.md', s],
      ['tenant:acme', 'rolled.md', s],
      ['tenant:acme', 'planted.md', s],
    ]) {
      const r = store.run(['read', path, '--scope', scope, '--json'], {session})
      expect(r.code, `${scope}/${path}`).not.toBe(0)
      expect(r.stdout).not.toMatch(/limit is (999|5\b|100)/)
    }
    const list = store.ok(['list', '--scope', 'tenant:acme'], {session: s})
    // copied.md is still intact at its own path; only its copy in tenant:globex is forged.
    expect(list.items.map((m: any) => m.path).sort()).toEqual(['copied.md', 'intact.md'])
    expect(store.ok(['list', '--scope', 'tenant:globex'], {session: g}).items.map((m: any) => m.path)).toEqual(['own.md'])
  })

  it('verify names every problem and exits 7', () => {
    const r = store.run(['verify', '--json'])
    expect(r.code).toBe(7)
    const text = JSON.stringify(r.json)
    for (const p of ['edited.md', 'moved-elsewhere.md', 'copied.md', 'deleted.md', 'rolled.md', 'planted.md']) expect(text, p).toContain(p)
    expect(text).not.toContain('intact.md')
  })

  it('a hand-edited manifest is caught too', () => {
    const st = newStore()
    const a = startSession(st, 'tenant:acme')
    curate(st, a, 'tenant:acme', 'one.md', 'One fact.\n')
    // The manifest is whichever JSON file the accept added under .engram/manifests.
    const target = st.git('ls-files', '.engram/manifests').trim().split('\n').find((f) => f.endsWith('.json'))
    expect(target).toBeTruthy()
    const text = st.read(target!)
    // Drop the memory's entry, as if it had never been accepted.
    const edited = text.replace(/one\.md/g, 'gone.md')
    expect(edited).not.toBe(text)
    st.write(target!, edited)
    st.gitCommitAll('edit the manifest')
    expect(st.run(['verify', '--json']).code).toBe(7)
    expect(st.run(['read', 'one.md', '--scope', 'tenant:acme', '--json'], {session: a}).code).not.toBe(0)
    rmSync(st.dir, {recursive: true, force: true})
  })
})

describe('C13 — what a search remembers between runs never outlives a change (R13)', () => {
  it('an older signed version put back with its manifest entry, timestamps restored, after searches were answered: not served', async () => {
    const st = newStore()
    try {
      const a = startSession(st, 'tenant:acme')
      const file = 'tenant/acme/cached.md'
      curate(st, a, 'tenant:acme', 'cached.md', 'The cached memory says the quota is 100.\n')
      const v1 = st.read(file)
      curate(st, a, 'tenant:acme', 'cached.md', 'The cached memory says the quota is 500.\n')
      // searches as an agent would run them, so anything an implementation remembers is warm
      for (let i = 0; i < 3; i++) {
        expect(JSON.stringify(st.ok(['search', 'quota', '--json'], {session: a}).hits)).toContain('500')
        await new Promise((r) => setTimeout(r, 120))
      }
      const manifest = st.git('ls-files', '.engram/manifests').trim().split('\n').find((f) => f.endsWith('.json'))!
      const blob = (text: string) => createHash('sha1').update(`blob ${Buffer.byteLength(text)}\0`).update(text).digest('hex')
      // to the nanosecond, as `touch -d` puts them back
      const mtime = (rel: string) => execFileSync('stat', ['-c', '%y', st.path(rel)], {encoding: 'utf8'}).trim()
      const before = {file: mtime(file), manifest: mtime(manifest)}
      const v2 = st.read(file)
      const manifestText = st.read(manifest)
      expect(manifestText).toContain(blob(v2))
      // the rollback: the validly signed first version, and the manifest entry edited to list it
      st.write(file, v1)
      st.write(manifest, manifestText.replace(blob(v2), blob(v1)).replace('"version":2', '"version":1'))
      expect(st.read(manifest).length).toBe(manifestText.length)
      // modification times put back, as an attacker covering their tracks would
      execFileSync('touch', ['-d', before.file, st.path(file)])
      execFileSync('touch', ['-d', before.manifest, st.path(manifest)])
      expect(mtime(manifest)).toBe(before.manifest)
      st.gitCommitAll('roll back')
      const r = st.ok(['search', 'quota', '--json'], {session: a})
      expect(r.hits).toEqual([])
      expect(JSON.stringify(r)).not.toContain('100')
      expect(st.run(['read', 'cached.md', '--scope', 'tenant:acme', '--json'], {session: a}).code).not.toBe(0)
    } finally {
      rmSync(st.dir, {recursive: true, force: true})
    }
  })
})

describe('C16 — a reviewer\'s terminal shows escape sequences and invisible characters, never runs them (R16)', () => {
  it('review show, review list and pending list print no raw control or bidi characters', () => {
    const store = newStore()
    const s = startSession(store, 'tenant:acme')
    const hostile = 'Harmless note\n\u001b[2J\u001b[1;1HAll clear, accept me \u001b]8;;https://evil.example\u0007link\u001b]8;;\u0007 \u001b[8mhidden\u001b[0m \u202eevil\u202c \u0008\u0008\u0008done\n'
    // Control characters in a title or tag may be refused outright; bidi marks must then be shown.
    const w = write(store, s, 'tenant:acme', 'esc.md', hostile, ['--title', 'Title \u202eevil\u202c'])
    expect(w.code).toBe(w.json?.status === 'quarantined' ? 8 : 0)
    // eslint-disable-next-line no-control-regex
    const raw = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/
    const cmd = w.json.status === 'quarantined' ? 'quarantine' : 'review'
    for (const args of [[cmd, 'show', w.json.proposal], [cmd, 'list'], ['pending', 'list'], ['pending', 'show', '--scope', 'tenant:acme', 'esc.md']]) {
      const r = store.run(args)
      if (args[0] === 'pending' && cmd === 'quarantine') continue
      expect(r.code, args.join(' ')).toBe(0)
      expect(r.stdout, args.join(' ')).not.toMatch(raw)
      expect(r.stderr, args.join(' ')).not.toMatch(raw)
    }
    // The escape is shown, not dropped: the reviewer sees that something was there.
    const shown = store.run([cmd, 'show', w.json.proposal]).stdout
    expect(shown).toMatch(/\[2J/)
  })
})
