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
