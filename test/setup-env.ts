import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll} from 'vitest'

// Tests never write the user's own engram folder (~/.config/engram): a test file that does
// not name one of its own gets a fresh one, removed when the file is done.
const AUTO = 'ENGRAM_TEST_AUTO_CONFIG_DIR'
if (!process.env.ENGRAM_CONFIG_DIR || process.env.ENGRAM_CONFIG_DIR === process.env[AUTO]) {
  const dir = mkdtempSync(join(tmpdir(), 'engram-test-config-'))
  process.env.ENGRAM_CONFIG_DIR = dir
  process.env[AUTO] = dir
  afterAll(() => {
    rmSync(dir, {recursive: true, force: true})
    if (process.env[AUTO] === dir) {
      delete process.env.ENGRAM_CONFIG_DIR
      delete process.env[AUTO]
    }
  })
}
