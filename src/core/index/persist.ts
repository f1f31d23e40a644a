import type MiniSearch from 'minisearch'

import {internals} from './internals.js'

/**
 * A scope's MiniSearch index as JSON text, in pieces: exactly the bytes of
 * `JSON.stringify(ms)` (MiniSearch's `toJSON`, which `loadJSON` reads back), without
 * building `toJSON`'s object of every posting or one string of the whole index. At 100k
 * memories that object and string were most of a rebuild's peak memory, and the string is
 * near V8's longest (docs/architecture.md, "Measured costs").
 *
 * `toJSON` turns each map into an object; JSON writes an object's integer keys in
 * ascending order, whatever order the map had, so the ids are written sorted here too.
 * `test/unit/index-persist.test.ts` holds the pieces to `JSON.stringify(ms)`.
 */

/** About this many characters per piece. */
const PIECE = 1 << 20

/** Map entries ordered as JSON orders an object's integer keys (ascending); already sorted maps are not copied. */
function byKey<V>(map: Map<number, V>): Iterable<[number, V]> {
  let last = -1
  for (const k of map.keys()) {
    if (k <= last) return [...map].sort((a, b) => a[0] - b[0])
    last = k
  }
  return map
}

function isIndexKey(k: number): boolean {
  return Number.isInteger(k) && k >= 0 && k < 4294967295
}

export function* indexJsonPieces<T>(index: MiniSearch<T>): Generator<string> {
  const ms = internals(index)
  for (const map of [ms._documentIds, ms._fieldLength, ms._storedFields]) {
    for (const k of map.keys()) if (!isIndexKey(k)) throw new Error('a document id that is not a small whole number')
  }
  let buf: string[] = []
  let size = 0
  const put = (s: string) => {
    buf.push(s)
    size += s.length
  }
  const flush = function* () {
    if (size >= PIECE) {
      yield buf.join('')
      buf = []
      size = 0
    }
  }
  const object = function* <V>(map: Map<number, V>, value: (v: V) => string) {
    put('{')
    let first = true
    for (const [k, v] of byKey(map)) {
      const text = value(v)
      if (text === undefined) continue // JSON leaves out a member whose value it cannot write
      put(first ? `"${k}":${text}` : `,"${k}":${text}`)
      first = false
      yield* flush()
    }
    put('}')
  }
  put(`{"documentCount":${JSON.stringify(ms._documentCount)},"nextId":${JSON.stringify(ms._nextId)},"documentIds":`)
  yield* object(ms._documentIds, (v) => JSON.stringify(v))
  put(`,"fieldIds":${JSON.stringify(ms._fieldIds)},"fieldLength":`)
  yield* object(ms._fieldLength, (v) => JSON.stringify(v))
  put(`,"averageFieldLength":${JSON.stringify(ms._avgFieldLength)},"storedFields":`)
  yield* object(ms._storedFields, (v) => JSON.stringify(v))
  put(`,"dirtCount":${JSON.stringify(ms._dirtCount)},"index":[`)
  let firstTerm = true
  for (const [term, fields] of ms._index) {
    put(firstTerm ? `[${JSON.stringify(term)},{` : `,[${JSON.stringify(term)},{`)
    firstTerm = false
    let firstField = true
    for (const [fieldId, freqs] of byKey(fields)) {
      put(firstField ? `"${fieldId}":{` : `,"${fieldId}":{`)
      firstField = false
      let firstDoc = true
      for (const [doc, tf] of byKey(freqs)) {
        put(firstDoc ? `"${doc}":${JSON.stringify(tf)}` : `,"${doc}":${JSON.stringify(tf)}`)
        firstDoc = false
      }
      put('}')
    }
    put('}]')
    yield* flush()
  }
  put('],"serializationVersion":2}')
  yield buf.join('')
}
