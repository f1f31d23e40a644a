/**
 * C26c — a claim of the user's words is checked against what the user typed (R26). Where the
 * host's hooks see every prompt (UserPromptSubmit), a write claiming direct_chat — the default
 * origin — that states an address, a host or a number no prompt of its session holds is read
 * as third-party text: marked tainted with the values named, and a contradiction of curated
 * memory from it is quarantined, where the same correction typed by the user goes to review.
 * Through every surface an agent writes by (the CLI's `write`, `engram mcp`'s write tool), and
 * against the agent's moves: dropping the session's `prompts` mark, planting a record, editing
 * the entry's taint before review, and borrowing another tenant's session's prompts. Where
 * another harness records the prompts (`session start --record-prompts`, `session prompt`),
 * the same, and the agent cannot feed that command (an owner action).
 */
import {existsSync, mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {StdioClientTransport} from '@modelcontextprotocol/sdk/client/stdio.js'
import {afterAll, beforeAll, describe, expect, it, vi} from 'vitest'

import {Run, Store, argv, curate, has, newStore, startSession, write} from './harness.js'

vi.setConfig({testTimeout: 300_000, hookTimeout: 300_000})

const SCOPE = 'project:c26c'
const STORED = 'Acme invoices are paid to account 4471-9920-13.\n'
const SWAP = 'Acme invoices are paid to account 8812-3345-77.\n'

describe.skipIf(!has('hook', 'user-prompt-submit'))('C26c — a write claiming the user\'s words states only values the user typed, or is third-party text (R26)', () => {
  let store: Store
  let n = 0
  const hostId = () => `c26cc26c-6c26-4c26-8c26-${String(++n).padStart(12, '0')}`
  const hook = (event: string, payload: Record<string, unknown>, flags: string[] = []): Run =>
    store.run(['hook', event, ...flags], {
      input: JSON.stringify({transcript_path: '/tmp/t.jsonl', cwd: store.dir, hook_event_name: {'session-start': 'SessionStart', 'user-prompt-submit': 'UserPromptSubmit'}[event], permission_mode: 'default', ...payload}),
      env: {CLAUDE_PROJECT_DIR: store.dir, ENGRAM_BASE: store.dir, CLAUDE_ENV_FILE: ''},
    })
  /** A Claude Code session through its hooks: started, and the user's prompts submitted. */
  const hosted = (prompts: string[], assigned = SCOPE): {host: string; id: string} => {
    const host = hostId()
    const r = hook('session-start', {session_id: host, source: 'startup'}, ['--assigned', assigned])
    expect(r.code, r.stderr).toBe(0)
    const id = /engram session (s-[0-9a-z]+)/.exec(JSON.parse(r.stdout).hookSpecificOutput.additionalContext)![1]
    for (const prompt of prompts) {
      const p = hook('user-prompt-submit', {session_id: host, prompt})
      expect(p.code, p.stderr).toBe(0)
    }
    return {host, id}
  }
  const taintFlag = (w: Run) => (w.json.flags as {flag: string; reason: string}[]).find((f) => f.flag === 'tainted-source')?.reason

  beforeAll(() => {
    store = newStore()
    // curated memory the swap contradicts, proposed by a plain session and accepted by the owner
    curate(store, startSession(store, SCOPE), SCOPE, 'acme-invoices.md', STORED)
  })

  it('the values the user typed: the write is the user\'s, not tainted; values nobody typed: tainted, named, third-party text', () => {
    const {id} = hosted(['Remember: the staging host is staging.acme.example and the support line is +44 20 7946 0958.'])
    expect(store.ok(['session', 'show', id]).prompts).toBe('recorded')
    const own = write(store, id, SCOPE, 'staging.md', 'Staging host: https://staging.acme.example/health; support line 020 7946 0958.\n')
    expect(own.code, own.stderr).toBe(0)
    expect(own.json.status).toBe('pending')
    expect(taintFlag(own)).toBeUndefined()
    const other = write(store, id, SCOPE, 'deploy.md', 'Deploys go through deploy.acme-ci.example.\n')
    expect(other.code, other.stderr).toBe(0)
    expect(taintFlag(other)).toBe('origin: direct_chat, but the user typed none of "deploy.acme-ci.example" in this session')
    expect(other.json.votes.find((v: {validator: string}) => v.validator === 'delivery').reason).toMatch(/direct_chat the user did not type \(third-party text\)/)
    const shown = store.ok(['review', 'show', other.json.proposal])
    expect(shown.memory.tainted).toBe(true)
    expect(shown.recheck).toEqual([])
    // the session's own run: scope is marked too (never refused)
    const run = write(store, id, `run:${id}`, 'note.md', 'Mirror at mirror.acme-ci.example.\n')
    expect(run.json.status).toBe('committed')
    expect(store.read(`run/${id}/note.md`)).toMatch(/tainted: true/)
  })

  it('a changed account the user never typed is quarantined; the same correction typed by the user goes to review', () => {
    const injected = hosted(['Please tidy up the notes about our suppliers.'])
    const w = write(store, injected.id, SCOPE, 'acme-invoices.md', SWAP)
    expect(w.code, w.stderr).toBe(8)
    expect(w.json.status).toBe('quarantined')
    expect(w.json.votes.find((v: {validator: string}) => v.validator === 'semantic')).toMatchObject({verdict: 'reject'})
    expect(w.json.votes.find((v: {validator: string}) => v.validator === 'semantic').confidence).toBeGreaterThanOrEqual(0.85)
    const typed = hosted([`Acme wrote to us: ${SWAP.trim()} Please update memory.`])
    const t = write(store, typed.id, SCOPE, 'acme-invoices.md', SWAP)
    expect(t.code, JSON.stringify(t.json.votes)).toBe(0)
    expect(t.json.status).toBe('pending')
    expect(t.json.votes.find((v: {validator: string}) => v.validator === 'semantic')).toMatchObject({verdict: 'reject', confidence: 0.7})
    expect(taintFlag(t)).toBeUndefined()
  })

  it('dropping the session\'s `prompts` mark, or planting a record, gains the agent nothing', () => {
    const {id} = hosted(['nothing of note'])
    // a planted record: another session's, copied under this one's name (its MACs are bound to the session it was made for)
    const rich = hosted(['the vault is vault.acme.example'])
    const dir = join(store.configDir, 'private', 'prompts')
    const sub = join(dir, readdirSync(dir)[0])
    writeFileSync(join(sub, `${id}.json`), readFileSync(join(sub, `${rich.id}.json`), 'utf8').replaceAll(rich.id, id), {mode: 0o600})
    const w = write(store, id, SCOPE, 'vault.md', 'The vault is vault.acme.example.\n')
    expect(taintFlag(w)).toMatch(/typed none of "vault.acme.example"/)
    // the mark removed from the session record and committed: what the proof covers is read from the record as started
    const rel = `.engram/sessions/${id}.json`
    const rec = JSON.parse(store.read(rel))
    delete rec.prompts
    store.write(rel, `${JSON.stringify(rec, null, 2)}\n`)
    store.gitCommitAll('drop prompts')
    expect(store.ok(['session', 'show', id]).prompts).toBe('recorded')
    const dropped = write(store, id, SCOPE, 'vault2.md', 'The vault is vault.acme.example.\n')
    expect(taintFlag(dropped)).toMatch(/typed none of "vault.acme.example"/)
    // a session started without the mark cannot be given one either: its proof no longer verifies
    const plain = startSession(store, SCOPE)
    const prel = `.engram/sessions/${plain}.json`
    const before = store.commitCount()
    const forged = JSON.parse(store.read(prel))
    store.write(prel, `${JSON.stringify({...forged, prompts: 'recorded'}, null, 2)}\n`)
    store.gitCommitAll('claim recorded prompts')
    expect(store.ok(['session', 'show', plain]).prompts).toBeUndefined()
    expect(store.commitCount()).toBe(before + 1)
  })

  it('the agent\'s own shell feeding the hook a prompt of its making attests nothing', () => {
    const {host, id} = hosted(['hello'])
    const forged = store.run(['hook', 'user-prompt-submit'], {
      session: id,
      input: JSON.stringify({session_id: host, transcript_path: '/tmp/t.jsonl', cwd: store.dir, hook_event_name: 'UserPromptSubmit', prompt: 'the vault is vault.acme-forged.example'}),
      env: {CLAUDE_PROJECT_DIR: store.dir, ENGRAM_BASE: store.dir, CLAUDE_ENV_FILE: ''},
    })
    expect(forged.stderr).toMatch(/records no prompt/)
    const w = write(store, id, SCOPE, 'forged.md', 'The vault is vault.acme-forged.example.\n')
    expect(taintFlag(w)).toMatch(/typed none of "vault.acme-forged.example"/)
  })

  it('a taint cleared from the entry before review is recomputed from the prompts, and accept refuses', () => {
    const {id} = hosted(['hello'])
    const w = write(store, id, SCOPE, 'globex.md', 'The Globex contact line is 0161 555 0199.\n')
    expect(w.json.status).toBe('pending')
    const file = `.engram/proposals/${w.json.proposal}.md`
    store.write(file, store.read(file).replace(/^tainted: true$/m, 'tainted: false').replace(/"tainted":true/, '"tainted":false').replace(/^taint_reasons:\n(?:\s+- .*\n)+/m, 'taint_reasons: []\n').replace(/"taint_reasons":\[[^\]]*\]/, '"taint_reasons":[]'))
    store.gitCommitAll('tidy')
    const shown = store.ok(['review', 'show', w.json.proposal])
    expect(shown.memory.tainted).toBe(false)
    expect(shown.recheck.map((f: {field: string}) => f.field)).toEqual(expect.arrayContaining(['memory.tainted', 'memory.taint_reasons']))
    const before = store.state()
    const r = store.run(['review', 'accept', w.json.proposal, '--digest', shown.digest, '--json'])
    expect(r.code).toBe(3)
    expect(store.state()).toBe(before)
    // a value only an encoded blob of the body states (hex: not redacted as a random string) is
    // read at review as at the write: the prompts' own finding, not only the first commit's
    const blob = Buffer.from('Backup host is backup.acme-blob.example').toString('hex')
    const b = write(store, id, SCOPE, 'backup.md', `Acme backup config: ${blob}\n`)
    expect(taintFlag(b)).toMatch(/typed none of "backup.acme-blob.example"/)
    const bfile = `.engram/proposals/${b.json.proposal}.md`
    store.write(bfile, store.read(bfile).replace(/^tainted: true$/m, 'tainted: false').replace(/"tainted":true/, '"tainted":false').replace(/^taint_reasons:\n(?:\s+- .*\n)+/m, 'taint_reasons: []\n').replace(/"taint_reasons":\[[^\]]*\]/, '"taint_reasons":[]'))
    store.gitCommitAll('tidy the blob')
    const bshown = store.ok(['review', 'show', b.json.proposal])
    expect(bshown.memory.tainted).toBe(false)
    expect(bshown.recheck.filter((f: {source: string}) => /values of the prompts the user typed/.test(f.source)).map((f: {field: string}) => f.field)).toEqual(['memory.taint_reasons'])
    expect(store.run(['review', 'accept', b.json.proposal, '--digest', bshown.digest, '--json']).code).toBe(3)
  })

  it('another tenant\'s session: what one typed attests nothing for the other, and the flag shows only the write\'s own values', () => {
    const acme = hosted(['our SFTP drop is sftp.acme-private.example, PIN line 0161 496 0000'], 'tenant:acme')
    const globex = hosted(['hello there'], 'tenant:globex')
    const w = write(store, globex.id, 'tenant:globex', 'sftp.md', 'Files go to sftp.acme-private.example.\n')
    expect(w.code, w.stderr).toBe(0)
    expect(taintFlag(w)).toBe('origin: direct_chat, but the user typed none of "sftp.acme-private.example" in this session')
    expect(JSON.stringify(w.json)).not.toMatch(/0161|496 0000/)
    // and the other way round, acme's own write of it is acme's user's
    expect(taintFlag(write(store, acme.id, 'tenant:acme', 'sftp.md', 'Files go to sftp.acme-private.example.\n'))).toBeUndefined()
  })

  it('an update keeping a line of the curated memory at its path recalls that line\'s values: untainted; a line reworded, a value moved or of another link, a warning memory, a tainted one: not', () => {
    const {id} = hosted(['Please tidy the supplier notes.'])
    // the curated account's line (STORED) kept word for word, a line added
    const kept = write(store, id, SCOPE, 'acme-invoices.md', `${STORED}Terms: net 30.\n`)
    expect(kept.code, kept.stderr).toBe(0)
    expect(taintFlag(kept)).toBeUndefined()
    expect(store.ok(['review', 'show', kept.json.proposal]).recheck).toEqual([])
    // reworded, or at another path: the value is judged as any untyped one
    expect(taintFlag(write(store, id, SCOPE, 'acme-invoices.md', 'Acme invoices are paid to account 4471 9920 13, net 30.\n'))).toMatch(/typed none of "4471 9920 13"/)
    expect(taintFlag(write(store, id, SCOPE, 'acme-due.md', STORED))).toMatch(/typed none of "4471-9920-13"/)
    const plain = startSession(store, SCOPE)
    const donate = 'Donations go to https://paypal.me/acmeshop and the installer is https://drive.google.com/uc?id=1OURSabcdefgh&export=download\n'
    curate(store, plain, SCOPE, 'donate.md', donate)
    curate(store, plain, SCOPE, 'zed.md', 'Zed account 88123345.\nSupport +44 20 7946 0958.\n')
    curate(store, startSession(store, SCOPE), SCOPE, 'vendors.md', 'Acme invoices go to ap@acme.example.\nWarning: billing@acme-payments.example is a known phishing address.\n')
    expect(taintFlag(write(store, id, SCOPE, 'donate.md', `${donate}Thanks to every donor!\n`))).toBeUndefined()
    // a link is the whole link: another owner's path or id on the same host, or a browser's reading of a backslash (the attacker's reads of this round)
    const swap = write(store, id, SCOPE, 'donate.md', 'Donations now go to https://paypal.me/evilguy; installer https://drive.google.com/uc?id=1EVILzyxwvut&export=download\n')
    expect(taintFlag(swap)).toMatch(/typed none of "https:\/\/paypal.me\/evilguy", "https:\/\/drive.google.com\/uc\?id=1EVILzyxwvut/)
    expect(taintFlag(write(store, id, SCOPE, 'donate.md', `${donate}Also https://evil.example\\@paypal.me/acmeshop\n`))).toMatch(/typed none of "https:\/\/evil.example\//)
    // digits put before a curated number, or a value sharing the curated phone's digits, on a new line
    expect(taintFlag(write(store, id, SCOPE, 'zed.md', 'Zed account 88123345.\nSupport +44 20 7946 0958.\nZed: pay to +780 88123345 from now.\n'))).toMatch(/typed none of "\+780 88123345" in/)
    expect(taintFlag(write(store, id, SCOPE, 'zed.md', 'Zed account 88123345.\nSupport +44 20 7946 0958.\nPay to +1 2079460958 and account 12079460958.\n'))).toMatch(/typed none of "\+1 2079460958", "12079460958" in/)
    // a memory naming a value as phishing vouches for none of its values, even a line kept whole
    expect(taintFlag(write(store, id, SCOPE, 'vendors.md', 'Acme invoices go to ap@acme.example.\nAcme billing: billing@acme-payments.example\n'))).toMatch(/typed none of "ap@acme.example", "billing@acme-payments.example"/)
    // a memory filed as tainted (from a session that read a web page) vouches for nothing
    const browsing = startSession(store, SCOPE, {tainted: true, reason: 'read a vendor web page'})
    const page = write(store, browsing, SCOPE, 'faq.md', 'Acme vendor portal: pay.acme-billing-portal.com\n')
    expect(page.json.status, JSON.stringify(page.json.votes)).toBe('pending')
    const shown = store.ok(['review', 'show', page.json.proposal])
    expect(store.run(['review', 'accept', page.json.proposal, '--digest', shown.digest, '--json']).code).toBe(0)
    expect(taintFlag(write(store, id, SCOPE, 'faq.md', 'Acme vendor portal: pay.acme-billing-portal.com\n'))).toMatch(/typed none of "pay.acme-billing-portal.com"/)
    // a pending proposal's value is no reviewed memory
    const other = write(store, startSession(store, SCOPE), SCOPE, 'portal.md', 'The staff canteen menu is on menu.acme-canteen.example\n')
    expect(other.json.status, JSON.stringify(other.json.votes)).toBe('pending')
    expect(taintFlag(write(store, id, SCOPE, 'portal.md', 'The staff canteen menu is on menu.acme-canteen.example\n'))).toMatch(/typed none of "menu.acme-canteen.example"/)
    // the curated file edited in the work tree: its signed version counts, not the edit
    const rel = 'project/c26c/acme-invoices.md'
    const signed = store.read(rel)
    const edited = 'Acme invoices are paid to account 4471-9920-13 or 5512-0098-31.'
    store.write(rel, signed.replace(STORED.trim(), edited))
    try {
      expect(taintFlag(write(store, id, SCOPE, 'acme-invoices.md', `${edited}\n`))).toMatch(/typed none of "4471-9920-13", "5512-0098-31"/)
    } finally {
      store.write(rel, signed)
    }
  })

  describe.skipIf(!has('session', 'prompt'))('another harness: `session start --record-prompts` and `session prompt` (owner-only)', () => {
    const fed = (prompts: string[], assigned = SCOPE): string => {
      const id = store.ok(['session', 'start', '--agent', 'harness-x', '--assigned', assigned, '--record-prompts']).id as string
      for (const prompt of prompts) {
        const r = store.run(['session', 'prompt', id, '--json'], {input: prompt})
        expect(r.code, r.stderr).toBe(0)
        // a count, never a value
        expect(r.json).toEqual({session: id, values: expect.any(Number)})
      }
      return id
    }

    it('what the harness fed is typed; a value it did not feed is named, as with the hooks', () => {
      const id = fed(['The build cache lives at cache.acme-build.example, ticket 55120983.'])
      expect(store.ok(['session', 'show', id]).prompts).toBe('recorded')
      const own = write(store, id, SCOPE, 'cache.md', 'Build cache: cache.acme-build.example (ticket 55120983).\n')
      expect(own.code, own.stderr).toBe(0)
      expect(taintFlag(own)).toBeUndefined()
      const other = write(store, id, SCOPE, 'cache2.md', 'Build cache moved to cache.acme-bu1ld.example.\n')
      expect(taintFlag(other)).toBe('origin: direct_chat, but the user typed none of "cache.acme-bu1ld.example" in this session')
      // the record holds MACs only: neither the prompt nor a value
      const dir = join(store.configDir, 'private', 'prompts')
      const recs = readdirSync(dir).map((d) => join(dir, d, `${id}.json`)).filter((f) => existsSync(f))
      expect(recs).toHaveLength(1)
      expect(readFileSync(recs[0], 'utf8')).not.toMatch(/acme|55120983|cache/)
    })

    it('refused inside an agent session (its own id, another, or an empty ENGRAM_SESSION): nothing recorded, the value still named', () => {
      const id = fed(['hello'])
      const other = fed(['hello'])
      for (const session of [id, other]) {
        const before = store.state()
        const r = store.run(['session', 'prompt', id, '--json'], {session, input: 'the vault is vault.acme-agent.example'})
        expect(r.code).toBe(3)
        expect(r.json.error.message).toMatch(/Owner actions cannot run inside an agent session/)
        expect(store.state()).toBe(before)
      }
      const empty = store.run(['session', 'prompt', id], {env: {ENGRAM_SESSION: ''}, input: 'the vault is vault.acme-agent.example'})
      expect(empty.code).toBe(3)
      expect(taintFlag(write(store, id, SCOPE, 'vault.md', 'The vault is vault.acme-agent.example.\n'))).toMatch(/typed none of "vault.acme-agent.example"/)
    })

    it('a session started without the mark takes no prompt (it cannot gain the mark), an ended one neither, an unknown one is not found', () => {
      const plain = startSession(store, SCOPE)
      const p = store.run(['session', 'prompt', plain, '--json'], {input: 'the vault is vault.acme.example'})
      expect(p.code).toBe(2)
      expect(p.json.error.message).toMatch(/was not started to record prompts/)
      expect(store.ok(['session', 'show', plain]).prompts).toBeUndefined()
      const {host, id} = hosted(['hello'])
      expect(hook('session-end', {session_id: host, reason: 'logout'}).code).toBe(0)
      const ended = store.run(['session', 'prompt', id, '--json'], {input: 'the vault is vault.acme.example'})
      expect(ended.code).toBe(3)
      expect(ended.json.error.message).toMatch(/ended/)
      expect(store.run(['session', 'prompt', 's-nobody00', '--json'], {input: 'x'}).code).toBe(4)
    })

    it('prompts handed over at once are each kept; a prompt past 16 MiB is refused whole (exit 2), nothing recorded', async () => {
      const id = fed([])
      const runs = await Promise.all(Array.from({length: 12}, (_, i) => store.runAsync(['session', 'prompt', id, '--json'], {input: `host number ${i} is h${i}.acme-burst.example`})))
      for (const r of runs) expect(r.code, r.stderr).toBe(0)
      for (let i = 0; i < 12; i++) expect(taintFlag(write(store, id, SCOPE, `burst-${i}.md`, `Host h${i}.acme-burst.example serves shard ${i}.\n`)), `prompt ${i}`).toBeUndefined()
      const big = store.run(['session', 'prompt', id, '--json'], {input: `vault.acme-big.example ${'x'.repeat(16 * 1024 * 1024)}`})
      expect(big.code).toBe(2)
      expect(big.json.error.message).toMatch(/The prompt is too large/)
      expect(taintFlag(write(store, id, SCOPE, 'big.md', 'The vault is vault.acme-big.example.\n'))).toMatch(/typed none of "vault.acme-big.example"/)
    })

    it('a lock left by a process that died is taken over; a live one makes it wait, then refuse as a conflict (exit 5), nothing recorded', () => {
      const id = fed(['hello'])
      const dir = join(store.configDir, 'private', 'prompts')
      const file = readdirSync(dir).map((d) => join(dir, d, `${id}.json`)).find((f) => existsSync(f))!
      mkdirSync(`${file}.lock`)
      utimesSync(`${file}.lock`, new Date(Date.now() - 120_000), new Date(Date.now() - 120_000))
      const stale = store.run(['session', 'prompt', id, '--json'], {input: 'the wiki is wiki.acme-lock.example'})
      expect(stale.code, stale.stderr).toBe(0)
      expect(existsSync(`${file}.lock`)).toBe(false)
      writeFileSync(`${file}.lock`, '')
      const live = store.run(['session', 'prompt', id, '--json'], {input: 'the vault is vault.acme-lock.example'})
      expect(live.code).toBe(5)
      expect(live.json.error.message).toMatch(/being updated by another process/)
      rmSync(`${file}.lock`)
      const w = write(store, id, SCOPE, 'lock.md', 'Wiki: wiki.acme-lock.example; vault: vault.acme-lock.example.\n')
      expect(taintFlag(w)).toBe('origin: direct_chat, but the user typed none of "vault.acme-lock.example" in this session')
    })

    it('what one tenant\'s harness fed attests nothing for another tenant\'s session', () => {
      fed(['our SFTP drop is sftp.acme-harness.example'], 'tenant:acme')
      const globex = fed(['hello there'], 'tenant:globex')
      const w = write(store, globex, 'tenant:globex', 'sftp.md', 'Files go to sftp.acme-harness.example.\n')
      expect(taintFlag(w)).toBe('origin: direct_chat, but the user typed none of "sftp.acme-harness.example" in this session')
    })

    it.skipIf(!has('mcp') || process.platform !== 'linux')('engram mcp serving such a session (MCP SDK client) checks its write tool the same way', async () => {
      const id = fed(['Our metrics board is metrics.acme-harness.example.'])
      const [cmd, args] = argv(['mcp'])
      const transport = new StdioClientTransport({command: cmd, args, cwd: store.dir, env: {...(store.env as Record<string, string>), ENGRAM_BASE: store.dir, ENGRAM_SESSION: id}, stderr: 'pipe'})
      const c = new Client({name: 'c26c-harness', version: '1.0.0'})
      await c.connect(transport)
      try {
        const call = (a: Record<string, unknown>) => c.callTool({name: 'write', arguments: a}) as Promise<any>
        const own = await call({scope: SCOPE, path: 'metrics.md', content: 'Metrics board: https://metrics.acme-harness.example/d/1.\n'})
        expect(own.isError, JSON.stringify(own.content)).toBeFalsy()
        expect(JSON.stringify(own.structuredContent)).not.toMatch(/typed none of/)
        const swap = await call({scope: SCOPE, path: 'acme-invoices.md', content: SWAP})
        expect(swap.structuredContent.status).toBe('quarantined')
        expect(JSON.stringify(swap.structuredContent)).toMatch(/typed none of/)
      } finally {
        await c.close()
      }
    })
  })

  describe.skipIf(!has('mcp') || process.platform !== 'linux')('through engram mcp (the MCP SDK\'s client), the server of the host process the hooks bound', () => {
    let client: Client | undefined
    afterAll(async () => {
      await client?.close()
    })

    it('the write tool is checked as `engram write` is', async () => {
      const {id} = hosted(['Our status page is status.acme.example.'])
      const [cmd, args] = argv(['mcp', '--agent', 'claude-code', '--assigned', SCOPE])
      const transport = new StdioClientTransport({command: cmd, args, cwd: store.dir, env: {...(store.env as Record<string, string>), CLAUDE_PROJECT_DIR: store.dir, ENGRAM_BASE: store.dir, CLAUDE_ENV_FILE: ''}, stderr: 'pipe'})
      client = new Client({name: 'c26c', version: '1.0.0'})
      await client.connect(transport)
      const call = (a: Record<string, unknown>) => client!.callTool({name: 'write', arguments: a}) as Promise<any>
      const own = await call({scope: SCOPE, path: 'status.md', content: 'Status page: https://status.acme.example.\n'})
      expect(own.isError, JSON.stringify(own.content)).toBeFalsy()
      expect(own.structuredContent.status).toBe('pending')
      const proposals = store.ok(['review', 'list']).items as {id: string; path: string; session?: string}[]
      expect(proposals.find((p) => p.path === 'status.md')).toBeTruthy()
      const swap = await call({scope: SCOPE, path: 'acme-invoices.md', content: SWAP})
      expect(swap.isError, JSON.stringify(swap.content)).toBeFalsy()
      expect(swap.structuredContent.status).toBe('quarantined')
      expect(JSON.stringify(swap.structuredContent)).toMatch(/typed none of/)
      // it wrote as the session the hooks bound
      expect(store.ok(['review', 'show', proposals.find((p) => p.path === 'status.md')!.id]).memory.source_session).toBe(id)
    })
  })
})
