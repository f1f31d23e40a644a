#!/usr/bin/env node
// The write and accept paths, whole process: `engram write` (an agent's pending write:
// vote, proposal commit) and `engram review accept` (sign, manifest, commit) on a freshly
// generated, signed store (.bench/tmp/bench-git, removed afterwards), with the number of
// git processes each starts; then the git layer alone, in-process: the one commit function
// and two reads (one that prints nothing, one that prints a line).
//
//   node scripts/bench-git.mjs [--memories 1000] [--runs 10] [--cli DIR]...
//
// --cli names a build to drive (a folder holding bin/run.js, dist/, models/, the oclif manifest;
// default: this checkout). Given twice or more, the builds take turns run by run on the
// same store, so that a shared machine's drift hits all alike: e.g. a copy of the build
// before a change against the build after it. Needs `npm run build`.
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
const clis = args.flatMap((a, i) => (a === '--cli' ? [resolve(args[i + 1])] : []))
const builds = (clis.length > 0 ? clis : [resolve(new URL('..', import.meta.url).pathname)]).map((dir) => ({dir, bin: join(dir, 'bin', 'run.js'), dist: join(dir, 'dist')}))
const log = (m) => process.stderr.write(`${m}\n`)
const engram = (b, a, opts) => timed(process.execPath, [b.bin, ...a], opts)

const spec = {memories, layout: 'single', scope: 'project:big', seed: 7}
// generated where it is used: a store's trust root is pinned for its path, so a clone elsewhere would serve nothing
const clone = join(BENCH, 'tmp', 'bench-git')
forgetStoreState(clone)
rmSync(clone, {recursive: true, force: true})
mkdirSync(join(BENCH, 'tmp'), {recursive: true})
log(`generating a signed store of ${memories} memories …`)
timed(process.execPath, [new URL('gen-store.mjs', import.meta.url).pathname, clone, '--memories', String(memories), '--layout', spec.layout, '--scope', spec.scope, '--seed', String(spec.seed), '--sign', '--dist', clis.length > 0 ? builds[0].dist : DIST])

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
  const b0 = builds[0]
  engram(b0, ['index', 'rebuild', '--base', clone, '--json'])
  for (const b of builds) {
    b.rows = {write: [], accept: [], writeGit: [], acceptGit: [], commit: [], silent: [], read: []}
    const load = (m) => import(pathToFileURL(join(b.dist, m)).href)
    ;[{Store: b.Store}, {commitChanges: b.commitChanges}, {gitRead: b.gitRead}] = await Promise.all(['core/store/store.js', 'core/git/commit.js', 'core/git/git.js'].map(load))
  }
  let k = 0
  for (let run = 0; run < runs + 1; run++) {
    // builds in turn, the order swapped every run
    for (const b of run % 2 ? [...builds].reverse() : builds) {
      k++
      // a word of its own and the same figures in every note: no contradiction, no near duplicate
      const word = `zorbi${[...k.toString(26)].map((c) => 'abcdefghijklmnopqrstuvwxyz'[parseInt(c, 26)]).join('')}quant`
      const text = `Bench note: the ${word} batch job for the analytics warehouse now runs nightly at 02:00 UTC.\n`
      // a session of its own for each write: the delivery validator limits a session's writes per window
      const session = JSON.parse(engram(b0, ['session', 'start', '--base', clone, '--agent', 'bench-agent', '--assigned', spec.scope, '--json']).stdout).id
      const agent = childEnv({ENGRAM_SESSION: session})
      rmSync(counter, {force: true})
      const w = engram(b, ['write', `bench/git-${k}.md`, '--base', clone, '--scope', spec.scope, '--json'], {env: counted(agent), input: text})
      const wGit = starts()
      const out = JSON.parse(w.stdout)
      if (out.status !== 'pending') throw new Error(`bench write ${k} was ${out.status}: ${w.stdout.slice(0, 300)}`)
      rmSync(counter, {force: true})
      const a = engram(b, ['review', 'accept', out.proposal, '--base', clone, '--digest', out.digest, '--json'], {env: counted(childEnv())})
      const aGit = starts()
      // in-process, the git layer alone: the one commit function (blobs, private index, tree,
      // commit, compare-and-swap of the branch, work tree, index), a read that prints nothing, one that prints a line
      const store = new b.Store(clone, clone)
      let t0 = performance.now()
      await b.commitChanges(store, {subject: `bench ${k}`, changes: [{path: `bench-git/c-${k}.txt`, content: `change ${k}\n`}]})
      const commitMs = performance.now() - t0
      t0 = performance.now()
      await b.gitRead(clone, ['log', '-1', '--format=%H', '--', 'no/such/path'])
      const silentMs = performance.now() - t0
      t0 = performance.now()
      await b.gitRead(clone, ['rev-parse', 'HEAD'])
      const readMs = performance.now() - t0
      if (run === 0) continue // the first of each warms the caches a long-lived store has
      b.rows.write.push(w.ms)
      b.rows.accept.push(a.ms)
      b.rows.writeGit.push(wGit)
      b.rows.acceptGit.push(aGit)
      b.rows.commit.push(commitMs)
      b.rows.silent.push(silentMs)
      b.rows.read.push(readMs)
    }
  }
  const n = (xs) => stats(xs).p50
  console.log(`${memories} memories, ${runs} runs of each build, in turns; medians (min–max)`)
  console.log(`| | ${builds.map((b) => b.dir).join(' | ')} |`)
  console.log(`|---|${builds.map(() => '---|').join('')}`)
  const row = (label, key, countKey) => console.log(`| ${label} | ${builds.map((b) => `${fmtStat(stats(b.rows[key]))}${countKey ? `, ${n(b.rows[countKey])} git processes` : ''}`).join(' | ')} |`)
  row('`engram write` (agent, pending), whole process', 'write', 'writeGit')
  row('`engram review accept`, whole process', 'accept', 'acceptGit')
  row('commitChanges of one file, in-process', 'commit')
  row('a git read that prints nothing (`log -1 -- <absent path>`), in-process', 'silent')
  row('a git read that prints a line (`rev-parse HEAD`), in-process', 'read')
} finally {
  forgetStoreState(clone)
  rmSync(clone, {recursive: true, force: true})
  rmSync(shim, {recursive: true, force: true})
}
