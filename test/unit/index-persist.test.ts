import MiniSearch from 'minisearch'
import {describe, expect, it} from 'vitest'

import {newIndex} from '../../src/core/index/index.js'
import {indexJsonPieces} from '../../src/core/index/persist.js'
import {fc, runs} from './properties-seed.js'

/** The index written in pieces must be exactly `JSON.stringify(ms)`: the bytes MiniSearch's loadJSON reads. */

const word = fc.constantFrom('deploy', 'staging', 'cache', 'über', 'naïve', '日本', 'quote"d', 'back\\slash', 'tab\tbed', 'x', 'rollback', 'kubernetes')
const text = fc.array(word, {maxLength: 30}).map((w) => w.join(' '))
const doc = fc.record({title: text, tags: fc.array(word, {maxLength: 3}), body: text, tainted: fc.boolean(), reviewed_by: fc.option(fc.constantFrom('owner', 'carol'))})

function add(ms: ReturnType<typeof newIndex>, path: string, d: {title: string; tags: string[]; body: string; tainted: boolean; reviewed_by: string | null}) {
  ms.add({path, blob: `b-${path}`, author: 'a', origin: 'direct_chat', ...d})
}

describe('the index written in pieces (persist.ts)', () => {
  it('is the text of JSON.stringify(ms), for indexes built, changed by remove() and add(), and discarded from', () => {
    fc.assert(
      fc.property(fc.array(doc, {minLength: 0, maxLength: 30}), fc.array(fc.tuple(fc.nat(), fc.option(doc), fc.boolean()), {maxLength: 10}), (docs, changes) => {
        const ms = newIndex()
        docs.forEach((d, i) => add(ms, `p/${i}.md`, d))
        for (const [n, d, discard] of changes) {
          const path = `p/${docs.length === 0 ? 0 : n % docs.length}.md`
          const old = ms.getStoredFields(path)
          if (old) {
            if (discard) ms.discard(path)
            else ms.remove({path, ...old} as never)
          }
          if (d) add(ms, path, d)
        }
        const text = [...indexJsonPieces(ms)].join('')
        expect(text).toBe(JSON.stringify(ms))
        // and MiniSearch reads it back (its term tree then iterates in another order: compared as sets)
        const back = MiniSearch.loadJSON(text, (ms as unknown as {_options: never})._options)
        const parsed = (t: string) => {
          const j = JSON.parse(t)
          return {...j, index: Object.fromEntries(j.index)}
        }
        expect(parsed(JSON.stringify(back))).toEqual(parsed(text))
      }),
      {numRuns: runs(150)},
    )
  })

  it('comes in pieces of about a megabyte for a large index', () => {
    const ms = newIndex()
    for (let i = 0; i < 3000; i++) add(ms, `p/${i}.md`, {title: `t${i}`, tags: [], body: `word${i} common ${'filler '.repeat(50)}`, tainted: false, reviewed_by: null})
    const pieces = [...indexJsonPieces(ms)]
    expect(pieces.length).toBeGreaterThan(1)
    expect(Math.max(...pieces.map((p) => p.length))).toBeLessThan(2 << 20)
    expect(pieces.join('')).toBe(JSON.stringify(ms))
  })
})
