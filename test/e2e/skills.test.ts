/**
 * The two skills' commands, run literally (issue #11): every ```sh block of
 * skills/engram/SKILL.md and skills/engram-adopt/SKILL.md, in order, in one bash with
 * `set -euo pipefail`, in a temporary git repository, with the built CLI on PATH as
 * `engram` (what `npm link` or a global install gives). The adopt skill's owner step runs
 * with the owner's passphrase file, as the owner's terminal would; the engram skill runs
 * inside the session the SessionStart hook would have put in the shell.
 */
import {spawnSync} from 'node:child_process'
import {chmodSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'

import {BIN, curate, git, sandbox} from '../helpers/cli.js'

const skill = (name: string) => readFileSync(fileURLToPath(new URL(`../../skills/${name}/SKILL.md`, import.meta.url)), 'utf8')

function shBlocks(text: string): string {
  return [...text.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]).join('\n')
}

function frontmatter(text: string): Record<string, string> {
  const m = /^---\n([\s\S]*?)\n---\n/.exec(text)
  if (!m) throw new Error('no frontmatter')
  return Object.fromEntries(m[1].split('\n').map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()]))
}

function withEngramOnPath(sb: ReturnType<typeof sandbox>): string {
  const bin = join(sb.configDir, 'bin')
  mkdirSync(bin, {recursive: true})
  writeFileSync(join(bin, 'engram'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`)
  chmodSync(join(bin, 'engram'), 0o755)
  return `${bin}:${process.env.PATH}`
}

const bash = (script: string, cwd: string, env: NodeJS.ProcessEnv) =>
  spawnSync('bash', ['-c', `set -euo pipefail\n${script}`], {cwd, env, encoding: 'utf8', timeout: 300_000})

describe('the skills, run as written', () => {
  it('engram-adopt: dry run, the owner\'s adopt, the profile, the proof', () => {
    const f = frontmatter(skill('engram-adopt'))
    expect(f.name).toBe('engram-adopt')
    expect(f['disable-model-invocation']).toBe('true')
    const sb = sandbox()
    const project = join(sb.dir, 'shop')
    mkdirSync(project)
    git(project, 'init', '-q')
    const r = bash(shBlocks(skill('engram-adopt')), project, {...sb.env, PATH: withEngramOnPath(sb)})
    expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0)
    expect(readFileSync(join(project, 'docs/memory-profile.md'), 'utf8')).toContain('project:shop')
    expect(JSON.parse(readFileSync(join(project, '.mcp.json'), 'utf8')).mcpServers.engram.args).toContain('project:shop')
    expect(r.stdout).toMatch(/confined: /)
  }, 300_000)

  it('engram: context, recall, a run: note and a proposal, inside the session the hook made', () => {
    const f = frontmatter(skill('engram'))
    expect(f.name).toBe('engram')
    expect(f['allowed-tools']).toMatch(/mcp__engram__search/)
    const sb = sandbox()
    expect(sb.run(['init']).code).toBe(0)
    const session = sb.run(['session', 'start', '--agent', 'claude-code', '--assigned', 'tenant:acme', '--json']).json.id
    curate(sb, session, 'tenant:acme', 'renewal.md', 'Acme renews its contract every March.\n')
    const r = bash(shBlocks(skill('engram')), sb.dir, {...sb.env, PATH: withEngramOnPath(sb), ENGRAM_SESSION: session})
    expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0)
    expect(r.stdout).toContain('renews its contract every March')
    expect(sb.run(['read', 'notes/billing.md', '--scope', `run:${session}`]).stdout).toContain('billing refactor')
    expect(sb.run(['review', 'list', '--json']).json.items.some((i: {path: string}) => i.path.endsWith('invoices.md'))).toBe(true)
  }, 300_000)
})
