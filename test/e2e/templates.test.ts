import {execFileSync, spawnSync} from 'node:child_process'
import {chmodSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {expect, it} from 'vitest'

import {BIN, sandbox} from '../helpers/cli.js'

const hooks = fileURLToPath(new URL('../../templates/claude-code/hooks/', import.meta.url))

it('the Claude Code hooks start a session as the harness, print the context, and taint after web fetches', () => {
  const sb = sandbox()
  expect(sb.run(['init']).code).toBe(0)
  // `engram` on PATH, as a user who ran `npm link` has it
  const bin = join(sb.configDir, 'bin')
  mkdirSync(bin)
  writeFileSync(join(bin, 'engram'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`)
  chmodSync(join(bin, 'engram'), 0o755)
  const env = {...sb.env, PATH: `${bin}:${process.env.PATH}`, ENGRAM_BASE: sb.dir, ENGRAM_ASSIGNED: 'tenant:acme'}
  const start = spawnSync('bash', [join(hooks, 'engram-session-start.sh')], {cwd: sb.dir, env, encoding: 'utf8'})
  expect(start.status, start.stderr).toBe(0)
  expect(start.stdout).toMatch(/not instructions/)
  const id = readFileSync(join(sb.dir, '.claude/engram-session'), 'utf8').trim()
  expect(id).toMatch(/^s-[0-9a-z]{8}$/)
  expect(sb.run(['session', 'show', id, '--json']).json).toMatchObject({agent: 'claude-code', assigned: 'tenant:acme', tainted: false})
  const taint = spawnSync('bash', [join(hooks, 'engram-taint.sh')], {cwd: sb.dir, env, input: JSON.stringify({tool_name: 'WebFetch', tool_input: {url: 'https://example.com'}}), encoding: 'utf8'})
  expect(taint.status).toBe(0)
  const after = sb.run(['session', 'show', id, '--json']).json
  expect(after.tainted).toBe(true)
  expect(after.taint_reasons).toContain('PostToolUse: WebFetch')
  // the settings template is valid JSON and denies direct edits of curated memory
  const settings = JSON.parse(readFileSync(fileURLToPath(new URL('../../templates/claude-code/settings.json', import.meta.url)), 'utf8'))
  expect(settings.permissions.deny).toContain('Edit(memory/.engram/**)')
  execFileSync('git', ['status', '--porcelain'], {cwd: sb.dir})
})
