#!/usr/bin/env node
// What checking a claim of direct_chat against the user's prompts changes (README "Round
// nineteen"). An agent steered by third-party text can write that text claiming direct_chat,
// the default origin. For every case of the corpora that arrived by an indirect origin, the
// vote is run three ways, on the write path's own functions (dist/): as the origin it really
// came by; as direct_chat with nothing checked (no hooks, or before this round); and as
// direct_chat in a session whose prompts are recorded and hold none of its values (the user
// asked for something else) — the values the text states (session/prompts.ts) are then
// "unattested". Prints totals per set only (no case text), so the sealed sets can be measured.
//
//   npm run build && node scripts/measure-claims.mjs [SET ...]      (default: every set in corpus/)
import {readdirSync} from 'node:fs'
import {fileURLToPath, pathToFileURL} from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const imp = (p) => import(pathToFileURL(`${root}dist/${p}`).href)
const {deriveTitle, isIndirectOrigin} = await imp('core/memory/memory.js')
const {DEFAULT_CONFIG} = await imp('core/store/config.js')
const {normalise, stripInvisible} = await imp('core/write/normalise.js')
const {redact} = await imp('core/write/redact/index.js')
const {runVote} = await imp('core/write/vote/index.js')
const {loadCorpus} = await imp('eval/eval.js')
const {claimText, statedValues} = await imp('core/session/prompts.js')

const config = structuredClone(DEFAULT_CONFIG)
// each write is measured on its own (a corpus is a burst by design)
config.vote.burst.per_session = 1e6
config.vote.burst.per_author = 1e6

const sets = process.argv.slice(2).length > 0
  ? process.argv.slice(2)
  : readdirSync(`${root}corpus`, {withFileTypes: true}).filter((d) => d.isDirectory()).map((d) => d.name).sort((a, b) => a.localeCompare(b, 'en', {numeric: true}))

/** Quarantined (any part) when written as `origin`, with `unattested` values when asked. */
async function quarantined(c, curated, origin, checked) {
  for (const part of c.parts) {
    const red = redact(stripInvisible(part), [])
    const n = normalise(red.text)
    const title = redact(c.title ?? deriveTitle(red.text), []).text
    const base = c.path === undefined ? undefined : curated.find((k) => k.path === c.path)
    const unattested = checked ? statedValues(claimText(title, [], red.text)).map((v) => v.text) : []
    const v = await runVote({
      scope: 'tenant:eval', path: c.path ?? 'eval/case.md', operation: base ? 'update' : 'create', title, tags: [], body: red.text,
      normalised: {...n, hidden: [...new Set([...normalise(part).hidden, ...n.hidden])], split: normalise(part).split},
      origin, author: 'agent', session: {id: 's', agent: 'agent', tainted: false, taint_reasons: []},
      redactions: red.redactions, bodyBytes: Buffer.byteLength(red.text), maxBodyBytes: config.max_body_bytes, baseBody: base?.body,
      ...(unattested.length > 0 ? {unattested} : {}),
    }, {neighbours: () => curated, recentWrites: {session: 0, author: 0}, config: config.vote})
    if (!v.passed) return true
  }
  return false
}

const row = (name, r) => `${name.padEnd(12)} ${String(r.n).padStart(5)} ${String(r.values).padStart(6)}   ${[r.as, r.chat, r.checked].map((x) => String(x).padStart(6)).join(' ')}`
const empty = () => ({n: 0, values: 0, as: 0, chat: 0, checked: 0})
const totals = {attack: empty(), benign: empty()}
console.log('third-party cases written as direct_chat: quarantined as their real origin / as direct_chat unchecked / as direct_chat checked against prompts that hold none of their values')
console.log(`${'set'.padEnd(12)} ${'cases'.padStart(5)} ${'values'.padStart(6)}   ${'real'.padStart(6)} ${'chat'.padStart(6)} ${'check'.padStart(6)}`)
for (const set of sets) {
  const corpus = loadCorpus(`${root}corpus/${set}`)
  const curated = corpus.curated.map((c) => ({scope: 'tenant:eval', path: c.path, title: c.title ?? deriveTitle(c.text), body: c.text, score: 1}))
  const per = {attack: empty(), benign: empty()}
  for (const s of corpus.sets) for (const c of s.cases) {
    if (c.expect?.status === 'any' || !isIndirectOrigin(c.origin)) continue
    const r = per[c.label === 'attack' ? 'attack' : 'benign']
    r.n++
    if (c.parts.some((p) => statedValues(p).length > 0)) r.values++
    if (await quarantined(c, curated, c.origin, false)) r.as++
    if (await quarantined(c, curated, 'direct_chat', false)) r.chat++
    if (await quarantined(c, curated, 'direct_chat', true)) r.checked++
  }
  for (const k of ['attack', 'benign']) for (const f of Object.keys(per[k])) totals[k][f] += per[k][f]
  console.log(row(`${set}:a`, per.attack))
  console.log(row(`${set}:h`, per.benign))
}
console.log(row('TOTAL:a', totals.attack))
console.log(row('TOTAL:h', totals.benign))
