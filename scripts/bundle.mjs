// Bundles the fast `engram search` and `engram write` entries (src/cli/fast.ts and
// src/cli/fast-write.ts, after tsc) into one CommonJS file each, dist/fast/search.cjs and
// dist/fast/write.cjs, which bin/run.js compiles with a V8 code cache: a fresh
// process then compiles one script instead of resolving and loading about thirty modules
// (module loading is a large part of a CLI's start: README "Performance"). Run by `npm run build`.
import {readFileSync, rmSync} from 'node:fs'
import {build} from 'rolldown'

const out = new URL('../dist/fast/', import.meta.url).pathname
rmSync(out, {recursive: true, force: true})
const entries = [
  // simple-git is required from node_modules at the first git call (src/core/git/git.ts),
  // not compiled into every search: a warm search starts no git and never loads it
  {name: 'search', input: 'fast.js', external: ['simple-git']},
  // every write runs git: simple-git is compiled in with the rest
  {name: 'write', input: 'fast-write.js', external: []},
]
for (const e of entries) {
  await build({
    input: new URL(`../dist/cli/${e.input}`, import.meta.url).pathname,
    platform: 'node',
    logLevel: 'warn',
    external: e.external,
    // dynamic imports become require(): a script compiled by node:vm cannot import()
    output: {file: `${out}${e.name}.cjs`, format: 'cjs', codeSplitting: false, dynamicImportInCjs: false},
  })
  // a dynamic import() left in the bundle would fail at run time inside node:vm
  if (/\bimport\(/.test(readFileSync(`${out}${e.name}.cjs`, 'utf8'))) throw new Error(`dist/fast/${e.name}.cjs still contains import(): node:vm cannot run it`)
}
