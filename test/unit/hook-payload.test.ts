/**
 * A hook's payload cut at its size bound (MAX_PAYLOAD_BYTES): the members read whole are
 * exactly JSON.parse's, whatever the cut; a tool event still names its session, and says
 * whether its tool's name and input were read (README "Claude Code hooks").
 */
import {describe, expect, it} from 'vitest'

import {completeMembers, parseCutPayload, parsePayload} from '../../src/agent/claude-code/payload.js'
import {fc, runs} from './properties-seed.js'

const fixtureLike = (response: unknown) => ({
  session_id: '8f0d2c4e-5b1a-4c7e-9a3d-2e6f1b7c9d40',
  cwd: '/home/dev/My Project',
  hook_event_name: 'PostToolUse',
  tool_name: 'Bash',
  tool_input: {command: 'ls -la "a \\"quoted\\" name"', description: 'list {files} [all]'},
  tool_response: response,
})

describe('completeMembers: the members of a JSON object read before its text ends', () => {
  // keys and values with quotes, backslashes, brackets and unicode, nested any way
  const value = fc.jsonValue({maxDepth: 3})
  const object = fc.dictionary(fc.string({unit: 'grapheme', maxLength: 12}), value, {maxKeys: 6})

  it('reads a whole object as JSON.parse does, in any spacing', () => {
    fc.assert(
      fc.property(object, fc.constantFrom(undefined, 2, '\t'), (o, space) => {
        const text = JSON.stringify(o, null, space)
        expect(completeMembers(text)).toStrictEqual(Object.assign(Object.create(null), JSON.parse(text)))
      }),
      {numRuns: runs(300)},
    )
  })

  it('cut anywhere, gives every member that ended before the cut, as JSON.parse reads it, and nothing else', () => {
    fc.assert(
      fc.property(object, fc.double({min: 0, max: 1, noNaN: true}), (o, at) => {
        const text = JSON.stringify(o)
        const cut = text.slice(0, Math.floor(at * text.length))
        const got = completeMembers(cut)
        const whole = JSON.parse(text) as Record<string, unknown>
        // a member is complete when the text up to its value's end, closed, parses to it
        for (const [k, v] of Object.entries(got)) expect(v, k).toStrictEqual(whole[k])
        const keys = Object.keys(whole)
        const expected = keys.filter((_, i) => {
          const upTo = JSON.stringify(Object.fromEntries(keys.slice(0, i + 1).map((key) => [key, whole[key]])))
          // a string, object or array ends at its last character; a number or literal only once the delimiter after it was read
          const literal = whole[keys[i]] === null || typeof whole[keys[i]] !== 'object' && typeof whole[keys[i]] !== 'string'
          return cut.length >= upTo.length - (literal ? 0 : 1)
        })
        expect(Object.keys(got).sort()).toStrictEqual(expected.sort())
      }),
      {numRuns: runs(300)},
    )
  })

  it('keeps a member named __proto__ as a member, never as the prototype of what it returns', () => {
    const got = completeMembers('{"__proto__": {"tool_name": "Bash"}, "session_id": "x", "tool')
    expect(Object.getPrototypeOf(got)).toBeNull()
    expect((got as {tool_name?: unknown}).tool_name).toBeUndefined()
    expect(got.session_id).toBe('x')
  })

  it('reads no member from a text that is not an object, or stops at the first thing that is not JSON', () => {
    expect(completeMembers('')).toStrictEqual(Object.create(null))
    expect(completeMembers('[{"a": 1}]')).toStrictEqual(Object.create(null))
    expect(Object.keys(completeMembers('{"a": 1, "b": tru'))).toStrictEqual(['a'])
    expect(Object.keys(completeMembers('{"a": 1, "b": nope, "c": 2}'))).toStrictEqual(['a'])
    expect(Object.keys(completeMembers('{"a": 1 "b": 2}'))).toStrictEqual(['a'])
    // a number is whole only once the delimiter after it was read: "12" may be the start of "123"
    expect(Object.keys(completeMembers('{"a": "x", "n": 12'))).toStrictEqual(['a'])
  })
})

describe('parseCutPayload: a tool event whose payload was over the bound', () => {
  it('with the tool\'s name and input read before the response, is the payload JSON.parse would have given', () => {
    const text = JSON.stringify(fixtureLike({stdout: 'x'.repeat(5000)}))
    for (const at of [text.indexOf('"tool_response"') + 3, text.length - 10]) {
      const cut = parseCutPayload('post-tool-use', text.slice(0, at))
      expect(cut.whole).toBe(true)
      expect(cut.payload).toStrictEqual(parsePayload('post-tool-use', text))
    }
  })

  it('with the input cut, says the tool was not read whole (the hook then taints), keeping the name when it was read', () => {
    const text = JSON.stringify(fixtureLike('ok'))
    const inInput = parseCutPayload('post-tool-use', text.slice(0, text.indexOf('"tool_input"') + 20))
    expect(inInput.whole).toBe(false)
    expect(inInput.payload.tool_name).toBe('Bash')
    expect(inInput.payload.tool_input).toStrictEqual({})
    const inName = parseCutPayload('post-tool-use-failure', text.slice(0, text.indexOf('"tool_name"') + 15).replace('PostToolUse', 'PostToolUseFailure'))
    expect(inName.whole).toBe(false)
    expect(inName.payload.tool_name).toBe('a tool')
  })

  it('refuses a cut payload that names no session, one of another event, and any cut payload of the other events', () => {
    const text = JSON.stringify(fixtureLike('ok'))
    expect(() => parseCutPayload('post-tool-use', text.slice(0, 10))).toThrow(/over 8 MiB, and the part read names no "session_id"/)
    expect(() => parseCutPayload('post-tool-use', text.replace('PostToolUse', 'SessionStart').slice(0, -5))).toThrow(/SessionStart event, not PostToolUse/)
    for (const event of ['session-start', 'user-prompt-submit', 'session-end'] as const) {
      expect(() => parseCutPayload(event, text)).toThrow(/over 8 MiB and was not read/)
    }
  })
})
