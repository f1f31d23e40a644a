// Bundles the fast `engram search` entry (src/cli/fast.ts, after tsc) into one CommonJS
// file, dist/fast/search.cjs, which bin/run.js compiles with a V8 code cache: a fresh
// process then compiles one script instead of resolving and loading about thirty modules
// (module loading is a large part of a CLI's start: README "Performance"). Run by `npm run build`.
import {rmSync} from 'node:fs'
import {build} from 'rolldown'

const out = new URL('../dist/fast/', import.meta.url).pathname
rmSync(out, {recursive: true, force: true})
await build({
  input: new URL('../dist/cli/fast.js', import.meta.url).pathname,
  platform: 'node',
  logLevel: 'warn',
  // required from node_modules at the first git call (src/core/git/git.ts), not compiled
  // into every search: a warm search starts no git and never loads it
  external: ['simple-git'],
  // dynamic imports become require(): a script compiled by node:vm cannot import()
  output: {file: `${out}search.cjs`, format: 'cjs', codeSplitting: false, dynamicImportInCjs: false},
})
// a dynamic import() left in the bundle would fail at run time inside node:vm
const {readFileSync} = await import('node:fs')
if (/\bimport\(/.test(readFileSync(`${out}search.cjs`, 'utf8'))) throw new Error('dist/fast/search.cjs still contains import(): node:vm cannot run it')
