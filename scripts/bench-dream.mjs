#!/usr/bin/env node
// A week of dream input, timed (README "Performance", "Dreaming"): 500 Claude Code
// transcripts totalling about 200 MB and 2,000 run: notes, dreamed by the deterministic
// engine with `--dry-run` (the engine's cost; each proposal then written costs one write,
// README "Performance"). Wall time and peak RSS from /usr/bin/time.
//   npm run build && node scripts/bench-dream.mjs [--mb 200] [--transcripts 500] [--notes 2000]
import {execFileSync, spawnSync} from 'node:child_process'
import {mkdirSync, mkdtempSync, writeFileSync, createWriteStream, existsSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`)
  return i > 0 ? Number(process.argv[i + 1]) : dflt
}
const MB = arg('mb', 200)
const FILES = arg('transcripts', 500)
const NOTES = arg('notes', 2000)
const BIN = fileURLToPath(new URL('../bin/run.js', import.meta.url))
const root = mkdtempSync(join(tmpdir(), 'engram-bench-dream-'))
const store = join(root, 'store')
const config = join(root, 'config')
const transcripts = join(root, 'transcripts')
mkdirSync(store)
mkdirSync(config)
mkdirSync(transcripts)
writeFileSync(join(config, 'pass'), 'bench passphrase\n', {mode: 0o600})
const env = {...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ENGRAM_') && !k.startsWith('GIT_') && k !== 'NODE_ENV')),
  ENGRAM_CONFIG_DIR: config, ENGRAM_PASSPHRASE_FILE: join(config, 'pass'), ENGRAM_INSECURE_TEST_KDF: '1', NO_COLOR: '1',
  GIT_AUTHOR_NAME: 'bench', GIT_AUTHOR_EMAIL: 'bench@example.com', GIT_COMMITTER_NAME: 'bench', GIT_COMMITTER_EMAIL: 'bench@example.com'}
const engram = (...args) => JSON.parse(execFileSync(process.execPath, [BIN, ...args, '--json'], {cwd: store, env, encoding: 'utf8', maxBuffer: 1 << 28}))

// a seeded generator: the same input every run
let seed = 12345
// mulberry32
const rnd = () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}
const WORDS = 'deploy billing invoice tenant cluster region replica backup schedule contract renewal support escalation latency budget quota migration schema rollout feature flag customer account payment refund report dashboard alert incident review release branch staging production database cache queue worker token secret policy audit compliance vendor pricing discount trial onboarding'.split(' ')
const NAMES = Array.from({length: 5000}, (_, i) => `name${i.toString(36)}`)
const word = () => (rnd() < 0.3 ? NAMES[Math.floor(rnd() * NAMES.length)] : WORDS[Math.floor(rnd() * WORDS.length)])
const sentence = () => {
  const n = 8 + Math.floor(rnd() * 14)
  const w = Array.from({length: n}, word)
  w[0] = w[0][0].toUpperCase() + w[0].slice(1)
  return `${w.join(' ')}.`
}
const FACTS = Array.from({length: 25}, (_, i) => `Acme fact number ${i} says the ${WORDS[i]} window closes on day ${i + 3} of each month.`)

console.error(`generating ${FILES} transcripts (~${MB} MB) and ${NOTES} run notes in ${root}`)
engram('init')
const perFile = Math.floor((MB * 1024 * 1024) / FILES)
let total = 0
for (let f = 0; f < FILES; f++) {
  const sid = `bench-${f.toString().padStart(4, '0')}-4000-8000-000000000000`
  const lines = []
  let size = 0
  let n = 0
  while (size < perFile) {
    const ts = new Date(Date.now() - rnd() * 6 * 86_400_000).toISOString()
    const text = Array.from({length: 3 + Math.floor(rnd() * 8)}, sentence).join(' ') + (rnd() < 0.02 ? ` ${FACTS[Math.floor(rnd() * FACTS.length)]}` : '')
    const role = n % 2 === 0 ? 'user' : 'assistant'
    const content = role === 'user' ? text : [{type: 'text', text}, ...(rnd() < 0.1 ? [{type: 'tool_use', id: `toolu_${f}_${n}`, name: rnd() < 0.5 ? 'WebFetch' : 'Bash', input: {q: 'x'}}] : [])]
    const line = JSON.stringify({parentUuid: null, isSidechain: false, userType: 'external', cwd: '/home/dev/acme', sessionId: sid, version: '1.0.98', type: role, message: {role, content}, uuid: `u-${f}-${n}`, timestamp: ts})
    lines.push(line)
    size += line.length + 1
    n++
  }
  writeFileSync(join(transcripts, `${sid}.jsonl`), `${lines.join('\n')}\n`)
  total += size
}
// run notes: 20 sessions of the scope, 100 notes each, committed in one commit
const sessions = Array.from({length: 20}, () => engram('session', 'start', '--agent', 'bench', '--assigned', 'tenant:acme').id)
for (let i = 0; i < NOTES; i++) {
  const s = sessions[i % sessions.length]
  mkdirSync(join(store, 'run', s), {recursive: true})
  const now = new Date().toISOString()
  writeFileSync(join(store, 'run', s, `note-${i}.md`), `---\nid: "m-bench${i}"\ntitle: "note ${i}"\nscope: "run:${s}"\ntags: []\nauthor: "bench"\nsource_session: "${s}"\norigin: "direct_chat"\ntainted: false\ntaint_reasons: []\ncreated: "${now}"\nupdated: "${now}"\nversion: 1\nproposal: null\nreviewed_by: null\ndigest: null\nsignature: null\n---\n${Array.from({length: 6}, sentence).join(' ')}${i % 50 === 0 ? ` ${FACTS[i % FACTS.length]}` : ''}\n`)
}
execFileSync('git', ['add', '-A'], {cwd: store, env})
execFileSync('git', ['commit', '-q', '-m', 'bench run notes'], {cwd: store, env})
console.error(`generated ${(total / 1024 / 1024).toFixed(0)} MB of transcripts`)

const time = existsSync('/usr/bin/time') ? '/usr/bin/time' : null
const args = [BIN, 'dream', '--scope', 'tenant:acme', '--transcripts', transcripts, '--since', '7d', '--dry-run', '--json']
const runs = []
for (let i = 0; i < 3; i++) {
  const started = Date.now()
  const r = time ? spawnSync(time, ['-f', '%e %M', process.execPath, ...args], {cwd: store, env, encoding: 'utf8', maxBuffer: 1 << 28}) : spawnSync(process.execPath, args, {cwd: store, env, encoding: 'utf8', maxBuffer: 1 << 28})
  const wall = (Date.now() - started) / 1000
  if (r.status !== 0) throw new Error(r.stderr)
  const out = JSON.parse(r.stdout)
  const rss = time ? Number(r.stderr.trim().split('\n').at(-1).split(' ')[1]) / 1024 : NaN
  runs.push({wall, rss, out})
  console.error(`run ${i + 1}: ${wall.toFixed(1)} s, peak RSS ${rss.toFixed(0)} MiB; ${out.transcripts} transcripts, ${out.run_notes} run notes, ${out.lines_read} lines, ${out.items.length} proposals`)
}
const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
console.log(JSON.stringify({transcripts_mb: Math.round(total / 1024 / 1024), transcripts: FILES, run_notes: NOTES, wall_s_median: med(runs.map((r) => r.wall)), peak_rss_mib_max: Math.max(...runs.map((r) => r.rss)), proposals: runs[0].out.items.length, lines: runs[0].out.lines_read}))
