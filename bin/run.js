#!/usr/bin/env node
// CommonJS (bin/package.json): a CommonJS entry does not start Node's ESM loader, which
// the fast search path below has no use for (several ms of every search).
'use strict'
const {mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync} = require('node:fs')
const {isAscii} = require('node:buffer')
const Module = require('node:module')
const {homedir} = require('node:os')
const {dirname, join} = require('node:path')
const {Script} = require('node:vm')

/** The bundles of scripts/bundle.mjs, and the function each one exports. */
const BUNDLES = {search: 'fastSearch', write: 'fastWrite', cli: 'fastCli'}

/**
 * `engram search` and `engram write`, the commands agents run most, start without oclif
 * when they can: the bundles of src/cli/fast.ts and src/cli/fast-write.ts; every other
 * command line that plainly names a command runs from the bundle of the whole CLI
 * (src/cli/bundled.ts). Each bundle (scripts/bundle.mjs) is compiled from a V8 code cache.
 * The cache is the one kept with engram's other derived data beside the private keys (so
 * only their owner can plant code in it), made after the first run; before there is one,
 * the one `npm run build` made beside the bundle, which is as much engram's code as the
 * bundle itself. V8 rejects a cache made by another Node version or with other flags, but
 * not one made from other source of the same length: a cache is named by its bundle's size
 * and modification time, so a rebuilt or reinstalled bundle never meets an old cache.
 */
function fastEntry(command) {
  const file = join(__dirname, '..', 'dist', 'fast', `${command}.cjs`)
  // the build writes each bundle in ASCII (scripts/bundle.mjs), which reads as Latin-1 at once;
  // one that is not (an edited copy) is decoded as UTF-8, as any other file
  const bytes = readFileSync(file)
  const source = bytes.toString(isAscii(bytes) ? 'latin1' : 'utf8')
  const st = statSync(file)
  // configDir() of src/core/store/cachefile.ts, restated: this CommonJS file cannot load the ESM dist before choosing
  const dir = join(process.env.ENGRAM_CONFIG_DIR || join(homedir(), '.config', 'engram'), 'cache', 'v8')
  const name = `${command}-${process.version}-${process.arch}-${st.size}-${Math.floor(st.mtimeMs)}.bin`
  let cachedData
  try {
    cachedData = readFileSync(join(dir, name))
  } catch {
    try {
      cachedData = readFileSync(join(dirname(file), name))
    } catch {
      cachedData = undefined
    }
  }
  const script = new Script(Module.wrap(source), {filename: file, cachedData})
  const module = {exports: {}}
  script.runInThisContext()(module.exports, Module.createRequire(file), module, file, dirname(file))
  const saveCache = () => {
    // a cache V8 took is kept as it is (the build's too: it serves every key folder alike)
    if (cachedData && !script.cachedDataRejected) return
    try {
      mkdirSync(dir, {recursive: true, mode: 0o700})
      for (const old of readdirSync(dir)) if (old.startsWith(`${command}-`) && old !== name) rmSync(join(dir, old), {force: true})
      const tmp = join(dir, `${name}.${process.pid}`)
      writeFileSync(tmp, script.createCachedData(), {mode: 0o600})
      renameSync(tmp, join(dir, name))
    } catch {
      // no cache: the next search compiles again
    }
  }
  return {run: module.exports[BUNDLES[command]], saveCache}
}

/**
 * Global flags may come before the command (`engram --base X status`, `engram --json
 * list`): they are moved after it (before any `--`), where oclif parses them. Anything
 * else leading with a dash stays, and is reported as not a command.
 */
function hoistGlobalFlags(argv) {
  const lead = []
  let i = 0
  for (; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--json' || /^--base=./.test(a)) lead.push(a)
    else if (a === '--base' && i + 1 < argv.length && argv[i + 1] !== '' && !argv[i + 1].startsWith('-')) lead.push(a, argv[++i])
    else break
  }
  if (lead.length === 0 || i === argv.length || argv[i].startsWith('-')) return argv
  const rest = argv.slice(i)
  const end = rest.indexOf('--')
  return end === -1 ? [...rest, ...lead] : [...rest.slice(0, end), ...lead, ...rest.slice(end)]
}

/**
 * A command line led by a word, asking for no help: one the whole CLI's bundle may run.
 * mayBeCommand of src/cli/bundled.ts, restated without the command ids: this CommonJS file
 * cannot load the ESM dist before choosing, and the bundle checks again in full.
 */
function wantsCommand(argv) {
  if (argv.length === 0 || argv[0] === '' || argv[0].startsWith('-') || argv[0] === 'help') return false
  const end = argv.indexOf('--')
  return !(end === -1 ? argv : argv.slice(0, end)).some((a) => a === '--help' || a === '-h')
}

async function main() {
  const argv = hoistGlobalFlags(process.argv.slice(2))
  let done = false
  if ((argv[0] === 'search' || argv[0] === 'write') && !process.env.ENGRAM_NO_FAST) {
    let fast
    try {
      fast = fastEntry(argv[0])
    } catch {
      fast = undefined // no bundle (a build without it): oclif runs the command
    }
    done = fast ? await fast.run(argv.slice(1)) : false
    // after the run, so the cache holds the functions the search compiled too
    if (done) fast?.saveCache()
  }
  // help, versions and anything not led by a word go to oclif's own entry at once (the
  // bundle would only compile, then decline them: src/cli/bundled.ts mayBeCommand)
  if (!done && !process.env.ENGRAM_NO_FAST && wantsCommand(argv)) {
    let fast
    try {
      fast = fastEntry('cli')
    } catch {
      fast = undefined
    }
    done = fast ? await fast.run(argv, join(__dirname, '..')) : false
    if (done) fast?.saveCache()
  }
  if (!done) {
    // engram's error format for unknown commands and errors before a command runs (src/cli/main.ts)
    const {main: run} = await import('../dist/cli/main.js')
    // the package root: oclif reads its package.json (this folder's only sets CommonJS)
    await run(argv, join(__dirname, '..'))
  }
}

main()
