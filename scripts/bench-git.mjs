#!/usr/bin/env node
// The write and accept paths, whole process: `engram write` (an agent's pending write:
// vote, proposal commit) and `engram review accept` (sign, manifest, commit) on a freshly
// generated, signed store (.bench/tmp/bench-git, removed afterwards), plus the number of git processes each one starts. These two
// commands are where engram's git calls are (the warm search path makes none).
//
//   node scripts/bench-git.mjs [--memories 1000] [--runs 10] [--cli DIR]
//
// --cli drives another build (a folder holding bin/run.js, dist/, the oclif manifest),
// e.g. a copy of an older build, to compare before and after. Needs `npm run build`.
import {execFileSync} from 'node:child_process'
import {chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {join, resolve} from 'node:path'
import {performance} from 'node:perf_hooks'
import {pathToFileURL} from 'node:url'

import {BENCH, childEnv, DIST, fmtStat, forgetStoreState, stats, timed} from './bench-lib.mjs'

const args = process.argv.slice(2)
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? args[i + 1] : dflt
}
const memories = Number(opt('memories', '1000'))
const runs = Number(opt('runs', '10'))
const cli = opt('cli')
const BIN = cli ? join(resolve(cli), 'bin', 'run.js') : new URL('../bin/run.js', import.meta.url).pathname
const log = (m) => process.stderr.write(`${m}\n`)
const engram = (a, opts) => timed(process.execPath, [BIN, ...a], opts)

const spec = {memories, layout: 'single', scope: 'project:big', seed: 7}
// generated where it is used: a store's trust root is pinned for its path, so a clone elsewhere would serve nothing
const clone = join(BENCH, 'tmp', 'bench-git')
forgetStoreState(clone)
rmSync(clone, {recursive: true, force: true})
mkdirSync(join(BENCH, 'tmp'), {recursive: true})
log(`generating a signed store of ${memories} memories …`)
timed(process.execPath, [new URL('gen-store.mjs', import.meta.url).pathname, clone, '--memories', String(memories), '--layout', spec.layout, '--scope', spec.scope, '--seed', String(spec.seed), '--sign', '--dist', cli ? join(resolve(cli), 'dist') : DIST])

// a `git` on PATH that counts its starts, then runs the real one
const shim = join(BENCH, 'tmp', 'git-count')
const counter = join(shim, 'count')
mkdirSync(shim, {recursive: true})
const realGit = execFileSync('sh', ['-c', 'command -v git'], {encoding: 'utf8'}).trim()
writeFileSync(join(shim, 'git'), `#!/bin/sh\necho >> '${counter}'\nexec '${realGit}' "$@"\n`)
chmodSync(join(shim, 'git'), 0o755)
const counted = (env) => ({...env, PATH: `${shim}:${env.PATH}`})
const starts = () => {
  try {
    return readFileSync(counter, 'utf8').split('\n').length - 1
  } catch {
    return 0
  }
}

try {
  engram(['index', 'rebuild', '--base', clone, '--json'])
  const session = JSON.parse(engram(['session', 'start', '--base', clone, '--agent', 'bench-agent', '--assigned', spec.scope, '--json']).stdout).id
  const agent = childEnv({ENGRAM_SESSION: session})
  const rows = {write: [], accept: [], writeGit: [], acceptGit: []}
  for (let k = 0; k < runs + 1; k++) {
    const text = `Bench note ${k}: the nightly export job number ${k} for the analytics warehouse now runs at 02:${String(k).padStart(2, '0')} UTC.\n`
    rmSync(counter, {force: true})
    const w = engram(['write', `bench/git-${k}.md`, '--base', clone, '--scope', spec.scope, '--json'], {env: counted(agent), input: text})
    const wGit = starts()
    const out = JSON.parse(w.stdout)
    if (out.status !== 'pending') throw new Error(`bench write ${k} was ${out.status}: ${w.stdout.slice(0, 300)}`)
    rmSync(counter, {force: true})
    const a = engram(['review', 'accept', out.proposal, '--base', clone, '--digest', out.digest, '--json'], {env: counted(childEnv())})
    const aGit = starts()
    if (k === 0) continue // the first of each warms the caches a long-lived store has
    rows.write.push(w.ms)
    rows.accept.push(a.ms)
    rows.writeGit.push(wGit)
    rows.acceptGit.push(aGit)
  }
  // in-process, the git layer alone: the one commit function (blobs, private index, tree,
  // commit, compare-and-swap of the branch, work tree, index), and a read that prints nothing
  const load = (m) => import(pathToFileURL(join(cli ? join(resolve(cli), 'dist') : DIST, m)).href)
  const [{Store}, {commitChanges}, {gitRead}] = await Promise.all(['core/store/store.js', 'core/git/commit.js', 'core/git/git.js'].map(load))
  const store = new Store(clone, clone)
  rows.commit = []
  rows.silent = []
  rows.read = []
  for (let k = 0; k < runs * 2 + 1; k++) {
    let t0 = performance.now()
    await commitChanges(store, {subject: `bench ${k}`, changes: [{path: `bench-git/c-${k}.txt`, content: `change ${k}\n`}]})
    const commitMs = performance.now() - t0
    t0 = performance.now()
    await gitRead(clone, ['log', '-1', '--format=%H', '--', 'no/such/path'])
    const silentMs = performance.now() - t0
    t0 = performance.now()
    await gitRead(clone, ['rev-parse', 'HEAD'])
    const readMs = performance.now() - t0
    if (k === 0) continue
    rows.commit.push(commitMs)
    rows.silent.push(silentMs)
    rows.read.push(readMs)
  }
  const n = (xs) => stats(xs).p50
  console.log(`engram ${cli ? `(${cli}) ` : ''}on ${memories} memories, ${runs} runs each, medians (min–max)`)
  console.log(`| \`engram write\` (agent, pending) | ${fmtStat(stats(rows.write))} | ${n(rows.writeGit)} git processes |`)
  console.log(`| \`engram review accept\` | ${fmtStat(stats(rows.accept))} | ${n(rows.acceptGit)} git processes |`)
  console.log(`| commitChanges, one file, in-process | ${fmtStat(stats(rows.commit))} | |`)
  console.log(`| a git read that prints nothing (\`log -1 -- <absent path>\`), in-process | ${fmtStat(stats(rows.silent))} | |`)
  console.log(`| a git read that prints a line (\`rev-parse HEAD\`), in-process | ${fmtStat(stats(rows.read))} | |`)
} finally {
  forgetStoreState(clone)
  rmSync(clone, {recursive: true, force: true})
  rmSync(shim, {recursive: true, force: true})
}
