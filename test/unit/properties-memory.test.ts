import {describe, expect, it} from 'vitest'
import {cpuMs} from '../helpers/cpu.js'

import {isEngramError} from '../../src/core/store/errors.js'
import {
  FIELD_ORDER,
  ORIGINS,
  type MemoryFile,
  normaliseBody,
  parseCanonicalMemory,
  parseFrontmatter,
  parseMemory,
  parseMemoryYaml,
  serializeMemory,
} from '../../src/core/memory/memory.js'
import {fc, runs} from './properties-seed.js'

/** Run `f`; it must return or throw engram's typed error, never anything else. */
function parsesOrBadInput(f: () => unknown): void {
  try {
    f()
  } catch (error) {
    if (!isEngramError(error) || error.code !== 'bad-input') throw error
  }
}

// any text, including the characters YAML and JSON treat specially
const anyText = fc.oneof(
  fc.string({unit: 'binary', maxLength: 300}),
  fc.string({unit: fc.constantFrom(...'-:\n\r\t "\'[]{}&*!|>#%@`,?\\\u0000\u007f\u0085\u2028\ufeff\ud800xyz019'.split('')), maxLength: 200}),
)
// lines that look like frontmatter: YAML keys, anchors, aliases, tags, flow and block values
const yamlLine = fc.oneof(
  fc.tuple(fc.constantFrom(...FIELD_ORDER, 'x', '__proto__', '<<', 'constructor'), anyText).map(([k, v]) => `${k}: ${v.replace(/\n/g, ' ')}`),
  fc.constantFrom(
    'id: "a"', 'origin: direct_chat', 'origin: owner', 'version: 2', 'version: -1', 'version: 1.5', 'tainted: yes',
    'tags: [a, b]', 'tags:\n  - a\n  - 1', 'x: &a [1, 2]', 'y: *a', 'z: &z [*z]', '<<: {id: merged}', 'f: !!js/function "function(){}"',
    'r: !!js/regexp /x/', 'u: !!js/undefined ""', 'b: !!binary aGVsbG8=', 'd: 2024-01-01', 'd: 2024-01-01T00:00:00Z', 's: !!set {a, b}',
    'o: !!omap [a: 1]', 'p: !!pairs [a: 1]', 'n: ~', 'q: "\\u0000"', 'e: "\\e\\x41\\N\\_"', 'k: |\n  block\n  text', '? complex\n: key',
    '%YAML 1.2', '--- ', '...', '- list', 'a: [', 'a: {b: [c, {d: e}]}', '"quoted key": 1', 'title: "line\\nbreak"',
  ),
)
const frontmatterish = fc
  .tuple(fc.constantFrom('---', '---\r', '--- ', '---js', '---yaml', '--- coffee', '---json', '---toml'), fc.array(yamlLine, {maxLength: 12}), fc.constantFrom('---', '---\r', '--- ', '...', ''), anyText)
  .map(([open, lines, close, body]) => [open, ...lines, close, body].join('\n'))

const text = fc.oneof(anyText, frontmatterish)

// a valid memory: every field in its type, strings from all of Unicode (with the odd
// characters YAML and JSON escape differently), and a body
const str = fc.oneof(fc.string({maxLength: 40}), fc.string({unit: 'binary', maxLength: 40}), fc.constantFrom('', '---', 'a: b', '#x', '"', "'", '\u2028', '\u0085', '\u007f', '\ufeff', '\u00a0', 'null', 'true', '1', '- x', '[x]'))
const nullable = fc.option(str, {nil: null})
const isoDay = fc.integer({min: 0, max: 80_000}).map((d) => new Date(Date.UTC(1990, 0, 1) + d * 86_400_000).toISOString().slice(0, 10))
const memory: fc.Arbitrary<MemoryFile> = fc.record({
  frontmatter: fc.record({
    id: str,
    title: str,
    scope: str,
    tags: fc.array(str, {maxLength: 4}),
    author: str,
    source_session: nullable,
    origin: fc.constantFrom(...ORIGINS),
    tainted: fc.boolean(),
    taint_reasons: fc.array(str, {maxLength: 3}),
    created: str,
    updated: str,
    version: fc.integer({min: 1, max: Number.MAX_SAFE_INTEGER}),
    proposal: nullable,
    reviewed_by: nullable,
    digest: nullable,
    signature: nullable,
    // optional, and absent (not null) when unset: a date as the write stores it, or as YAML gives a hand-written one
    expires: fc.oneof(isoDay, isoDay.map((d) => `${d}T00:00:00.000Z`)),
  }, {requiredKeys: ['id', 'title', 'scope', 'tags', 'author', 'source_session', 'origin', 'tainted', 'taint_reasons', 'created', 'updated', 'version', 'proposal', 'reviewed_by', 'digest', 'signature']}),
  body: fc.oneof(fc.string({maxLength: 200}), fc.string({unit: 'binary', maxLength: 200}), fc.constantFrom('', '---\n', '\n---\nx: 1\n---\n', '\r\n\r\n', 'a\r\nb\rc')),
})

describe('properties: the frontmatter parser', () => {
  it('any input parses or throws bad-input, never another exception', () => {
    fc.assert(
      fc.property(text, (t) => {
        parsesOrBadInput(() => parseFrontmatter(t, 'f.md'))
        parsesOrBadInput(() => parseMemory(t, 'f.md'))
      }),
      {numRuns: runs(1500)},
    )
  })

  it('never evaluates: no language block or YAML tag runs code', () => {
    const g = globalThis as Record<string, unknown>
    const payload = fc.constantFrom(
      '---js\n{id: (globalThis.__engramPwned = 1)}\n---\nx',
      '--- javascript\nglobalThis.__engramPwned = 1\n---\nx',
      '---coffee\nglobalThis.__engramPwned = 1\n---\nx',
      '---\nid: !!js/function "function(){ globalThis.__engramPwned = 1 }"\n---\nx',
      '---\ntoString: !!js/function "function(){ globalThis.__engramPwned = 1 }"\n---\nx',
      '---\n__proto__: {toString: 1, valueOf: 1}\nid: a\n---\nx',
    )
    fc.assert(
      fc.property(payload, fc.string({maxLength: 20}), (p, tail) => {
        delete g.__engramPwned
        let data: Record<string, unknown> | undefined
        try {
          data = parseFrontmatter(p + tail, 'f.md').data
        } catch (error) {
          if (!isEngramError(error)) throw error
        }
        // use the result the way callers do: string conversion must not call stored code
        if (data) for (const v of Object.values(data)) String(typeof v === 'object' ? JSON.stringify(v) : v)
        expect(g.__engramPwned).toBeUndefined()
        expect(Object.getPrototypeOf(data ?? {})).toBe(Object.prototype)
      }),
      {numRuns: runs(60)},
    )
  })

  it('parse(serialize(m)) is m, with the body normalised', () => {
    fc.assert(
      fc.property(memory, (m) => {
        const text = serializeMemory(m)
        const expected = {frontmatter: m.frontmatter, body: normaliseBody(m.body)}
        expect(parseMemory(text, 'm.md')).toEqual(expected)
        expect(serializeMemory(parseMemory(text, 'm.md'))).toBe(text)
      }),
      {numRuns: runs(400)},
    )
  })

  it('the canonical fast parser and the general YAML path agree on what our writer emits', () => {
    fc.assert(
      fc.property(memory, (m) => {
        const text = serializeMemory(m)
        const fast = parseCanonicalMemory(text)
        expect(fast).toBeDefined()
        expect(parseMemoryYaml(text, 'm.md')).toEqual(fast)
      }),
      {numRuns: runs(400)},
    )
  })

  it('wherever the fast parser accepts a text, the general path gives the same memory', () => {
    // a valid file, then a few lines changed, added or swapped in canonical-looking form
    const edit = fc.tuple(
      memory,
      fc.array(
        fc.tuple(fc.nat(20), fc.constantFrom(...FIELD_ORDER, 'extra'), fc.oneof(fc.json({maxDepth: 1}), fc.constantFrom('"\\/"', '"\\u00e9"', '"\\ud83d\\ude00"', '"\\ud800"', '-0', '00', '1e3', '[]', '["a",1]', 'null', '"a" ', '"\t"', '"#"'))),
        {maxLength: 3},
      ),
    )
    fc.assert(
      fc.property(edit, ([m, edits]) => {
        const lines = serializeMemory(m).split('\n')
        for (const [at, key, value] of edits) {
          const i = 1 + (at % (FIELD_ORDER.length + 1))
          lines.splice(i, at % 2, `${key}: ${value}`)
        }
        const text = lines.join('\n')
        const fast = parseCanonicalMemory(text)
        if (fast === undefined) return
        expect(parseMemoryYaml(text, 'm.md')).toEqual(fast)
      }),
      {numRuns: runs(800)},
    )
  })
})

describe('properties: shrunk counterexamples, kept as unit tests', () => {
  it('a YAML alias loop is bad input, not a stack overflow', () => {
    for (const t of ['---\na: &a [*a]\n---\nx', '---\na: &a {b: *a}\n---\nx']) {
      expect(() => parseFrontmatter(t, 'f.md')).toThrow(/YAML aliases are not allowed/)
      try {
        parseMemory(t, 'f.md')
      } catch (error) {
        expect(isEngramError(error) && error.code).toBe('bad-input')
      }
    }
  })

  it('aliases that expand exponentially are refused quickly', () => {
    let t = '---\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n'
    for (let i = 1; i < 10; i++) t += `a${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(', ')}]\n`
    expect(cpuMs(() => expect(() => parseFrontmatter(`${t}---\nx`, 'f.md')).toThrow(/YAML aliases are not allowed/))).toBeLessThan(2000)
  })
})

describe('properties: shrunk counterexamples (fast parser)', () => {
  it('the fast parser reads a value holding U+2028 or U+2029, as the YAML path does', () => {
    for (const ch of ['\u2028', '\u2029']) {
      const m: MemoryFile = {
        frontmatter: {id: 'a', title: `x${ch}y`, scope: 'org', tags: [], author: 'me', source_session: null, origin: 'direct_chat', tainted: false, taint_reasons: [], created: 't', updated: 't', version: 1, proposal: null, reviewed_by: ch, digest: null, signature: null},
        body: 'b\n',
      }
      const text = serializeMemory(m)
      expect(parseCanonicalMemory(text)).toEqual(m)
      expect(parseMemoryYaml(text, 'm.md')).toEqual(m)
    }
  })
})
