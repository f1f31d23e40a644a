import {spawnSync} from 'node:child_process'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'

const SCRIPT = fileURLToPath(new URL('../../scripts/load-host.mjs', import.meta.url))

/**
 * The one-host load script (README "Load on one host"), small: lanes of writers at once on
 * shared paths, through CLI processes and through MCP servers. The script itself checks
 * that every acknowledged write is in the store, fsck, verify and the work tree, and
 * exits 1 otherwise; `npm run load:host` runs it at full size (8 × 100).
 */
describe.skipIf(process.env.ENGRAM_BIN)('load on one host (scripts/load-host.mjs, small)', () => {
  it.each([['cli'], ['mcp']])('every acknowledged write is kept: %s', (via) => {
    const r = spawnSync(process.execPath, [SCRIPT, '--lanes', '3', '--writes', '6', '--via', via], {encoding: 'utf8', timeout: 240_000})
    expect(r.status, r.stdout + r.stderr).toBe(0)
    expect(r.stdout).toMatch(/: 18 of 18 acknowledged, 0 problems, /)
  })
})
