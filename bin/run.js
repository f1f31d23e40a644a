#!/usr/bin/env node
import {mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync} from 'node:fs'
import Module, {createRequire} from 'node:module'
import {homedir} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {Script} from 'node:vm'

/**
 * `engram search`, the command agents run most, starts without oclif when it can: the
 * bundle of src/cli/fast.ts (scripts/bundle.mjs), compiled from a V8 code cache kept with
 * engram's other derived data beside the private keys (so only their owner can plant code
 * in it). V8 rejects a cache made by another Node version or with other flags; a rebuild
 * of the bundle changes the cache's name.
 */
async function fastEntry() {
  const file = fileURLToPath(new URL('../dist/fast/search.cjs', import.meta.url))
  const source = readFileSync(file, 'utf8')
  const st = statSync(file)
  const dir = join(process.env.ENGRAM_CONFIG_DIR || join(homedir(), '.config', 'engram'), 'cache', 'v8')
  const name = `search-${process.version}-${process.arch}-${st.size}-${Math.floor(st.mtimeMs)}.bin`
  let cachedData
  try {
    cachedData = readFileSync(join(dir, name))
  } catch {
    cachedData = undefined
  }
  const script = new Script(Module.wrap(source), {filename: file, cachedData})
  const module = {exports: {}}
  script.runInThisContext()(module.exports, createRequire(file), module, file, dirname(file))
  const saveCache = () => {
    if (cachedData && !script.cachedDataRejected) return
    try {
      mkdirSync(dir, {recursive: true, mode: 0o700})
      for (const old of readdirSync(dir)) if (old.startsWith('search-') && old !== name) rmSync(join(dir, old), {force: true})
      const tmp = join(dir, `${name}.${process.pid}`)
      writeFileSync(tmp, script.createCachedData(), {mode: 0o600})
      renameSync(tmp, join(dir, name))
    } catch {
      // no cache: the next search compiles again
    }
  }
  return {fastSearch: module.exports.fastSearch, saveCache}
}

const argv = process.argv.slice(2)
let done = false
if (argv[0] === 'search' && !process.env.ENGRAM_NO_FAST) {
  const fast = await fastEntry()
  done = await fast.fastSearch(argv.slice(1))
  // after the run, so the cache holds the functions the search compiled too
  if (done) fast.saveCache()
}
if (!done) {
  const {execute} = await import('@oclif/core')
  await execute({dir: import.meta.url})
}
