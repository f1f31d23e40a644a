#!/usr/bin/env node
// The vote overhead series of scripts/bench.mjs (issue 4), run by it as a process of its own,
// as `engram mcp` is one: its heap holds this store's loaded index and nothing of the series
// before it. Writes its rows as JSON.
//
//   node scripts/bench-vote.mjs --store DIR --scope SCOPE --out FILE [--dist DIR]
import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {performance} from 'node:perf_hooks'

import {dist, memoryFiles, startedReader, stats, useDist, votePipeline, warmNeighbourLookup} from './bench-lib.mjs'

const argv = process.argv.slice(2)
const opt = (name) => {
  const i = argv.indexOf(`--${name}`)
  return i >= 0 ? argv[i + 1] : undefined
}
const [dir, scope, out] = [opt('store'), opt('scope'), opt('out')]
if (!dir || !scope || !out) {
  console.error('usage: node scripts/bench-vote.mjs --store DIR --scope SCOPE --out FILE [--dist DIR]')
  process.exit(2)
}
if (opt('dist')) useDist(opt('dist'))
const files = memoryFiles(dir, scope.replace(':', '/'))
const r = {rows: {}}
await benchVote(dir, {scope}, files, r)
writeFileSync(out, JSON.stringify(r))

/**
 * Vote overhead (issue 4): normalise + redact + flags + the three validators on realistic
 * writes, with the 10,000 curated memories of the scope as the neighbour source, in-process.
 * Writes are updates of stored memories (a changed value, "no longer") and new notes made of
 * stored sentences, so the semantic validator has close neighbours to compare against.
 * Every timed vote is a different write (60 more warm the code up first): nothing is
 * timed twice, so no cache of earlier work answers a repeated write.
 */
async function benchVote(dir, spec, files, r) {
  const vote = await votePipeline()
  const {parseMemory} = await dist('core/memory/memory.js')
  const VOTES = 600
  const WARM = 60
  const writes = makeWrites(0, VOTES + WARM)
  // 600 more, none of them voted before, for after the warm-up; and 600 more again, voted in one thread
  const later = makeWrites(VOTES + WARM + 1, VOTES)
  const laterOneThread = makeWrites(2 * VOTES + WARM + 1, VOTES)
  function makeWrites(from, count) {
  const writes = []
  for (let i = from; writes.length < count; i++) {
    const rel = files[(i * 7919) % files.length]
    const m = parseMemory(readFileSync(join(dir, rel), 'utf8'), rel)
    const path = rel.slice(spec.scope.replace(':', '/').length + 1)
    if (i % 2 === 0) {
      const raw = `${m.body.replace(/\b(\d+)\b/, (d) => String(Number(d) + 7))}\nThis is no longer true: actually the ${m.frontmatter.tags[0] ?? 'deploy'} setting is ${i + 3} instead.\n`
      writes.push({raw, title: m.frontmatter.title, scope: spec.scope, path, origin: 'direct_chat', baseBody: m.body})
    } else {
      const other = parseMemory(readFileSync(join(dir, files[(i * 104729) % files.length]), 'utf8'), rel)
      const raw = `${m.body.split('. ').slice(0, 3).join('. ')}. ${other.body.split('. ').slice(-3).join('. ')}`
      writes.push({raw, title: `Note ${i}`, scope: spec.scope, path: `bench/new-${i}.md`, origin: i % 4 === 1 ? 'direct_chat' : 'email'})
    }
  }
  return writes
  }
  // first, before the warm series fill this process's heap: the neighbour lookup as `engram write` wires it (src/core/write/write.ts without a warm
  // lookup): one-shot per call, the postings of the write's words from the scope's postings
  // file, the keyring read each time
  const [{Store}, {neighboursFor}] = await Promise.all([dist('core/store/store.js'), dist('core/write/neighbours.js')])
  const store = new Store(dir, dir)
  const session = {id: 's-bench0001', agent: 'bench-agent', assigned: spec.scope, reads: [], tainted: false, taint_reasons: [], created: '', updated: ''}
  const wired = []
  for (let i = 0; i < 30; i++) {
    const w = writes[i % writes.length]
    const t0 = performance.now()
    await neighboursFor(store, session, spec.scope, w.path, w.raw, 8)
    wired.push(performance.now() - t0)
  }
  r.rows.voteWired = stats(wired.slice(3))
  const nb = await warmNeighbourLookup(dir, spec.scope)
  // as engram mcp votes: the write's text read in a thread of its own while this one looks up
  const reader = await startedReader()
  try {
    for (let i = VOTES; i < VOTES + WARM; i++) await vote(writes[i], nb.lookup, reader)
    const total = []
    const lookup = []
    let passed = 0
    let withNeighbours = 0
    for (let i = 0; i < VOTES; i++) {
      const w = writes[i]
      let got = 0
      const t0 = performance.now()
      const res = await vote(w, async (text, limit) => {
        const l0 = performance.now()
        const out = await nb.lookup(text, limit)
        lookup.push(performance.now() - l0)
        got = out.length
        return out
      }, reader)
      total.push(performance.now() - t0)
      if (res.passed) passed++
      if (got > 0) withNeighbours++
    }
    // the same writes again, at the same HEAD: every neighbour has been read, verified and
    // analysed once by this process's warm gate and semantic validator (no write path looks
    // neighbours up warm yet: README "Performance"); reported beside the target, never as it
    const again = []
    for (let i = 0; i < VOTES; i++) {
      const t0 = performance.now()
      await vote(writes[i], nb.lookup, reader)
      again.push(performance.now() - t0)
    }
    r.rows.voteAgain = stats(again)
    // engram mcp's warm-up (every curated memory served and analysed once), then 600 writes
    // never voted before: what an agent's writes meet once the server has warmed up
    const w0 = performance.now()
    r.voteWarmServed = await nb.warmUp()
    r.voteWarmUpMs = performance.now() - w0
    const afterWarm = []
    for (const w of later) {
      const t0 = performance.now()
      await vote(w, nb.lookup, reader)
      afterWarm.push(performance.now() - t0)
    }
    r.rows.voteWarmed = stats(afterWarm)
    // the same kind of writes, never voted before, all in this thread: what a vote costs in CPU
    // (and its time on a machine of one core)
    const oneThread = []
    for (const w of laterOneThread) {
      const t0 = performance.now()
      await vote(w, nb.lookup)
      oneThread.push(performance.now() - t0)
    }
    r.rows.voteOneThread = stats(oneThread)
    r.rows.vote = stats(total)
    r.rows.voteLookup = stats(lookup)
    r.rows.voteChecks = stats(total.map((t, i) => t - lookup[i]))
    r.votePassed = passed / total.length
    r.voteWithNeighbours = withNeighbours / total.length
    // writes made of stored memories must find them: a lookup whose gate served nothing measured nothing
    if (withNeighbours === 0) throw new Error('the vote bench found no neighbour for any write (is the root pinned in ENGRAM_CONFIG_DIR?)')
  } finally {
    reader.stop()
    nb.close()
  }
}

