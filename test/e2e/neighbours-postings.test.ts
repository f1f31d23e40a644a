import {execFileSync} from 'node:child_process'
import {copyFileSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {beforeAll, describe, expect, it} from 'vitest'

import {encodePostings} from '../../src/core/index/postings.js'
import {Sandbox, sandbox} from '../helpers/cli.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const SCOPE = 'project:big'
const INDEX = '.engram/index/project.big.index'
const POSTINGS = '.engram/index/project.big.postings'

/**
 * A write's neighbour lookup reads the scope's postings file, a side file of the MiniSearch
 * index that only nominates candidates. Among 2500 signed memories it must find the
 * memory a write duplicates or contradicts, and a postings file that is missing, stale or
 * edited to hide that memory must never make the vote see nothing: the full index is used.
 */
describe("a write's neighbours among 2500 memories", () => {
  let sb: Sandbox
  let session: string
  let target: {path: string; body: string}
  let k = 0

  const write = (text: string) => {
    const r = sb.run(['write', `notes/n-${++k}.md`, '--scope', SCOPE, '--json'], {input: text, env: {ENGRAM_SESSION: session}})
    if (r.code !== 0) throw new Error(`write failed: ${r.stdout}${r.stderr}`)
    return r.json as {status: string; proposal: string; digest: string; flags: {flag: string; reason: string}[]}
  }
  // the target's text with a change announced and its numbers changed: a contradiction of it
  const contradiction = (body: string) => `Correction: ${body.replace(/[0-9]+/g, '42')}`
  const flagged = (w: {flags: {flag: string; reason: string}[]}, flag: string, path: string) =>
    w.flags.some((f) => f.flag === flag && f.reason.includes(`${SCOPE}:${path}`))
  const indexMeta = () => JSON.parse(readFileSync(join(sb.dir, INDEX), 'utf8').split('\n')[0]) as {postings?: string}

  beforeAll(() => {
    sb = sandbox()
    execFileSync(process.execPath, [join(ROOT, 'scripts/gen-store.mjs'), sb.dir, '--memories', '2500', '--layout', 'single', '--scope', SCOPE, '--seed', '3', '--sign', '--dist', join(ROOT, 'dist')], {env: sb.env, stdio: 'ignore'})
    session = sb.run(['session', 'start', '--agent', 'claude-code', '--assigned', SCOPE, '--json']).json.id
    const files = readdirSync(join(sb.dir, 'project/big'), {recursive: true}).map(String).filter((f) => f.endsWith('.md')).sort()
    const path = files[1234]
    target = {path, body: readFileSync(join(sb.dir, 'project/big', path), 'utf8').split('\n---\n').slice(1).join('\n---\n')}
  })

  it('finds a duplicate and a contradiction through the postings file the index names', () => {
    const dup = write(target.body)
    expect(flagged(dup, 'duplicate', target.path)).toBe(true)
    // the first lookup built the index and its postings file, and the index names that file's head
    expect(indexMeta().postings).toMatch(/^[0-9a-f]{64}$/)
    expect(existsSync(join(sb.dir, POSTINGS))).toBe(true)
    expect(flagged(write(contradiction(target.body)), 'contradiction', target.path)).toBe(true)
  })

  it('still sees the contradicted memory when the postings file is deleted, and writes the file again', () => {
    const before = readFileSync(join(sb.dir, POSTINGS))
    rmSync(join(sb.dir, POSTINGS))
    expect(flagged(write(contradiction(target.body)), 'contradiction', target.path)).toBe(true)
    expect(readFileSync(join(sb.dir, POSTINGS)).equals(before)).toBe(true)
  })

  it('still sees it when the postings file is rewritten without that memory', () => {
    // a well-formed postings file of the same index with the target's postings left out
    const text = readFileSync(join(sb.dir, INDEX), 'utf8')
    const ms = JSON.parse(text.slice(text.indexOf('\n') + 1))
    const sid = Number(Object.entries(ms.documentIds as Record<string, string>).find(([, p]) => p === target.path)![0])
    const terms = (ms.index as [string, Record<string, Record<string, number>>][]).map(([term, data]) => {
      const fields = new Map<number, Map<number, number>>()
      for (const [f, docs] of Object.entries(data)) {
        const m = new Map(Object.entries(docs).map(([d, tf]) => [Number(d), tf] as [number, number]).filter(([d]) => d !== sid))
        if (m.size > 0) fields.set(Number(f), m)
      }
      return [term, fields] as [string, Map<number, Map<number, number>>]
    })
    const numeric = <T>(o: Record<string, T>) => new Map(Object.entries(o).map(([key, v]) => [Number(key), v] as [number, T]))
    writeFileSync(join(sb.dir, POSTINGS), encodePostings({
      documentCount: ms.documentCount, nextId: ms.nextId, fieldIds: ms.fieldIds, averageFieldLength: ms.averageFieldLength, dirtCount: ms.dirtCount,
      documentIds: numeric<string>(ms.documentIds), fieldLength: numeric<number[]>(ms.fieldLength), terms: terms.filter(([, f]) => f.size > 0),
    }))
    expect(flagged(write(contradiction(target.body)), 'contradiction', target.path)).toBe(true)
  })

  it('still sees it when only the postings of its words are edited (the head left as it was)', () => {
    // swap the target's short id for another document's in every posting list, bytes in place
    const file = join(sb.dir, POSTINGS)
    const text = readFileSync(join(sb.dir, INDEX), 'utf8')
    const ms = JSON.parse(text.slice(text.indexOf('\n') + 1))
    const sid = Number(Object.entries(ms.documentIds as Record<string, string>).find(([, p]) => p === target.path)![0])
    const other = Number(Object.keys(ms.documentIds).find((d) => Number(d) !== sid))
    const b = readFileSync(file)
    const nl = b.indexOf(10)
    const h = JSON.parse(b.subarray(0, nl).toString('utf8'))
    const postings = nl + 1 + h.terms * 36 + h.docs * (12 + 4 * h.fields) + h.docs * 4 + h.strings
    let edits = 0
    for (let t = 0; t < h.terms; t++) {
      let o = postings + b.readUInt32LE(nl + 1 + t * 36 + 8)
      const fields = b.readUInt32LE(o)
      o += 4
      for (let f = 0; f < fields; f++) {
        const n = b.readUInt32LE(o + 4)
        o += 8
        for (let j = 0; j < n; j++, o += 8) if (b.readUInt32LE(o) === sid) edits += b.writeUInt32LE(other, o) && 1
      }
    }
    expect(edits).toBeGreaterThan(5)
    writeFileSync(file, b)
    expect(flagged(write(contradiction(target.body)), 'contradiction', target.path)).toBe(true)
  })

  it('still sees a memory newer than a stale postings file put back', () => {
    const stale = join(sb.dir, '..', `${POSTINGS.replace(/\W/g, '_')}-stale`)
    copyFileSync(join(sb.dir, POSTINGS), stale)
    // a memory curated after that file, then a fresh index (no delta that would still hold it)
    const fresh = 'The zorquanta ledger export runs from the eu-west-3 bucket every Tuesday at 04:00 for the finance team.\n'
    const w = write(fresh)
    expect(sb.run(['review', 'accept', w.proposal, '--digest', w.digest]).code).toBe(0)
    expect(sb.run(['index', 'rebuild', '--json']).code).toBe(0)
    copyFileSync(stale, join(sb.dir, POSTINGS))
    rmSync(stale)
    const c = write('Correction: the zorquanta ledger export now runs from the us-east-1 bucket every Tuesday at 04:00 for the finance team.\n')
    expect(flagged(c, 'contradiction', `notes/n-${k - 1}.md`)).toBe(true)
  })
})
