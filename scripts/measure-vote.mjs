#!/usr/bin/env node
// The vote on corpus sets, in-process (src/eval/inprocess.ts tallyInProcess: what `engram eval`
// does with each write, without the store around it): per set, attacks quarantined and honest
// writes refused, in all and from direct chat. Totals only, never a case, so the sealed sets can
// be measured. The figures of README "How well the vote works" (round twenty-one on) come from
// this script.
//
//   npm run build && node scripts/measure-vote.mjs [--weights FILE] [--by-validator] [SET ...]   (default: every set in corpus/)
//     --weights FILE   the learned validator reads this weights file instead of models/vote-lr.json
//     --by-validator   then, over the sets together, what quarantined each write, as `engram eval`'s last
//                      table: per validator, the attacks and honest writes it voted to reject, and those
//                      it alone rejected (counts only)
import {existsSync, readdirSync} from 'node:fs'
import {fileURLToPath, pathToFileURL} from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const fail = (msg) => {
  process.stderr.write(`measure-vote: ${msg}\n`)
  process.exit(2)
}
if (!existsSync(`${root}dist/eval/inprocess.js`)) fail('dist/eval/inprocess.js is missing: run `npm run build` first.')
const {tallyInProcess} = await import(pathToFileURL(`${root}dist/eval/inprocess.js`).href)
const {loadModel} = await import(pathToFileURL(`${root}dist/core/write/vote/learned.js`).href)
const {byValidator} = await import(pathToFileURL(`${root}dist/eval/eval.js`).href)

const args = process.argv.slice(2)
const perValidator = args.includes('--by-validator')
const argv = args.filter((a) => a !== '--by-validator')
const w = argv.indexOf('--weights')
const weights = w >= 0 ? argv[w + 1] : undefined
if (w >= 0 && !weights) fail('--weights needs a file')
// a weights file the validator cannot read makes it abstain on every case: refused here, not measured
if (weights) {
  try {
    loadModel(weights)
  } catch (error) {
    fail(`--weights ${weights}: ${error instanceof Error ? error.message : String(error)}`)
  }
}
const named = w >= 0 ? argv.filter((_, i) => i !== w && i !== w + 1) : argv
const sets = named.length > 0
  ? named
  : ['.', ...readdirSync(`${root}corpus`, {withFileTypes: true}).filter((d) => d.isDirectory()).map((d) => d.name).sort((a, b) => a.localeCompare(b, 'en', {numeric: true}))]
for (const set of sets) if (!existsSync(`${root}corpus/${set}`)) fail(`corpus/${set} does not exist (a set is a folder of corpus/)`)

const cell = (n, d) => `${n}/${d}`.padStart(13)
const row = (name, t) => `${name.padEnd(12)}${cell(t.caught, t.attacks)}${cell(t.refused, t.honest)}${cell(t.chatCaught, t.chatAttacks)}${cell(t.chatRefused, t.chatHonest)}`
console.log(`${'set'.padEnd(12)}${'caught'.padStart(13)}${'refused'.padStart(13)}${'chat caught'.padStart(13)}${'chat refused'.padStart(13)}`)
const total = {attacks: 0, caught: 0, honest: 0, refused: 0, chatAttacks: 0, chatCaught: 0, chatHonest: 0, chatRefused: 0}
const quarantined = []
for (const set of sets) {
  const t = await tallyInProcess(`${root}corpus/${set}`, weights ? {weights} : {})
  const counts = {
    attacks: t.caught.length + t.missed.length, caught: t.caught.length, honest: t.honest, refused: t.wronged.length,
    chatAttacks: t.chat.attacks, chatCaught: t.chat.caught, chatHonest: t.chat.honest, chatRefused: t.chat.refused,
  }
  for (const k of Object.keys(total)) total[k] += counts[k]
  for (const r of t.rejectedBy) quarantined.push({status: 'quarantined', label: r.label, rejected_by: r.validators})
  console.log(row(set, counts))
}
if (sets.length > 1) console.log(row('TOTAL', total))
if (perValidator) {
  console.log(`\n${'validator'.padEnd(12)}${'attacks'.padStart(13)}${'alone'.padStart(13)}${'honest'.padStart(13)}${'alone'.padStart(13)}`)
  for (const v of byValidator(quarantined)) console.log(`${v.validator.padEnd(12)}${String(v.attacks.rejected).padStart(13)}${String(v.attacks.alone).padStart(13)}${String(v.benign.rejected).padStart(13)}${String(v.benign.alone).padStart(13)}`)
  const several = (label) => quarantined.filter((r) => r.label === label && r.rejected_by.length > 1).length
  console.log(`${'two or more'.padEnd(12)}${String(several('attack')).padStart(13)}${''.padStart(13)}${String(several('benign')).padStart(13)}`)
}
