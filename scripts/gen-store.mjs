#!/usr/bin/env node
// Generate a realistic engram store of N memories for benchmarks, committed in one commit.
//
//   node scripts/gen-store.mjs <dir> [--memories 10000] [--layout mixed|single] [--scope project:big]
//                              [--seed 1] [--prefix sub/folder] [--sign [--dist dist/] [--for-store ID]]
//
// mixed: org, 8 projects, many tenants (N/150, at least 10) and a few run scopes;
// single: every memory in one scope (--scope, default project:big).
// Frontmatter is emitted exactly as src/core/memory/memory.ts serializeMemory does (key: <JSON>
// lines in FIELD_ORDER), bodies are 50–400 words of Zipf-distributed technical English.
// Afterwards `git gc` and `git commit-graph write` run, as after a real bulk import.
//
// --sign makes a store whose curated memory is served (README.md, serving): the store is made
// by the built CLI's own initStore (dist/, or --dist D; `npm run build` first) with its
// first owner key — in $ENGRAM_CONFIG_DIR, else ~/.config/engram, reused when it exists,
// exactly as `engram init` does, unlocked by ENGRAM_PASSPHRASE_FILE or at the terminal — and every curated file is signed by that key and listed
// in its scope's signed manifest. run: scratchpads stay unsigned, as agents write them. Without
// --sign the files carry a placeholder signature and `engram search` serves none of them.
// --for-store ID signs the manifests for another store's identity (README "Store identity"),
// for files to be copied into that store by its owner (scripts/bench-sync.mjs); by default
// they are signed for the store made here.
import {execFileSync} from 'node:child_process'
import {createHash, createPrivateKey, sign as edSign} from 'node:crypto'
import {mkdirSync, writeFileSync, existsSync} from 'node:fs'
import {dirname, join, resolve} from 'node:path'
import {fileURLToPath, pathToFileURL} from 'node:url'

const args = process.argv.slice(2)
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? args[i + 1] : dflt
}
const dir = args.find((a, i) => !a.startsWith('--') && (i === 0 || !args[i - 1].startsWith('--') || args[i - 1] === '--sign'))
if (!dir) {
  console.error('usage: node scripts/gen-store.mjs <dir> [--memories N] [--layout mixed|single] [--scope S] [--seed N] [--prefix P] [--sign [--dist D] [--for-store ID]]')
  process.exit(2)
}
const N = Number(opt('memories', '1000'))
const layout = opt('layout', 'mixed')
const singleScope = opt('scope', 'project:big')
const prefix = opt('prefix', '')
const signed = args.includes('--sign')
let seed = Number(opt('seed', '1')) >>> 0 || 1

// xorshift32: deterministic, so the same arguments give the same store
function rand() {
  seed ^= seed << 13
  seed >>>= 0
  seed ^= seed >>> 17
  seed ^= seed << 5
  seed >>>= 0
  return seed / 0x100000000
}
const pick = (list) => list[Math.floor(rand() * list.length)]
const int = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1))

const BASE_WORDS = (
  'deploy deployment staging production cluster kubernetes container docker image registry pipeline build release ' +
  'rollback migration database postgres index query latency cache redis queue worker job schedule cron timeout retry ' +
  'backoff service endpoint api gateway proxy load balancer certificate tls secret vault token credential rotation ' +
  'config setting flag feature toggle experiment metric dashboard alert incident outage pager oncall runbook postmortem ' +
  'customer tenant account invoice billing payment subscription plan quota limit region zone replica shard partition ' +
  'backup restore snapshot volume disk memory cpu thread process signal log trace span sampling error exception warning ' +
  'test fixture mock integration unit coverage lint format typescript node python rust golang java module package ' +
  'dependency version upgrade patch security vulnerability audit review approval owner team contact email slack channel ' +
  'meeting decision preference convention style naming branch merge commit tag repository monorepo workspace script ' +
  'terraform helm chart manifest namespace ingress dns domain cdn bucket storage object upload download stream batch ' +
  'report export import schema field column table view permission role policy access admin user session login sso ' +
  'oauth webhook callback event message topic consumer producer kafka retention compaction throughput capacity scaling ' +
  'autoscaler node pool spot instance cost budget forecast analytics warehouse etl dbt airflow notebook model training ' +
  'inference embedding vector search ranking relevance prompt agent memory context window summary transcript note'
).split(' ')
const GLUE = 'the a an and or but with for to of in on at by from is are was were be this that it we they should must can will not always never'.split(' ')
const SUFFIXES = ['', '', '', 's', 'ed', 'ing', 'er', 'ion', 'ly']
// a long tail of rarer made-up words (project names, hostnames, identifiers)
const SYL = ['ka', 'to', 'ri', 'mo', 'zen', 'ly', 'qua', 'ix', 'or', 'bel', 'dra', 'vo', 'nu', 'pet', 'sa', 'lin', 'ger', 'tho']
const RARE = Array.from({length: 5000}, () => Array.from({length: int(2, 4)}, () => pick(SYL)).join(''))

function zipfWord() {
  const r = rand()
  if (r < 0.35) return pick(GLUE)
  if (r < 0.9) {
    const w = BASE_WORDS[Math.floor(BASE_WORDS.length * Math.pow(rand(), 2))]
    return w + pick(SUFFIXES)
  }
  if (r < 0.97) return RARE[Math.floor(RARE.length * Math.pow(rand(), 3))]
  return `${pick(BASE_WORDS)}-${int(1, 999)}`
}

function sentence() {
  const n = int(6, 18)
  const ws = Array.from({length: n}, zipfWord)
  ws[0] = ws[0][0].toUpperCase() + ws[0].slice(1)
  return `${ws.join(' ')}.`
}

function body() {
  const target = int(50, 400)
  let words = 0
  const paras = []
  let para = []
  while (words < target) {
    const s = sentence()
    words += s.split(' ').length
    para.push(s)
    if (para.length >= int(2, 5)) {
      paras.push(para.join(' '))
      para = []
    }
  }
  if (para.length) paras.push(para.join(' '))
  if (rand() < 0.3) paras.splice(1, 0, Array.from({length: int(2, 4)}, () => `- ${sentence()}`).join('\n'))
  return `${paras.join('\n\n')}\n`
}

// Same emission as src/core/memory/memory.ts emitFrontmatter/serializeMemory.
const FIELD_ORDER = ['id', 'title', 'scope', 'tags', 'author', 'source_session', 'origin', 'tainted', 'taint_reasons',
  'created', 'updated', 'version', 'proposal', 'reviewed_by', 'digest', 'signature']
function serialize(fm, text) {
  let out = '---\n'
  for (const k of FIELD_ORDER) if (fm[k] !== undefined) out += `${k}: ${JSON.stringify(fm[k])}\n`
  return `${out}---\n${text.replace(/\r\n?/g, '\n').replace(/\n*$/, '\n')}`
}

function scopes() {
  if (layout === 'single') return [{scope: singleScope, weight: 1}]
  const out = [{scope: 'org', weight: 0.05}]
  for (let i = 0; i < 8; i++) out.push({scope: `project:proj-${i}`, weight: 0.35 / 8})
  const tenants = Math.max(10, Math.round(N / 150))
  for (let i = 0; i < tenants; i++) out.push({scope: `tenant:t${String(i).padStart(4, '0')}`, weight: 0.55 / tenants})
  for (let i = 0; i < 5; i++) out.push({scope: `run:sess-${i}`, weight: 0.05 / 5})
  return out
}
const SCOPES = scopes()
function pickScope() {
  let r = rand()
  for (const s of SCOPES) {
    if ((r -= s.weight) < 0) return s.scope
  }
  return SCOPES[SCOPES.length - 1].scope
}
const scopeDir = (s) => (s === 'org' ? 'org' : s.replace(':', '/'))

const root = join(dir, prefix)
mkdirSync(root, {recursive: true})
if (!existsSync(join(dir, '.git'))) execFileSync('git', ['init', '-q', '-b', 'main', dir])
const signer = signed ? await openSigner(root) : undefined
if (!signer) {
  mkdirSync(join(root, '.engram'), {recursive: true})
  writeFileSync(join(root, '.engram', '.gitkeep'), '')
}

/**
 * initStore from the built CLI, then the owner key it made or reused. Signing goes through
 * node:crypto (byte-identical RFC 8032 Ed25519, ~15x faster than noble for 100k files)
 * over dist's own signingPayload and signature format; the first files are checked with
 * dist's verifyMemory so that a format drift fails here, not silently in the benchmark.
 */
async function openSigner(storeRoot) {
  const dist = join(resolve(opt('dist', join(dirname(fileURLToPath(import.meta.url)), '..', 'dist'))), 'core')
  if (!existsSync(join(dist, 'store', 'init.js'))) {
    console.error('--sign needs the built CLI: run `npm run build` first')
    process.exit(2)
  }
  const load = (m) => import(pathToFileURL(join(dist, m)).href)
  const [{initStore}, keys, privatekey, memory, sign, manifest, hash, store] = await Promise.all(
    ['store/init.js', 'trust/keys.js', 'trust/privatekey.js', 'memory/memory.js', 'trust/sign.js', 'trust/manifest.js', 'memory/hash.js', 'store/store.js'].map(load))
  // the owner key is encrypted: its passphrase comes from ENGRAM_PASSPHRASE_FILE or the terminal
  const made = await initStore(storeRoot)
  const key = await privatekey.loadPrivateKey(made.owner.name)
  const pkcs8 = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), Buffer.from(key.secretKey)])
  const privateKey = createPrivateKey({key: pkcs8, format: 'der', type: 'pkcs8'})
  const ws = new store.Store(made.root, made.root)
  const keyring = await keys.loadKeyring(ws)
  const forStore = opt('for-store')
  const target = forStore === undefined ? keyring : new keys.Keyring({...keys.keyringInput(ws), storeId: forStore})
  let checked = 0
  return {
    owner: made.owner,
    /** the signed file's text for a store-relative path */
    file(rel, frontmatter, body) {
      const unsigned = {frontmatter: {...frontmatter, signature: null}, body}
      const sig = edSign(null, Buffer.from(memory.signingPayload(rel, unsigned), 'utf8'), privateKey)
      const text = memory.serializeMemory({frontmatter: {...frontmatter, signature: sign.formatSignature(key.keyid, sig)}, body})
      if (checked < 3) {
        checked++
        const v = sign.verifyMemory(keyring, rel, memory.parseMemory(text, rel))
        if (!v.ok) throw new Error(`a generated signature does not verify (${v.problem}: ${v.detail})`)
      }
      return text
    },
    writeManifest(scope, entries) {
      // signed for the store identity init pinned (or --for-store's), as an accept signs it
      const m = manifest.signManifest(key, manifest.nextManifest(undefined, scope, {upsert: entries}), target.storeId)
      if (!manifest.verifyManifest(target, m).ok) throw new Error(`the generated manifest of ${scope} does not verify`)
      const rel = manifest.manifestPath(scope)
      mkdirSync(dirname(join(storeRoot, rel)), {recursive: true})
      writeFileSync(join(storeRoot, rel), manifest.serializeManifest(m))
    },
    blob: hash.gitBlobHash,
  }
}
const ORIGINS = ['direct_chat', 'direct_chat', 'direct_chat', 'owner', 'dream', 'email', 'webpage', 'document', 'readme', 'tool_output']
const AUTHORS = ['alice', 'bob', 'carol', 'dave', 'agent-claude', 'agent-ci', 'dreamer']
const TOPICS = ['infra', 'billing', 'oncall', 'style', 'security', 'data', 'api', 'customer', 'release', 'testing']
const made = new Set()
const manifests = new Map()
const start = Date.UTC(2025, 0, 1)
for (let i = 0; i < N; i++) {
  const scope = pickScope()
  const title = Array.from({length: int(3, 8)}, zipfWord).join(' ').replace(/^./, (c) => c.toUpperCase())
  const topic = pick(TOPICS)
  const id = createHash('sha256').update(`${seed}:${i}`).digest('hex').slice(0, 12)
  let rel = `${scopeDir(scope)}/${topic}/${title.toLowerCase().replace(/[^a-z0-9]+/g, '-').slice(0, 40)}-${id.slice(0, 6)}.md`
  while (made.has(rel)) rel = rel.replace(/\.md$/, 'x.md')
  made.add(rel)
  const origin = pick(ORIGINS)
  const tainted = ['email', 'webpage', 'document', 'readme', 'tool_output'].includes(origin) || rand() < 0.05
  const created = new Date(start + Math.floor(rand() * 300 * 86400e3)).toISOString()
  const fm = {
    id,
    title,
    scope,
    tags: Array.from({length: int(0, 4)}, () => pick(BASE_WORDS)).filter((t, k, a) => a.indexOf(t) === k),
    author: pick(AUTHORS),
    source_session: rand() < 0.7 ? `sess-${int(1, 500)}` : null,
    origin,
    tainted,
    taint_reasons: tainted ? [`origin:${origin}`] : [],
    created,
    updated: created,
    version: int(1, 4),
    proposal: rand() < 0.8 ? `p-${id}` : null,
    reviewed_by: rand() < 0.8 ? pick(['alice', 'owner']) : null,
    digest: createHash('sha256').update(`d${id}`).digest('hex'),
    signature: createHash('sha512').update(`s${id}`).digest('base64'),
  }
  const abs = join(root, rel)
  mkdirSync(join(abs, '..'), {recursive: true})
  const text = body()
  if (signer && !scope.startsWith('run:')) {
    const signedText = signer.file(rel, fm, text)
    writeFileSync(abs, signedText)
    if (!manifests.has(scope)) manifests.set(scope, [])
    manifests.get(scope).push({path: rel, blob: signer.blob(signedText), version: fm.version, id})
  } else {
    writeFileSync(abs, serialize(signer ? {...fm, signature: null} : fm, text))
  }
}
for (const [scope, entries] of manifests) signer.writeManifest(scope, entries)

const git = (...a) => execFileSync('git', ['-C', dir, ...a], {stdio: ['ignore', 'ignore', 'inherit'], maxBuffer: 1 << 30})
git('-c', 'gc.auto=0', 'add', '-A')
git('-c', 'gc.auto=0', '-c', 'user.name=gen-store', '-c', 'user.email=gen@example.invalid', 'commit', '-q', '--no-verify', '-m', `Generate ${N} memories (${layout}${signed ? ', signed' : ''})`)
git('gc', '-q')
git('commit-graph', 'write', '--reachable', '--changed-paths')
console.error(`${N} memories in ${SCOPES.length} scopes under ${root}${signer ? `, signed by ${signer.owner.name} (${signer.owner.keyid})` : ''}`)
