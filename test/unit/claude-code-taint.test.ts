import {describe, expect, it} from 'vitest'

import {fetchingCommand, taintReason} from '../../src/agent/claude-code/taint.js'
import {defaultAssigned, storeLocation} from '../../src/agent/claude-code/hook.js'

const none = {tools: [], commands: []}

describe('Claude Code taint list', () => {
  it('finds the command words that fetch, not the same letters elsewhere in the line', () => {
    for (const line of ['curl https://x', 'cd a && wget -q https://x', 'FOO=1 sudo -E curl x', 'echo $(curl -s x)', 'ls | xargs curl', '/usr/bin/curl x', 'bash -c "curl x"', 'timeout 5 nc host 80', 'git clone https://x', 'git -C repo pull', '"curl" x']) {
      expect(fetchingCommand(line), line).toBeDefined()
    }
    for (const line of ['ls -la', 'echo curl', 'grep -r wget src', 'git status', 'git commit -m "fetch curl"', 'curly braces', 'cat notes/curl.md', 'printf "%s" gh']) {
      expect(fetchingCommand(line), line).toBeUndefined()
    }
    expect(fetchingCommand('mytool get x')).toBeUndefined()
    expect(fetchingCommand('mytool get x', ['mytool'])).toBe('mytool')
  })

  it('taints web tools and outside MCP tools, never engram\'s own server; reasons are redacted and clipped', () => {
    expect(taintReason('PostToolUse', 'WebFetch', {url: 'https://a.example'}, none)).toBe('PostToolUse: WebFetch https://a.example')
    expect(taintReason('PostToolUse', 'WebSearch', {query: 'q'}, none)).toBe('PostToolUse: WebSearch q')
    expect(taintReason('PostToolUse', 'mcp__x__y', {}, none)).toBe('PostToolUse: mcp__x__y')
    expect(taintReason('PostToolUse', 'mcp__engram__search', {query: 'q'}, none)).toBeUndefined()
    expect(taintReason('PostToolUse', 'Read', {file_path: '/x'}, none)).toBeUndefined()
    expect(taintReason('PostToolUse', 'Read', {path: '/x'}, {tools: ['Read'], commands: []})).toBe('PostToolUse: Read /x')
    const secret = 'ghp_' + 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8'
    const r = taintReason('PostToolUse', 'Bash', {command: `curl -H "Authorization: token ${secret}" https://api.github.com/${'x'.repeat(400)}`}, none)!
    expect(r).not.toContain(secret)
    expect(r.length).toBeLessThanOrEqual(200)
  })

  it('taints an outside tool whose input is nested past what JSON.stringify reads, or megabytes long, with a short reason, at once', () => {
    // an attacker shaped tool input: one made JSON.stringify throw, the other stalled redaction until it threw (the hook then tainted nothing)
    let deep: unknown = 'x'
    for (let i = 0; i < 20_000; i++) deep = [deep]
    expect(taintReason('PostToolUse', 'mcp__browser__navigate', {q: deep}, none)).toBe('PostToolUse: mcp__browser__navigate (input not shown)')
    const started = Date.now()
    const long = taintReason('PostToolUse', 'WebFetch', {url: `https://evil.example/ ${'A'.repeat(6_000_000)}`}, none)!
    expect(long.startsWith('PostToolUse: WebFetch https://evil.example/ ')).toBe(true)
    expect(long.length).toBeLessThanOrEqual(200)
    expect(taintReason('PostToolUse', 'Bash', {command: `curl https://evil.example/ ${'A'.repeat(6_000_000)}`}, none)).toMatch(/^PostToolUse: Bash curl https:\/\/evil\.example\//)
    // a bound, not a benchmark: before, these took seconds or threw
    expect(Date.now() - started).toBeLessThan(5_000)
  })

  it('finds the store from any folder, and names the default scope after the project folder', () => {
    expect(storeLocation({}, {ENGRAM_BASE: 'memory', CLAUDE_PROJECT_DIR: '/p/My Project'}, '/p/My Project/a/b')).toEqual({base: '/p/My Project/memory'})
    expect(storeLocation({}, {ENGRAM_BASE: '/abs/store', CLAUDE_PROJECT_DIR: '/p'}, '/p/a')).toEqual({base: '/abs/store'})
    expect(storeLocation({}, {}, '/p/a')).toEqual({from: '/p/a'})
    expect(defaultAssigned({CLAUDE_PROJECT_DIR: '/p/My Project'}, undefined)).toBe('project:my-project')
    expect(defaultAssigned({CLAUDE_PROJECT_DIR: '/p/..Ünïcode__Repo..'}, undefined)).toMatch(/^project:[a-z0-9][a-z0-9._-]*$/)
    expect(defaultAssigned({ENGRAM_ASSIGNED: 'tenant:acme'}, '/x')).toBe('tenant:acme')
  })
})
