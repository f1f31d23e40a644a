/**
 * `engram adopt claude-code` through the built CLI, in real git repositories: what it
 * writes, that it merges instead of overwriting, that a second run changes nothing, that
 * --dry-run and bad input change nothing, and that --check tells confined from
 * cooperative (README "Claude Code").
 */
import {spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {BIN, curate, git, sandbox} from '../helpers/cli.js'

function project(name = 'Shop Front') {
  const sb = sandbox()
  const dir = join(sb.dir, name)
  mkdirSync(dir)
  git(dir, 'init', '-q')
  const adopt = (...args: string[]) => sb.run(['adopt', 'claude-code', '--project', dir, ...args])
  const read = (rel: string) => readFileSync(join(dir, rel), 'utf8')
  return {sb, dir, adopt, read}
}

describe('engram adopt claude-code', () => {
  it('--dry-run shows every change and writes nothing; the real run writes them; a second run changes nothing', () => {
    const p = project()
    const dry = p.adopt('--dry-run')
    expect(dry.code, dry.stderr).toBe(0)
    expect(dry.stdout).toMatch(/would create the store .*memory/)
    expect(dry.stdout).toContain('+++ b/.claude/settings.json')
    expect(dry.stdout).toContain('+++ b/.mcp.json')
    expect(dry.stdout).toContain('"autoMemoryEnabled": false')
    for (const f of ['.claude', '.mcp.json', 'memory', '.gitignore']) expect(existsSync(join(p.dir, f)), f).toBe(false)

    const run = p.adopt('--json')
    expect(run.code, run.stderr).toBe(0)
    expect(run.json.assigned).toBe('project:shop-front')
    expect(run.json.files.map((f: {path: string}) => f.path).sort()).toEqual(['.claude/settings.json', '.claude/skills/engram/SKILL.md', '.gitignore', '.mcp.json'])
    expect(run.json.warnings).toEqual([])
    // the store has a repository of its own, which the project's ignores
    expect(git(join(p.dir, 'memory'), 'rev-parse', '--show-toplevel').trim()).toBe(join(p.dir, 'memory'))
    expect(p.read('.gitignore')).toContain('/memory/')
    const settings = JSON.parse(p.read('.claude/settings.json'))
    expect(settings.hooks.SessionStart[0].hooks[0].command).toMatch(/ hook session-start --base "\$CLAUDE_PROJECT_DIR"\/memory --assigned project:shop-front/)
    expect(Object.keys(settings.hooks).sort()).toEqual(['PostToolUse', 'PostToolUseFailure', 'SessionEnd', 'SessionStart', 'UserPromptSubmit'])
    expect(settings.permissions.deny).toEqual(expect.arrayContaining(['Read(/memory/**)', 'Edit(/memory/**)', 'Edit(/.mcp.json)', 'Bash(engram review accept:*)']))
    expect(settings.sandbox).toMatchObject({enabled: true, allowUnsandboxedCommands: false})
    const mcp = JSON.parse(p.read('.mcp.json'))
    expect(mcp.mcpServers.engram.args).toEqual(expect.arrayContaining(['mcp', '--assigned', 'project:shop-front', '--agent', 'claude-code']))
    expect(p.read('.claude/skills/engram/SKILL.md')).toMatch(/^---\nname: engram\n/)

    const before = ['.claude/settings.json', '.mcp.json', '.gitignore', '.claude/skills/engram/SKILL.md'].map(p.read)
    const head = git(join(p.dir, 'memory'), 'rev-parse', 'HEAD')
    const again = p.adopt('--json')
    expect(again.code, again.stderr).toBe(0)
    expect(again.json.files).toEqual([])
    expect(again.json.createStore).toBe(false)
    expect(['.claude/settings.json', '.mcp.json', '.gitignore', '.claude/skills/engram/SKILL.md'].map(p.read)).toEqual(before)
    expect(git(join(p.dir, 'memory'), 'rev-parse', 'HEAD')).toBe(head)
    expect(p.adopt('--dry-run').stdout).toContain('nothing to change')
    expect(p.adopt('--check').code).toBe(0)
  }, 300_000)

  it('merges into existing settings: the project\'s own rules, hooks and servers stay; the old template\'s hook scripts are replaced', () => {
    const p = project('api')
    mkdirSync(join(p.dir, '.claude'))
    writeFileSync(join(p.dir, '.claude/settings.json'), JSON.stringify({
      model: 'opus',
      permissions: {allow: ['Bash(npm test)'], deny: ['Read(./.env)']},
      sandbox: {filesystem: {allowWrite: ['~/.cache/build']}},
      hooks: {
        PostToolUse: [
          {matcher: 'Edit', hooks: [{type: 'command', command: 'npx prettier --write "$FILE"'}]},
          {matcher: 'WebFetch|WebSearch|mcp__.*', hooks: [{type: 'command', command: '.claude/hooks/engram-taint.sh'}]},
        ],
        SessionStart: [{hooks: [{type: 'command', command: '.claude/hooks/engram-session-start.sh'}]}],
      },
    }))
    writeFileSync(join(p.dir, '.mcp.json'), JSON.stringify({mcpServers: {github: {command: 'gh-mcp'}}}))
    const r = p.adopt('--assigned', 'tenant:acme', '--json')
    expect(r.code, r.stderr).toBe(0)
    const s = JSON.parse(p.read('.claude/settings.json'))
    expect(s.model).toBe('opus')
    expect(s.permissions.allow).toEqual(['Bash(npm test)'])
    expect(s.permissions.deny[0]).toBe('Read(./.env)')
    expect(s.permissions.deny).toContain('Edit(/memory/**)')
    expect(s.sandbox.filesystem.allowWrite).toEqual(['~/.cache/build'])
    expect(s.hooks.PostToolUse.map((g: any) => g.hooks[0].command)).toEqual(['npx prettier --write "$FILE"', expect.stringMatching(/ hook post-tool-use --base /)])
    expect(s.hooks.SessionStart).toHaveLength(1)
    expect(s.hooks.SessionStart[0].hooks[0].command).toMatch(/ hook session-start .*--assigned tenant:acme/)
    const mcp = JSON.parse(p.read('.mcp.json'))
    expect(Object.keys(mcp.mcpServers).sort()).toEqual(['engram', 'github'])
    // kept, and named: what the project's own hook and server run, outside the sandbox, the agent may change
    expect(r.json.warnings.join('\n')).toMatch(/the PostToolUse hook `npx prettier --write "\$FILE"` runs outside the sandbox/)
    expect(r.json.warnings.join('\n')).toMatch(/server github runs gh-mcp/)
    expect(p.adopt('--assigned', 'tenant:acme', '--check').code).toBe(7)
  }, 300_000)

  it('bad input changes nothing: a broken settings file, a bad scope, inside an agent session', () => {
    const p = project('broken')
    mkdirSync(join(p.dir, '.claude'))
    writeFileSync(join(p.dir, '.claude/settings.json'), '{"permissions": ')
    const broken = p.adopt()
    expect(broken.code).toBe(2)
    expect(broken.stderr).toMatch(/\.claude\/settings\.json is not valid JSON.*changed nothing/)
    expect(broken.stderr).not.toMatch(/\n\s+at /)
    expect(existsSync(join(p.dir, 'memory'))).toBe(false)
    expect(existsSync(join(p.dir, '.mcp.json'))).toBe(false)
    expect(p.read('.claude/settings.json')).toBe('{"permissions": ')
    writeFileSync(join(p.dir, '.claude/settings.json'), '{}')
    expect(p.adopt('--assigned', 'Tenant:ACME').code).toBe(2)
    // paths the rules could not hold: a store below a folder the agent can rename, the config folder in the project, a planted .git
    expect(p.adopt('--store', 'data/memory').code).toBe(2)
    expect(p.sb.run(['adopt', 'claude-code', '--project', p.dir], {env: {ENGRAM_CONFIG_DIR: join(p.dir, 'cfg')}}).code).toBe(2)
    mkdirSync(join(p.dir, 'memory'))
    writeFileSync(join(p.dir, 'memory/.git'), `gitdir: ${join(p.dir, '.memgit')}\n`)
    const planted = p.adopt()
    expect(planted.code).toBe(3)
    expect(planted.stderr).toMatch(/already holds a git repository/)
    expect(existsSync(join(p.dir, 'memory/.engram'))).toBe(false)
    rmSync(join(p.dir, 'memory'), {recursive: true})
    const inside = p.sb.run(['adopt', 'claude-code', '--project', p.dir], {env: {ENGRAM_SESSION: 's-abcd1234'}})
    expect(inside.code).toBe(3)
    expect(existsSync(join(p.dir, 'memory'))).toBe(false)
    expect(p.read('.claude/settings.json')).toBe('{}')
  }, 300_000)

  it('--check names what keeps the agent from being confined: a store sharing the project\'s repository, a loosened sandbox', () => {
    const p = project('shared')
    // a store that shares the project's repository (as init made them before 0.3.0)
    const init = p.sb.run(['init', '--base', join(p.dir, 'memory'), '--shared-history', '--json'])
    expect(init.code, init.stderr).toBe(0)
    const r = p.adopt('--json')
    expect(r.code, r.stderr).toBe(0)
    expect(r.json.warnings.join('\n')).toMatch(/no git repository of its own/)
    const check = p.adopt('--check', '--json')
    expect(check.code).toBe(7)
    expect(check.json.warnings.join('\n')).toMatch(/no git repository of its own/)
    expect(check.json.confined).toBe(false)
  }, 300_000)
})

describe('adopt --check in a project whose git config the agent wrote', () => {
  it('runs nothing the project\'s .git/config names (a signature check\'s gpg.program), and still finds the store in its history', () => {
    const p = project('signed')
    expect(p.adopt().code).toBe(0)
    // a commit carrying a signature and touching memory/, and a config that would check it with the agent's program
    const blob = git(p.dir, 'hash-object', '-w', '--stdin').trim()
    const sub = spawnSync('git', ['mktree'], {cwd: p.dir, input: `100644 blob ${blob}\tx.md\n`, encoding: 'utf8'}).stdout.trim()
    const top = spawnSync('git', ['mktree'], {cwd: p.dir, input: `040000 tree ${sub}\tmemory\n`, encoding: 'utf8'}).stdout.trim()
    const commit = spawnSync('git', ['hash-object', '-t', 'commit', '-w', '--stdin'], {cwd: p.dir, encoding: 'utf8', input: `tree ${top}\nauthor a <a@b> 1 +0000\ncommitter a <a@b> 1 +0000\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n AAAA\n -----END PGP SIGNATURE-----\n\nsigned\n`}).stdout.trim()
    git(p.dir, 'update-ref', 'HEAD', commit)
    const marker = join(p.sb.dir, 'ran')
    writeFileSync(join(p.sb.dir, 'evil'), `#!/bin/sh\ntouch '${marker}'\nexit 1\n`, {mode: 0o755})
    git(p.dir, 'config', 'log.showSignature', 'true')
    git(p.dir, 'config', 'gpg.program', join(p.sb.dir, 'evil'))
    const check = p.adopt('--check', '--json')
    expect(check.code).toBe(7)
    expect(check.json.warnings.join('\n')).toMatch(/the project's history holds the store's past content/)
    expect(p.sb.run(['doctor', '--base', join(p.dir, 'memory'), '--no-verify']).code).toBe(0)
    expect(existsSync(marker)).toBe(false)
  }, 300_000)
})

describe('adopt and the store\'s taint list', () => {
  it('a tool the signed config adds to the taint list reaches the hook: the matcher names it, and --check notices when it does not', () => {
    const p = project('tools')
    expect(p.adopt('--json').code).toBe(0)
    const base = join(p.dir, 'memory')
    const cfg = join(base, '.engram/config.yml')
    writeFileSync(cfg, `${readFileSync(cfg, 'utf8')}\ntaint:\n  tools: [Task, "my_fetcher*"]\n`)
    const shown = p.sb.run(['config', 'sign', '--base', base, '--json'])
    expect(p.sb.run(['config', 'sign', '--base', base, '--digest', shown.json.digest]).code).toBe(0)
    // adopted before the change: the hook would never see Task
    const stale = p.adopt('--check', '--json')
    expect(stale.code).toBe(7)
    expect(stale.json.warnings.join('\n')).toMatch(/hooks\.PostToolUse/)
    expect(p.adopt().code).toBe(0)
    const matcher = JSON.parse(p.read('.claude/settings.json')).hooks.PostToolUse[0].matcher
    for (const tool of ['Task', 'my_fetcher_v2', 'WebFetch', 'Bash', 'mcp__github__x']) expect(new RegExp(`^(?:${matcher})$`).test(tool), tool).toBe(true)
    expect(new RegExp(`^(?:${matcher})$`).test('Read')).toBe(false)
    expect(p.adopt('--check').code).toBe(0)
  }, 300_000)
})

describe('README "Adopt a repository"', () => {
  it('runs as written in a fresh repository, as the owner', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
    const m = /^### Adopt a repository\n[\s\S]*?^```\n([\s\S]*?)^```$/m.exec(readme)
    expect(m, 'README has a code block under "### Adopt a repository"').toBeTruthy()
    const p = project('readme')
    const bin = join(p.sb.configDir, 'bin')
    mkdirSync(bin)
    writeFileSync(join(bin, 'engram'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`, {mode: 0o755})
    const r = spawnSync('bash', ['-c', `set -euo pipefail\n${m![1]}`], {cwd: p.dir, env: {...p.sb.env, PATH: `${bin}:${process.env.PATH}`}, encoding: 'utf8'})
    expect(r.status, `${r.stdout}${r.stderr}`).toBe(0)
    expect(r.stdout).toMatch(/confined: /)
  }, 300_000)
})

describe('engram init inside a project repository', () => {
  it('gives the store a repository of its own, which the project ignores: no memory commit on the project\'s branch', () => {
    const p = project('app')
    writeFileSync(join(p.dir, 'main.c'), 'int main(){}\n')
    git(p.dir, 'add', 'main.c')
    git(p.dir, '-c', 'user.name=dev', '-c', 'user.email=dev@example.com', 'commit', '-qm', 'code')
    const projectHead = git(p.dir, 'rev-parse', 'HEAD')
    const init = p.sb.run(['init', '--base', join(p.dir, 'memory'), '--json'])
    expect(init.code, init.stderr).toBe(0)
    expect(init.json.insideRepository).toBe(p.dir)
    expect(git(join(p.dir, 'memory'), 'rev-parse', '--show-toplevel').trim()).toBe(join(p.dir, 'memory'))
    expect(p.read('.gitignore')).toMatch(/^\/memory\/$/m)
    // memory's commits are the store's; the project's branch and status are untouched but for .gitignore
    expect(git(p.dir, 'rev-parse', 'HEAD')).toBe(projectHead)
    expect(git(p.dir, 'status', '--porcelain')).toBe('?? .gitignore\n')
    expect(p.sb.run(['doctor', '--base', join(p.dir, 'memory'), '--json']).json.items.find((c: {check: string}) => c.check === 'history').status).toBe('ok')

    const q = project('lib')
    const shared = q.sb.run(['init', '--base', join(q.dir, 'memory'), '--shared-history'])
    expect(shared.code, shared.stderr).toBe(0)
    expect(shared.stderr).toMatch(/cooperative mode/)
    expect(git(join(q.dir, 'memory'), 'rev-parse', '--show-toplevel').trim()).toBe(q.dir)
    expect(existsSync(join(q.dir, '.gitignore'))).toBe(false)
    expect(q.sb.run(['doctor', '--base', join(q.dir, 'memory'), '--json']).json.items.find((c: {check: string}) => c.check === 'history').status).toBe('warn')
  }, 300_000)

  it('detach moves a store that shares the project\'s repository into its own, history and signatures intact; a dirty store is refused and left as it was', () => {
    const p = project('legacy')
    const base = join(p.dir, 'memory')
    expect(p.sb.run(['init', '--base', base, '--shared-history']).code).toBe(0)
    const s = p.sb.run(['session', 'start', '--agent', 'a', '--assigned', 'tenant:acme', '--base', base, '--json']).json.id
    curate({...p.sb, run: (a, o = {}) => p.sb.run([...a, '--base', base], o)}, s, 'tenant:acme', 'renewal.md', 'Acme renews in March.\n')
    const projectLog = git(p.dir, 'log', '--format=%H')
    // a change the project has not committed: refused, nothing moved
    writeFileSync(join(base, 'tenant/acme/stray.md'), 'stray\n')
    const dirty = p.sb.run(['detach', '--base', base])
    expect(dirty.code).toBe(3)
    expect(dirty.stderr).toMatch(/has not committed/)
    expect(existsSync(join(base, '.git'))).toBe(false)
    rmSync(join(base, 'tenant/acme/stray.md'))

    const r = p.sb.run(['detach', '--base', base, '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.json).toMatchObject({detached: true, store: base, project: p.dir})
    expect(r.json.commits).toBeGreaterThanOrEqual(4)
    expect(git(base, 'rev-parse', '--show-toplevel').trim()).toBe(base)
    // the project's history is as it was; it only stops tracking the folder (staged) and ignores it
    expect(git(p.dir, 'log', '--format=%H')).toBe(projectLog)
    expect(git(p.dir, 'status', '--porcelain')).toMatch(/^D {2}memory\/tenant\/acme\/renewal\.md$/m)
    expect(p.read('.gitignore')).toMatch(/^\/memory\/$/m)
    // everything verifies and history still proves the reviewed version
    expect(p.sb.run(['verify', '--base', base]).code).toBe(0)
    expect(p.sb.run(['history', 'renewal.md', '--scope', 'tenant:acme', '--base', base]).stdout).toMatch(/reviewed by owner .*\(signature verified\)/)
    expect(p.sb.run(['read', 'renewal.md', '--scope', 'tenant:acme', '--base', base], {env: {ENGRAM_SESSION: s}}).stdout).toContain('Acme renews in March.')
    expect(p.sb.run(['config', 'show', '--base', base, '--json']).json.state).toBe('signed')
    const again = p.sb.run(['detach', '--base', base, '--json'])
    expect(again.code).toBe(0)
    expect(again.json.detached).toBe(false)
  }, 300_000)
})
