#!/usr/bin/env node
// What checking a claim of direct_chat against the user's prompts changes (docs/vote-rounds.md "Round
// nineteen"; src/eval/claims.ts says how each case is voted on). Prints totals per set only
// (no case text), so the sealed sets can be measured.
//
//   npm run build && node scripts/measure-claims.mjs [SET ...]      (default: every set in corpus/)
import {readdirSync} from 'node:fs'
import {fileURLToPath, pathToFileURL} from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const {addClaims, measureClaims} = await import(pathToFileURL(`${root}dist/eval/claims.js`).href)

const sets = process.argv.slice(2).length > 0
  ? process.argv.slice(2)
  : readdirSync(`${root}corpus`, {withFileTypes: true}).filter((d) => d.isDirectory()).map((d) => d.name).sort((a, b) => a.localeCompare(b, 'en', {numeric: true}))

const row = (name, r) => `${name.padEnd(12)} ${String(r.n).padStart(5)} ${String(r.values).padStart(6)}   ${[r.real, r.chat, r.checked].map((x) => String(x).padStart(6)).join(' ')}`
console.log('third-party cases written as direct_chat: quarantined as their real origin / as direct_chat unchecked / as direct_chat checked against prompts that hold none of their values')
console.log(`${'set'.padEnd(12)} ${'cases'.padStart(5)} ${'values'.padStart(6)}   ${'real'.padStart(6)} ${'chat'.padStart(6)} ${'check'.padStart(6)}`)
const all = []
for (const set of sets) {
  const m = await measureClaims(`${root}corpus/${set}`)
  all.push(m)
  console.log(row(`${set}:a`, m.attack))
  console.log(row(`${set}:h`, m.benign))
}
const total = addClaims(all)
console.log(row('TOTAL:a', total.attack))
console.log(row('TOTAL:h', total.benign))
