import {describe, expect, it} from 'vitest'

import {changedLongAgo} from '../../src/core/store/fsutil.js'

describe('how long ago a file must have changed before its timestamps stand for its bytes', () => {
  it('waits 100 ms for nanosecond timestamps and 2.5 s for whole-second ones', () => {
    const now = 1_800_000_000_000
    const ns = (ms: number, extraNs = 123_456n) => BigInt(ms) * 1_000_000n + extraNs
    expect(changedLongAgo(ns(now - 50), now)).toBe(false)
    expect(changedLongAgo(ns(now - 150), now)).toBe(true)
    // a change time on a whole second: a file system that may keep seconds only
    const second = BigInt(Math.floor((now - 1500) / 1000)) * 1_000_000_000n
    expect(changedLongAgo(second, now)).toBe(false)
    expect(changedLongAgo(second, now + 2000)).toBe(true)
  })
})

describe('the one atomic writer', () => {
  it('writes with the mode asked, replaces an existing file, and leaves no temp file when the rename fails', async () => {
    const {mkdtempSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync} = await import('node:fs')
    const {tmpdir} = await import('node:os')
    const {join} = await import('node:path')
    const {writeFileAtomic} = await import('../../src/core/store/fsutil.js')
    const dir = mkdtempSync(join(tmpdir(), 'engram-fsutil-'))
    const file = join(dir, 'sub', 'a.json')
    writeFileAtomic(file, 'one', 0o600)
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(statSync(join(dir, 'sub')).mode & 0o777).toBe(0o700)
    writeFileSync(file, 'old')
    writeFileAtomic(file, 'two', 0o600, {fsync: false})
    expect(readFileSync(file, 'utf8')).toBe('two')
    // a folder where the file should go: the rename fails, and the temp file goes with it
    mkdirSync(join(dir, 'sub', 'b'))
    mkdirSync(join(dir, 'sub', 'b', 'x'))
    expect(() => writeFileAtomic(join(dir, 'sub', 'b'), 'three')).toThrow()
    expect(readdirSync(join(dir, 'sub')).sort()).toEqual(['a.json', 'b'])
  })
})
