// Bundles the fast `engram search` entry (src/cli/fast.ts, after tsc) into one file,
// dist/fast/search.js: a fresh process then compiles one module instead of resolving
// and loading about thirty (PERF-NOTES: module loading is a large part of a CLI's start).
// Run by `npm run build`; bin/run.js imports the bundle.
import {rmSync} from 'node:fs'
import {build} from 'rolldown'

const out = new URL('../dist/fast/', import.meta.url).pathname
rmSync(out, {recursive: true, force: true})
await build({
  input: new URL('../dist/cli/fast.js', import.meta.url).pathname,
  platform: 'node',
  logLevel: 'warn',
  output: {file: `${out}search.js`, format: 'esm', codeSplitting: false},
})
