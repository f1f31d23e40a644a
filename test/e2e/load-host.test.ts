import {spawnSync} from 'node:child_process'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'

const SCRIPT = fileURLToPath(new URL('../../scripts/load-host.mjs', import.meta.url))
const SYNC = fileURLToPath(new URL('../../scripts/bench-sync.mjs', import.meta.url))

/**
 * The one-host load script (README "Load on one host"), small: lanes of writers at once on
 * shared paths, through CLI processes and through MCP servers. The script itself checks
 * that every acknowledged write is in the store, fsck, verify and the work tree, and
 * exits 1 otherwise; `npm run load:host` runs it at full size (8 × 100).
 */
describe.skipIf(process.env.ENGRAM_BIN)('the load and sync benchmarks, small (scripts/load-host.mjs, scripts/bench-sync.mjs)', () => {
  it.each([['cli'], ['mcp']])('every acknowledged write is kept: %s', (via) => {
    const r = spawnSync(process.execPath, [SCRIPT, '--lanes', '3', '--writes', '6', '--via', via], {encoding: 'utf8', timeout: 240_000})
    expect(r.status, r.stdout + r.stderr).toBe(0)
    expect(r.stdout).toMatch(/: 18 of 18 acknowledged, 0 problems, /)
  })

  it('the sync benchmark carries every new memory to the other clone, verified (scripts/bench-sync.mjs, small)', () => {
    const r = spawnSync(process.execPath, [SYNC, '--memories', '20', '--runs', '1'], {encoding: 'utf8', timeout: 240_000})
    expect(r.status, r.stdout + r.stderr).toBe(0)
    expect(r.stdout).toMatch(/B lists 20 memories, verify problems 0/)
  })
})
