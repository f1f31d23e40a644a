#!/usr/bin/env node
// One host under load (README "Load on one host"): 8 processes at once, each running 100
// `engram write`s one after another, to paths the others write too. Half are run: notes,
// all 8 lanes sharing one session and ten note paths (so direct writes race for the same
// file); half are proposals to the lanes' shared scope, on ten shared paths. Afterwards
// every acknowledged write must be in the store: a committed run: note whose content is
// the last acknowledged one for its path or a proposal holding it, each proposal and
// quarantine entry that was answered, `git fsck --strict` and `engram verify` clean, the
// work tree clean. Prints the wall time and the writes per second.
//   --via cli (default): every write is its own `engram write` process, as a hook or an
//     agent's shell runs it.
//   --via mcp: each lane is one `engram mcp` server (an agent session's MCP connection,
//     driven by the MCP SDK's client) that makes its 100 writes; all 8 serve the one
//     session, so their run: notes and proposals go to the same paths.
//   npm run build && node scripts/load-host.mjs [--lanes 8] [--writes 100] [--via cli|mcp] [--keep]
// (--keep leaves the store and its key folder in the temp folder, and prints where;
// LOAD_PROFILE=<dir> has each MCP server write a CPU profile there.)
import {execFileSync, spawn} from 'node:child_process'
import {mkdirSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`)
  return i > 0 ? Number(process.argv[i + 1]) : dflt
}
const LANES = arg('lanes', 8)
const VIA = process.argv.includes('--via') ? process.argv[process.argv.indexOf('--via') + 1] : 'cli'
if (!['cli', 'mcp'].includes(VIA)) throw new Error('--via is cli or mcp')
const WRITES = arg('writes', 100)
const SCOPE = 'tenant:acme'
const BIN = fileURLToPath(new URL('../bin/run.js', import.meta.url))
const root = mkdtempSync(join(tmpdir(), 'engram-load-host-'))
const store = join(root, 'store')
const config = join(root, 'config')
mkdirSync(store)
mkdirSync(config)
writeFileSync(join(config, 'pass'), 'load passphrase\n', {mode: 0o600})
const env = {...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ENGRAM_') && !k.startsWith('GIT_') && k !== 'NODE_ENV')),
  ENGRAM_CONFIG_DIR: config, ENGRAM_PASSPHRASE_FILE: join(config, 'pass'), ENGRAM_INSECURE_TEST_KDF: '1', NO_COLOR: '1',
  GIT_AUTHOR_NAME: 'load', GIT_AUTHOR_EMAIL: 'load@example.com', GIT_COMMITTER_NAME: 'load', GIT_COMMITTER_EMAIL: 'load@example.com'}
const engram = (args) => JSON.parse(execFileSync(process.execPath, [BIN, ...args, '--json'], {cwd: store, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe']}))

function run(args, {input = '', session} = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args, '--json'], {cwd: store, env: session ? {...env, ENGRAM_SESSION: session} : env})
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => { out += d })
    child.stderr.on('data', (d) => { err += d })
    child.on('close', (code) => {
      let json
      try { json = JSON.parse(out) } catch { json = undefined }
      resolve({code, json, out, err})
    })
    child.stdin.end(input)
  })
}

engram(['init'])
// the load is the point here, not the vote's burst limit (C24 and the vote's tests cover those)
const configFile = join(store, '.engram', 'config.yml')
const {readFileSync} = await import('node:fs')
writeFileSync(configFile, readFileSync(configFile, 'utf8').replace(/per_session: \d+/, 'per_session: 100000').replace(/per_author: \d+/, 'per_author: 100000'))
const shown = engram(['config', 'sign'])
engram(['config', 'sign', '--digest', shown.digest])
const notes = engram(['session', 'start', '--agent', 'load-notes', '--assigned', SCOPE]).id
const lanes = Array.from({length: LANES}, (_, l) => engram(['session', 'start', '--agent', `load-${l}`, '--assigned', SCOPE]).id)

const committed = new Map() // run: note path → contents acknowledged as committed, in order
const kept = new Map() // proposal or quarantine id → the text it must hold
const failures = []
let acked = 0

/** A lane's way to write: a process per write, or one MCP server for all of them. */
async function writer(l) {
  if (VIA === 'cli') {
    return {
      note: (k, text) => run(['write', `notes-${k}.md`, '--scope', `run:${notes}`], {input: text, session: notes}),
      fact: (k, text) => run(['write', `fact-${k}.md`, '--scope', SCOPE], {input: text, session: lanes[l]}),
      close: async () => {},
    }
  }
  const {Client} = await import('@modelcontextprotocol/sdk/client/index.js')
  const {StdioClientTransport} = await import('@modelcontextprotocol/sdk/client/stdio.js')
  const transport = new StdioClientTransport({command: process.execPath, args: [...(process.env.LOAD_PROFILE ? ['--cpu-prof', '--cpu-prof-dir', process.env.LOAD_PROFILE] : []), BIN, 'mcp'], cwd: store, env: {...env, ENGRAM_SESSION: notes}, stderr: 'ignore'})
  const client = new Client({name: 'engram-load', version: '1.0.0'})
  await client.connect(transport)
  // the tool's answer as the CLI's --json would give it: the result, or {error} on a refusal
  const call = async (args) => {
    const r = await client.callTool({name: 'write', arguments: args})
    if (!r.isError) return {code: 0, json: r.structuredContent, out: '', err: ''}
    const said = r.content.map((c) => c.text).join('\n')
    // a lost race: the server says which proposal keeps the content
    const id = /changed since this write began; your content is kept as proposal ((?:q-)?[0-9a-z]{8})\./.exec(said)?.[1]
    return {code: 1, json: id ? {error: {code: 'conflict', data: {proposal: id}}} : undefined, out: said, err: ''}
  }
  return {
    note: (k, content) => call({scope: `run:${notes}`, path: `notes-${k}.md`, content}),
    fact: (k, content) => call({scope: SCOPE, path: `fact-${k}.md`, content}),
    close: () => client.close(),
  }
}

async function lane(l) {
  const w = await writer(l)
  for (let i = 0; i < WRITES; i++) {
    const k = (l * 7 + i) % 10
    if (i % 2 === 0) {
      const text = `lane ${l} write ${i}: the deploy window is ${(l + i) % 24}:00\n`
      const r = await w.note(k, text)
      if (r.code === 0 && r.json?.status === 'committed') {
        acked++
        const list = committed.get(k) ?? []
        list.push(text.trim())
        committed.set(k, list)
      } else if (r.json?.error?.code === 'conflict' && r.json.error.data?.proposal) {
        acked++
        kept.set(r.json.error.data.proposal, text.trim())
      } else failures.push(`lane ${l} write ${i}: exit ${r.code} ${r.out}${r.err}`)
    } else {
      const text = `Lane ${l} fact ${i}: invoices for region r${l}-${i} go out on day ${(i % 27) + 1}.\n`
      const r = await w.fact(k, text)
      if (r.code === 0 && r.json?.proposal) {
        acked++
        kept.set(r.json.proposal, text.trim())
      } else failures.push(`lane ${l} write ${i}: exit ${r.code} ${r.out}${r.err}`)
    }
  }
  await w.close()
}

const started = process.hrtime.bigint()
await Promise.all(Array.from({length: LANES}, (_, l) => lane(l)))
const seconds = Number(process.hrtime.bigint() - started) / 1e9

const git = (...args) => execFileSync('git', args, {cwd: store, env, encoding: 'utf8'})
const problems = [...failures]
const files = new Set(git('ls-tree', '-r', '--name-only', 'HEAD').split('\n'))
for (const [id, text] of kept) {
  const dir = id.startsWith('q-') ? 'quarantine' : 'proposals'
  const file = `.engram/${dir}/${id}.md`
  if (!files.has(file)) problems.push(`lost ${id}`)
  else if (!git('show', `HEAD:${file}`).includes(text)) problems.push(`${id} does not hold its text`)
}
for (const [k, texts] of committed) {
  // each acknowledged note is in the note's history; the last one acknowledged is there now
  const history = git('log', '-p', '--format=', '--', `run/${notes}/notes-${k}.md`)
  for (const t of texts) if (!history.includes(t)) problems.push(`note ${k} lost "${t}"`)
}
const fsck = git('fsck', '--no-progress', '--strict').trim()
if (fsck) problems.push(`fsck: ${fsck}`)
const verify = spawn(process.execPath, [BIN, 'verify', '--json'], {cwd: store, env})
const verifyCode = await new Promise((r) => verify.on('close', r))
if (verifyCode !== 0) problems.push(`verify exit ${verifyCode}`)
if (git('status', '--porcelain', '--untracked-files=all').trim()) problems.push('work tree not clean')

const total = LANES * WRITES
console.log(`${LANES} ${VIA === 'mcp' ? 'MCP servers' : 'lanes of CLI processes'} × ${WRITES} writes: ${acked} of ${total} acknowledged, ${problems.length} problems, ${seconds.toFixed(1)} s (${(total / seconds).toFixed(1)} writes/s)`)
const keep = process.argv.includes('--keep')
console.log(`  committed run: notes ${[...committed.values()].reduce((n, l) => n + l.length, 0)}, kept as entries ${kept.size}${keep ? `; store ${store}` : ''}`)
for (const p of problems.slice(0, 20)) console.log(`  problem: ${p}`)
const {rmSync} = await import('node:fs')
if (!keep) rmSync(root, {recursive: true, force: true})
process.exit(problems.length === 0 && acked === total ? 0 : 1)
