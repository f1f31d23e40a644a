/**
 * scripts/measure-vote.mjs, the in-process measure README "Where it stands" gives: totals per set
 * and over the sets, and with --by-validator what quarantined each write, counts only (the sealed
 * sets are measured with it, so it must never print a case).
 */
import {spawnSync} from 'node:child_process'
import {readFileSync} from 'node:fs'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'

const SCRIPT = fileURLToPath(new URL('../../scripts/measure-vote.mjs', import.meta.url))
const CORPUS = fileURLToPath(new URL('../../corpus/', import.meta.url))
const measure = (...args: string[]) => spawnSync(process.execPath, [SCRIPT, ...args], {encoding: 'utf8', timeout: 120_000})
const cells = (line: string) => line.trim().split(/\s{2,}/)

describe('scripts/measure-vote.mjs', () => {
  it('totals two sets, and with --by-validator says what quarantined each write, adding up to the totals', () => {
    const r = measure('--by-validator', 'dev3', 'dev5')
    expect(r.status, r.stderr).toBe(0)
    const lines = r.stdout.trimEnd().split('\n')
    const total = cells(lines.find((l) => l.startsWith('TOTAL'))!)
    const [caught] = total[1].split('/').map(Number)
    const [refused] = total[2].split('/').map(Number)
    const table = lines.slice(lines.indexOf('') + 1)
    expect(cells(table[0])).toEqual(['validator', 'attacks', 'alone', 'honest', 'alone'])
    const rows = table.slice(1, -1).map(cells)
    expect(rows.map((x) => x[0]).sort()).toEqual(['delivery', 'learned', 'provenance', 'semantic'])
    const several = cells(table.at(-1)!)
    expect(several[0]).toBe('two or more')
    // each quarantined write is rejected by one validator alone or by two or more
    expect(rows.reduce((n, x) => n + Number(x[2]), 0) + Number(several[1])).toBe(caught)
    expect(rows.reduce((n, x) => n + Number(x[4]), 0) + Number(several[2])).toBe(refused)
    for (const x of rows) {
      expect(Number(x[1])).toBeGreaterThanOrEqual(Number(x[2]))
      expect(Number(x[3])).toBeGreaterThanOrEqual(Number(x[4]))
    }
    // counts only: no case's id, and no line of a case's text
    const ids = readFileSync(`${CORPUS}dev5/attacks.jsonl`, 'utf8').split('\n').filter((l) => l.trim() && !l.startsWith('//')).map((l) => JSON.parse(l).id as string)
    expect(ids.length).toBeGreaterThan(10)
    for (const id of ids) expect(r.stdout).not.toContain(id)
  }, 120_000)

  it('refuses a set that is not a folder of corpus/, with one line and exit 2', () => {
    const r = measure('--by-validator', 'nope')
    expect(r.status).toBe(2)
    expect(r.stderr.trim()).toBe('measure-vote: corpus/nope does not exist (a set is a folder of corpus/)')
    expect(r.stdout).toBe('')
  })
})
