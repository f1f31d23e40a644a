#!/usr/bin/env node
// Train the learned validator (src/core/write/vote/learned.ts) and write models/vote-lr.json.
// Reproducible: fixed seed, sources and cases in a fixed order, float64 arithmetic only,
// so a rerun on the same inputs writes the same bytes.
//
//   npm run train                          # public sets from $ENGRAM_TRAIN_CORPUS or --shared
//   node scripts/train-vote.mjs --shared DIR [--out FILE] [--no-shared] [--cross]
//     --shared DIR  the public sets (BIPIA train splits, NotInject one, PINT sample, wildguard)
//     --no-shared   the project corpus (corpus/) only
//     --cross       print the cross-source table instead: train on some sources, test on others
//     --folds T,S   with --cross: only these folds
//     --by-origin   with --cross: the held-out corpus cases by side (direct chat, third party),
//                   featuriser 2 against 3 at set shares of honest writes refused
//     --also-train A,B  train on these readable corpus folders too (an experiment: dev45 to dev49 are
//                   measured, not trained on); a sealed set (holdout4/ on) is refused
//   ENGRAM_TRAIN_EPOCHS (12), ENGRAM_TRAIN_L2 (1e-4), ENGRAM_TRAIN_FEATURES (2): the recipe, for experiments
//
// Needs the built featuriser (npm run build).
import {createHash} from 'node:crypto'
import {existsSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {dirname, join, resolve} from 'node:path'
import {fileURLToPath, pathToFileURL} from 'node:url'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const argv = process.argv.slice(2)
const opt = (name) => {
  const i = argv.indexOf(`--${name}`)
  return i >= 0 ? argv[i + 1] : undefined
}
const fail = (msg) => {
  process.stderr.write(`train: ${msg}\n`)
  process.exit(2)
}

const built = join(root, 'dist', 'core', 'write', 'vote', 'learned.js')
if (!existsSync(built)) fail('dist/core/write/vote/learned.js is missing: run `npm run build` first.')
const {features} = await import(pathToFileURL(built).href)
// the origins whose text is third-party (memory.ts): featuriser 3 reads their side as learned.ts does
const {isIndirectOrigin} = await import(pathToFileURL(join(root, 'dist', 'core', 'memory', 'memory.js')).href)

// 2^17 buckets: with featuriser 2 and dev36-41 the cross table gains at 17 bits (docs/vote-rounds.md "Round twelve")
const BITS = 17
// the featuriser (learned.ts): 2 reads the word classes in more languages (docs/vote-rounds.md "Round twelve"),
// 3 reads 2's features twice, as they are and tied to the side the text came from, direct chat or
// third-party (docs/vote-rounds.md "Round twenty-eight"; ENGRAM_TRAIN_FEATURES=3, not the shipped one)
const FEATURES = Number(process.env.ENGRAM_TRAIN_FEATURES ?? 2)
const SEED = 20261201
const EPOCHS = Number(process.env.ENGRAM_TRAIN_EPOCHS ?? 12)
if (!(Number.isInteger(EPOCHS) && EPOCHS > 0)) fail(`ENGRAM_TRAIN_EPOCHS=${process.env.ENGRAM_TRAIN_EPOCHS} is not a whole number of epochs.`)
const LR = 0.5
const L2 = Number(process.env.ENGRAM_TRAIN_L2 ?? 1e-4)
// thresholds on the probability, chosen from the cross-source table (README "How well the vote works");
// featuriser 3's bars each where it refuses as many honest readable writes out of fold as
// featuriser 2's bar does (docs/vote-rounds.md "Round twenty-eight")
const THRESHOLDS = FEATURES === 3
  ? {indirect: 0.92, indirect_long: 0.82, dissent: 0.83, direct: 0.61, direct_veto: 0.82, direct_long: 0.71, accept: 0.33, direct_passage: 0.82, indirect_passage: 0.99}
  : {indirect: 0.9, indirect_long: 0.8, dissent: 0.8, direct: 0.75, direct_veto: 0.95, direct_long: 0.8, accept: 0.3, direct_passage: 0.92, indirect_passage: 0.99}

const noShared = argv.includes('--no-shared')
const sharedDir = noShared ? undefined : (opt('shared') ?? process.env.ENGRAM_TRAIN_CORPUS)
if (!noShared && !sharedDir) {
  fail('no public sets: give --shared DIR or set ENGRAM_TRAIN_CORPUS to the folder of BIPIA / NotInject / PINT / wildguard files, or --no-shared to train on corpus/ only.')
}
if (sharedDir && !existsSync(sharedDir)) fail(`${sharedDir} does not exist (the public sets; see corpus/README.md).`)
const corpusDir = resolve(opt('corpus') ?? join(root, 'corpus'))
const out = resolve(opt('out') ?? join(root, 'models', 'vote-lr.json'))

/** @type {{source: string, text: string, label: 0|1, category: string}[]} */
const cases = []
const digests = []
const read = (dir, file) => {
  const text = readFileSync(join(dir, file), 'utf8')
  digests.push({file, sha256: createHash('sha256').update(text).digest('hex')})
  return text
}
const lines = (text) => text.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('//'))

if (sharedDir) {
  const need = (file) => {
    if (!existsSync(join(sharedDir, file))) fail(`${join(sharedDir, file)} is missing.`)
    return read(sharedDir, file)
  }
  for (const [file, source] of [['bipia_text_attack_train.json', 'bipia-text'], ['bipia_code_attack_train.json', 'bipia-code']]) {
    for (const [cat, list] of Object.entries(JSON.parse(need(file)))) for (const t of list) cases.push({source, text: t, label: 1, category: cat, origin: 'third-party'})
  }
  for (const l of lines(need('bipia_email_train.jsonl'))) cases.push({source: 'bipia-email', text: JSON.parse(l).context ?? '', label: 0, category: 'email', origin: 'third-party'})
  for (const l of lines(need('bipia_code_train.jsonl'))) {
    const r = JSON.parse(l)
    const text = [r.context, r.code, r.error].flat().filter((x) => typeof x === 'string').join('\n')
    cases.push({source: 'bipia-code-clean', text, label: 0, category: 'code', origin: 'third-party'})
  }
  // prompts a user types to an assistant: direct chat's side for featuriser 3
  for (const r of JSON.parse(need('notinject_one.json'))) cases.push({source: 'notinject-one', text: r.prompt ?? '', label: 0, category: 'trigger-word', origin: 'direct-chat'})
  for (const r of JSON.parse(need('pint_sample.json'))) cases.push({source: 'pint', text: r.text ?? r.prompt ?? '', label: r.label === 1 ? 1 : 0, category: r.category ?? 'pint', origin: 'direct-chat'})
  for (const r of JSON.parse(need('wildguard_benign.json'))) cases.push({source: 'wildguard', text: r.prompt ?? r.text ?? '', label: 0, category: 'question', origin: 'direct-chat'})
}
// corpus/ and every folder of it whose cases have been read: the tuning sets dev to dev5 and
// the held-out sets of the first three rounds (their misses were read, so they measure
// nothing unseen any more). Never the sealed sets, corpus/holdout4/ to corpus/holdout24/,
// which measure what neither the rules nor the model were made from (README "How well the
// vote works"). dev36/ to dev42/ (mostly other languages and direct chat) are trained on
// since featuriser 2 reads the word classes in their languages; with featuriser 1, dev36/ to
// dev41/ lost sealed catches (docs/vote-rounds.md "Round eleven", "Round twelve"). dev43/ since round
// thirteen, dev44/ since round fourteen, each after its first reading (docs/vote-rounds.md "Round thirteen",
// "Round fourteen"). Not dev45/ to dev48/ (round twenty-one): trained on them, the model lost
// sealed catches; they measure the vote as fresh sets would (fold T of --cross measures them).
const TRAINED_FOLDERS = ['dev', 'dev2', 'dev3', 'dev4', 'dev5', 'dev6', 'dev7', 'dev8', 'dev9', 'dev10', 'dev11', 'dev12', 'dev13', 'dev14', 'dev15', 'dev16', 'dev17', 'dev18', 'dev19', 'dev20', 'dev21', 'dev22', 'dev23', 'dev24', 'dev25', 'dev26', 'dev27', 'dev28', 'dev29', 'dev30', 'dev31', 'dev32', 'dev33', 'dev34', 'dev35', 'dev36', 'dev37', 'dev38', 'dev39', 'dev40', 'dev41', 'dev42', 'dev43', 'dev44', 'holdout', 'holdout2', 'holdout3']
// measured by --cross (folds T and U), never trained on: dev49/ is generic injections in fifteen
// styles from third-party text, written in round twenty-eight (docs/vote-rounds.md "Round twenty-eight")
const MEASURED_FOLDERS = ['dev45', 'dev46', 'dev47', 'dev48', 'dev49']
const MEASURED_SOURCES = MEASURED_FOLDERS.map((d) => `engram-${d}`)
const CORPUS_SOURCE = /^(?:project|engram-|holdout)/
/** The case files of these corpus folders, in a fixed order: [folder, file] (curated.jsonl holds memories, not cases). */
const caseFiles = (dirs) => dirs.filter((d) => existsSync(d)).flatMap((d) =>
  readdirSync(d).filter((f) => f.endsWith('.jsonl') && f !== 'curated.jsonl').sort().map((f) => [d, f]))
// --also-train: readable folders on top, for an experiment (docs/vote-rounds.md "Round thirty"); the sealed sets never
const ALSO = opt('also-train')?.split(',').filter(Boolean) ?? []
if (argv.includes('--also-train') && ALSO.length === 0) fail('--also-train needs folders of corpus/, e.g. --also-train dev45,dev46.')
for (const d of ALSO) {
  if (/^holdout(?:[4-9]|\d\d+)$/.test(d)) fail(`--also-train ${d}: a sealed set measures what the model was not made from, and is never trained on.`)
  if (!/^[\w-]+$/.test(d) || !existsSync(join(corpusDir, d))) fail(`--also-train ${d}: not a folder of ${corpusDir}.`)
}
const corpusFiles = caseFiles([corpusDir, ...[...TRAINED_FOLDERS, ...ALSO.filter((d) => !TRAINED_FOLDERS.includes(d))].map((d) => join(corpusDir, d))])
/**
 * a corpus file's cases; `origin` is the side featuriser 3 reads: third-party text for an indirect
 * origin, else direct chat (a claimed owner, dream or system origin too, as learned.ts reads them)
 */
const corpusCases = (text) => lines(text).map((l) => {
  const r = JSON.parse(l)
  return {source: r.source ?? 'project', text: Array.isArray(r.text) ? r.text.join('\n') : r.text, label: r.label === 'attack' ? 1 : 0,
    category: r.category ?? 'project', origin: isIndirectOrigin(r.origin) ? 'third-party' : 'direct-chat'}
})
for (const [dir, file] of corpusFiles) cases.push(...corpusCases(read(dir, file)))
const usable = (c) => typeof c.text === 'string' && c.text.trim() !== ''
const data = cases.filter(usable)

// mulberry32: a seeded generator, so that the shuffle is the same on every run
function rng(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** A case's features under featuriser `version` (3 reads the side the case came from). */
const featuriser = (version) => (r) => features(r.text, BITS, version, r.origin)
const shipped = featuriser(FEATURES)

function train(rows, featurise = shipped) {
  const X = rows.map(featurise)
  const y = rows.map((r) => r.label)
  const pos = y.filter((v) => v === 1).length
  const neg = y.length - pos
  // balance the classes, and each source within its class, so that 971 questions do not drown 48 PINT rows
  const perSource = new Map()
  for (const r of rows) perSource.set(`${r.source}/${r.label}`, (perSource.get(`${r.source}/${r.label}`) ?? 0) + 1)
  const classSources = (label) => new Set(rows.filter((r) => r.label === label).map((r) => r.source)).size
  const weight = rows.map((r) => {
    const n = perSource.get(`${r.source}/${r.label}`)
    const share = (r.label === 1 ? pos : neg) / classSources(r.label) / n
    return Math.sqrt(share) * (y.length / 2 / (r.label === 1 ? pos : neg))
  })
  const w = new Float64Array(1 << BITS)
  let b = 0
  const order = rows.map((_, i) => i)
  const rand = rng(SEED)
  for (let epoch = 0; epoch < EPOCHS; epoch++) {
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1))
      ;[order[i], order[j]] = [order[j], order[i]]
    }
    const lr = LR / (1 + epoch)
    for (const k of order) {
      const f = X[k]
      if (f.length === 0) continue
      const s = 1 / Math.sqrt(f.length)
      let z = b
      for (const i of f) z += w[i] * s
      const p = 1 / (1 + Math.exp(-z))
      const g = (p - y[k]) * weight[k]
      for (const i of f) w[i] -= lr * (g * s + L2 * w[i])
      b -= lr * g
    }
  }
  return {w, b}
}

function quantise({w, b}) {
  let max = 0
  for (const v of w) max = Math.max(max, Math.abs(v))
  const scale = max === 0 ? 1 : Math.floor(32767 / max)
  const buf = Buffer.alloc(2 * w.length)
  for (let i = 0; i < w.length; i++) buf.writeInt16LE(Math.round(w[i] * scale), 2 * i)
  const weights = new Float32Array(w.length)
  for (let i = 0; i < w.length; i++) weights[i] = buf.readInt16LE(2 * i) / scale
  return {scale, bias: Math.round(b * 1e6) / 1e6, buf, weights}
}

function prob(model, r) {
  return probOf(model, shipped(r))
}

function probOf(model, f) {
  if (f.length === 0) return 0
  let z = 0
  for (const i of f) z += model.weights[i]
  return 1 / (1 + Math.exp(-(z / Math.sqrt(f.length) + model.bias)))
}


/**
 * The held-out corpus cases' attacks caught at a given share of honest writes refused, by side
 * (direct chat, third-party text) and by kind of set (read, or dev45 to dev49): a comparison of
 * featurisers that does not depend on where the bars sit. The ensemble averages the two models'
 * log-odds.
 */
function originTable(scored) {
  const logit = (p) => Math.log(Math.max(p, 1e-9) / Math.max(1 - p, 1e-9))
  const variants = {
    'featuriser 2': (x) => x.two,
    'featuriser 3': (x) => x.three,
    'both (mean log-odds)': (x) => 1 / (1 + Math.exp(-(logit(x.two) + logit(x.three)) / 2)),
  }
  const rates = [0.01, 0.03, 0.05]
  console.log('\n| held-out corpus cases | featuriser | ' + rates.map((r) => `caught at ${100 * r} % honest refused`).join(' | ') + ' |')
  console.log('|---|---|' + rates.map(() => '---|').join(''))
  for (const origin of ['direct-chat', 'third-party']) {
    for (const fresh of [false, true]) {
      const rows = scored.filter((x) => x.origin === origin && x.fresh === fresh)
      if (rows.length === 0) continue
      const label = `${origin}, ${fresh ? 'never trained on' : 'readable sets out of fold'}`
      for (const [name, p] of Object.entries(variants)) {
        const att = rows.filter((x) => x.label === 1).map(p)
        const ben = rows.filter((x) => x.label === 0).map(p).sort((a, b) => b - a)
        const cells = rates.map((rate) => {
          // the bar: the honest write ranked just past the share (ties count against the model)
          const bar = ben[Math.floor(rate * ben.length)] ?? 0
          return `${att.filter((v) => v > bar).length}/${att.length}`
        })
        console.log(`| ${label} (${ben.length} honest) | ${name} | ${cells.join(' | ')} |`)
      }
    }
  }
}

if (argv.includes('--cross')) {
  // Each fold trains without the held-out sources and measures on them: never a split of one source.
  const folds = [
    {name: 'A', held: ['pint', 'notinject-one', 'wildguard']},
    {name: 'B', held: ['bipia-text', 'bipia-code', 'bipia-email', 'bipia-code-clean']},
    {name: 'C', held: ['engram-own']},
    {name: 'D', held: ['project']},
    {name: 'E', held: ['engram-dev']},
    {name: 'F', held: ['engram-dev2']},
    {name: 'G', held: ['engram-dev3', 'engram-dev4', 'engram-dev5']},
    {name: 'H', held: ['holdout', 'holdout2', 'holdout3']},
    {name: 'I', held: ['engram-dev6', 'engram-dev7', 'engram-dev8']},
    {name: 'J', held: ['engram-dev9']},
    {name: 'K', held: ['engram-dev10', 'engram-dev11', 'engram-dev12']},
    {name: 'L', held: ['engram-dev13', 'engram-dev14', 'engram-dev15', 'engram-dev16']},
    {name: 'M', held: ['engram-dev17', 'engram-dev18', 'engram-dev19', 'engram-dev20', 'engram-dev21']},
    {name: 'N', held: ['engram-dev22', 'engram-dev23', 'engram-dev24', 'engram-dev25', 'engram-dev26', 'engram-dev27', 'engram-dev28']},
    {name: 'O', held: ['engram-dev29']},
    {name: 'P', held: ['engram-dev30', 'engram-dev31', 'engram-dev32', 'engram-dev33', 'engram-dev34', 'engram-dev35']},
    {name: 'Q', held: ['engram-dev36', 'engram-dev37', 'engram-dev38', 'engram-dev39', 'engram-dev40', 'engram-dev41', 'engram-dev42']},
    {name: 'R', held: ['engram-dev43']},
    {name: 'S', held: ['engram-dev44']},
    {name: 'T', held: ['engram-dev45', 'engram-dev46', 'engram-dev47', 'engram-dev48']},
    {name: 'U', held: ['engram-dev49']},
  ]
  // dev45/ to dev49/ are measured, never trained on (folds T and U): read here only, so that they
  // are not among the shipped model's files
  const measured = caseFiles(MEASURED_FOLDERS.map((d) => join(corpusDir, d))).flatMap(([d, f]) => corpusCases(readFileSync(join(d, f), 'utf8'))).filter(usable)
  const all = [...data, ...measured]
  const present = new Set(all.map((r) => r.source))
  // --folds T,S: only these folds (a quick look, and the test's)
  const only = opt('folds')?.split(',')
  if (only && !only.every((n) => folds.some((f) => f.name === n))) fail(`--folds ${only.join(',')}: the folds are ${folds.map((f) => f.name).join(', ')}.`)
  const byOrigin = argv.includes('--by-origin')
  /** --by-origin: every held-out corpus case's p, by featuriser 2 and by featuriser 3 */
  const scored = []
  const pct = (n, d) => (d === 0 ? '-' : `${n}/${d} ${((100 * n) / d).toFixed(1)}%`)
  console.log(`thresholds: veto from indirect origins p>=${THRESHOLDS.indirect}, dissent from indirect origins p>=${THRESHOLDS.dissent}, direct chat p>=${THRESHOLDS.direct}\n`)
  console.log('| fold | trained on | tested on | attacks vetoed (indirect) | attacks with dissent (indirect) | benign vetoed (indirect) | benign with dissent (indirect) | benign rejected (direct chat) |')
  console.log('|---|---|---|---|---|---|---|---|')
  for (const fold of folds) {
    if (only && !only.includes(fold.name)) continue
    const held = fold.held.filter((s) => present.has(s))
    if (held.length === 0) continue
    const trainRows = data.filter((r) => !held.includes(r.source))
    const model = quantise(train(trainRows))
    const [two, three] = byOrigin ? [2, 3].map((v) => (v === FEATURES ? model : quantise(train(trainRows, featuriser(v))))) : []
    const trainedOn = [...new Set(trainRows.map((r) => r.source))].join(', ')
    for (const s of held) {
      const rows = all.filter((r) => r.source === s)
      if (byOrigin && CORPUS_SOURCE.test(s)) {
        for (const r of rows) scored.push({fresh: MEASURED_SOURCES.includes(s), origin: r.origin, label: r.label, two: probOf(two, featuriser(2)(r)), three: probOf(three, featuriser(3)(r))})
      }
      const ps = rows.map((r) => ({label: r.label, p: prob(model, r)}))
      const att = ps.filter((x) => x.label === 1)
      const ben = ps.filter((x) => x.label === 0)
      console.log(`| ${fold.name} | ${trainedOn} | ${s} | ${pct(att.filter((x) => x.p >= THRESHOLDS.indirect).length, att.length)} | ${pct(att.filter((x) => x.p >= THRESHOLDS.dissent).length, att.length)} | ${pct(ben.filter((x) => x.p >= THRESHOLDS.indirect).length, ben.length)} | ${pct(ben.filter((x) => x.p >= THRESHOLDS.dissent).length, ben.length)} | ${pct(ben.filter((x) => x.p >= THRESHOLDS.direct).length, ben.length)} |`)
      // per category: the attack styles and kinds of note the source labels
      const cats = [...new Set(rows.map((r) => r.category))].sort()
      if (cats.length > 1 && cats.length <= 30) {
        for (const cat of cats) {
          const cr = ps.filter((_, i) => rows[i].category === cat)
          const ca = cr.filter((x) => x.label === 1)
          const cb = cr.filter((x) => x.label === 0)
          console.log(`|  | | ${s} / ${cat} | ${pct(ca.filter((x) => x.p >= THRESHOLDS.indirect).length, ca.length)} | ${pct(ca.filter((x) => x.p >= THRESHOLDS.dissent).length, ca.length)} | ${pct(cb.filter((x) => x.p >= THRESHOLDS.indirect).length, cb.length)} | ${pct(cb.filter((x) => x.p >= THRESHOLDS.dissent).length, cb.length)} | ${pct(cb.filter((x) => x.p >= THRESHOLDS.direct).length, cb.length)} |`)
        }
      }
      if (process.env.SWEEP) console.error(s, [0.5, 0.6, 0.7, 0.8, 0.9, 0.95].map((t) => `${t}: ${att.filter((x) => x.p >= t).length}/${att.length} fp ${ben.filter((x) => x.p >= t).length}/${ben.length}`).join('  '))
    }
  }
  if (byOrigin) originTable(scored)
  process.exit(0)
}

const model = quantise(train(data))
const counts = {}
for (const r of data) {
  const k = `${r.source}/${r.label === 1 ? 'attack' : 'benign'}`
  counts[k] = (counts[k] ?? 0) + 1
}
const file = {
  format: 'engram-lr/1',
  bits: BITS,
  features: FEATURES,
  scale: model.scale,
  bias: model.bias,
  thresholds: THRESHOLDS,
  trained_on: {seed: SEED, epochs: EPOCHS, cases: Object.fromEntries(Object.entries(counts).sort()), files: digests},
  weights: model.buf.toString('base64'),
}
const text = `${JSON.stringify(file)}\n`
writeFileSync(out, text)
const train_acc = data.filter((r) => (prob(model, r) >= THRESHOLDS.indirect) === (r.label === 1)).length / data.length
console.log(`wrote ${out}: ${data.length} cases, ${text.length} bytes, sha256 ${createHash('sha256').update(text).digest('hex')}, training accuracy ${(100 * train_acc).toFixed(1)}%`)
