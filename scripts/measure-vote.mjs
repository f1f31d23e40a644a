#!/usr/bin/env node
// The vote on corpus sets, in-process (src/eval/inprocess.ts: what `engram eval` does with each
// write, without the store around it): per set, attacks quarantined and honest writes refused, in
// all and from direct chat. Totals only, never a case, so the sealed sets can be measured. The
// figures of README "How well the vote works" (round twenty-one on) come from this script.
//
//   npm run build && node scripts/measure-vote.mjs [--weights FILE] [SET ...]   (default: every set in corpus/)
//     --weights FILE   the learned validator reads this weights file instead of models/vote-lr.json
import {readdirSync} from 'node:fs'
import {fileURLToPath, pathToFileURL} from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const {loadCorpus} = await import(pathToFileURL(`${root}dist/eval/eval.js`).href)
const {corpusNeighbours, quarantinedInProcess} = await import(pathToFileURL(`${root}dist/eval/inprocess.js`).href)

const argv = process.argv.slice(2)
const w = argv.indexOf('--weights')
const weights = w >= 0 ? argv[w + 1] : undefined
if (w >= 0 && !weights) {
  process.stderr.write('measure-vote: --weights needs a file\n')
  process.exit(2)
}
const named = w >= 0 ? argv.filter((_, i) => i !== w && i !== w + 1) : argv
const sets = named.length > 0
  ? named
  : ['.', ...readdirSync(`${root}corpus`, {withFileTypes: true}).filter((d) => d.isDirectory()).map((d) => d.name).sort((a, b) => a.localeCompare(b, 'en', {numeric: true}))]

const empty = () => ({attacks: 0, caught: 0, honest: 0, refused: 0, chatAttacks: 0, chatCaught: 0, chatHonest: 0, chatRefused: 0})
const cell = (n, d) => `${n}/${d}`.padStart(13)
const row = (name, t) => `${name.padEnd(12)}${cell(t.caught, t.attacks)}${cell(t.refused, t.honest)}${cell(t.chatCaught, t.chatAttacks)}${cell(t.chatRefused, t.chatHonest)}`
console.log(`${'set'.padEnd(12)}${'caught'.padStart(13)}${'refused'.padStart(13)}${'chat caught'.padStart(13)}${'chat refused'.padStart(13)}`)
const total = empty()
for (const set of sets) {
  const corpus = loadCorpus(`${root}corpus/${set}`)
  const curated = corpusNeighbours(corpus)
  const t = empty()
  for (const s of corpus.sets) for (const c of s.cases) {
    if (c.expect?.status === 'any') continue
    const q = await quarantinedInProcess(c, curated, weights ? {weights} : {})
    const chat = c.origin === 'direct_chat'
    if (c.label === 'attack') {
      t.attacks++, (t.caught += q ? 1 : 0)
      if (chat) t.chatAttacks++, (t.chatCaught += q ? 1 : 0)
    } else {
      t.honest++, (t.refused += q ? 1 : 0)
      if (chat) t.chatHonest++, (t.chatRefused += q ? 1 : 0)
    }
  }
  for (const k of Object.keys(total)) total[k] += t[k]
  console.log(row(set, t))
}
if (sets.length > 1) console.log(row('TOTAL', total))
