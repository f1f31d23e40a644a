/**
 * Run a program with a real pseudo-terminal as its controlling terminal (python3's pty
 * module), answering its prompts as a person at the keyboard would: what the program
 * reads from /dev/tty is what is typed here. Also: run a program with no terminal at all
 * (setsid), as a CI job or a detached agent process is.
 */
import {spawnSync} from 'node:child_process'

import {runResult} from './cli.js'

export interface Answer {
  /** a regular expression the output must show (after the previous answer) before typing */
  expect: string
  /** the line typed (Enter is added) */
  send: string
}

export interface TerminalRun {
  code: number
  /** everything written to the terminal: stdout, stderr and the prompts */
  output: string
  /** how many answers were typed */
  answered: number
}

const PTY_DRIVER = String.raw`
import json, os, pty, re, select, sys, time
cfg = json.loads(sys.argv[1])
pid, fd = pty.fork()
if pid == 0:
    os.chdir(cfg['cwd'])
    os.execve(cfg['argv'][0], cfg['argv'], cfg['env'])
out = b''
pos = 0
i = 0
answers = cfg['answers']
deadline = time.time() + cfg['timeout']
while time.time() < deadline:
    r, _, _ = select.select([fd], [], [], 0.1)
    if r:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    if i < len(answers):
        text = out.decode('utf8', 'replace')
        m = re.search(answers[i]['expect'], text[pos:])
        if m:
            pos += m.end()
            os.write(fd, (answers[i]['send'] + '\r').encode('utf8'))
            i += 1
else:
    os.kill(pid, 9)
_, status = os.waitpid(pid, 0)
code = os.waitstatus_to_exitcode(status)
print(json.dumps({'code': code, 'output': out.decode('utf8', 'replace'), 'answered': i}))
`

export function runInTerminal(argv: string[], opts: {env: NodeJS.ProcessEnv; cwd: string; answers?: Answer[]; timeoutSeconds?: number}): TerminalRun {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(opts.env)) if (v !== undefined) env[k] = v
  const cfg = {argv, env, cwd: opts.cwd, answers: opts.answers ?? [], timeout: opts.timeoutSeconds ?? 60}
  const r = spawnSync('python3', ['-c', PTY_DRIVER, JSON.stringify(cfg)], {encoding: 'utf8', timeout: (cfg.timeout + 10) * 1000})
  if (r.status !== 0) throw new Error(`pty driver failed: ${r.stderr}`)
  return JSON.parse(r.stdout) as TerminalRun
}

/** Run with no controlling terminal (a new session): /dev/tty cannot be opened. */
export function runWithoutTerminal(argv: string[], opts: {env: NodeJS.ProcessEnv; cwd: string; input?: string}): {code: number; stdout: string; stderr: string; json: any} {
  return runResult(spawnSync('setsid', ['-w', ...argv], {env: opts.env, cwd: opts.cwd, input: opts.input ?? '', encoding: 'utf8', timeout: 60_000}))
}

/**
 * Run a command on a pseudo-terminal (stdin and stdout are a TTY), through python3's pty
 * module: what a person at a terminal sees, and proof that nothing waits for an answer
 * (a prompt would hold the run until `timeoutSeconds`, reported as `timedOut`).
 */
export function runOnPty(argv: string[], opts: {cwd?: string; env?: NodeJS.ProcessEnv; timeoutSeconds?: number} = {}): {code: number | null; output: string; timedOut: boolean} {
  const script = `
import json, os, pty, select, sys, time
argv = json.loads(sys.argv[1])
limit = float(sys.argv[2])
pid, fd = pty.fork()
if pid == 0:
    os.execvp(argv[0], argv)
out = b''
deadline = time.time() + limit
while True:
    if time.time() > deadline:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        print(json.dumps({'code': None, 'output': out.decode('utf8', 'replace'), 'timedOut': True}))
        sys.exit(0)
    ready, _, _ = select.select([fd], [], [], 0.1)
    if ready:
        try:
            data = os.read(fd, 65536)
        except OSError:
            data = b''
        if not data:
            break
        out += data
_, status = os.waitpid(pid, 0)
print(json.dumps({'code': os.waitstatus_to_exitcode(status), 'output': out.decode('utf8', 'replace'), 'timedOut': False}))
`
  const r = spawnSync('python3', ['-c', script, JSON.stringify(argv), String(opts.timeoutSeconds ?? 30)], {cwd: opts.cwd, env: opts.env, encoding: 'utf8', timeout: ((opts.timeoutSeconds ?? 30) + 30) * 1000})
  if (r.status !== 0) throw new Error(`pty runner failed: ${r.stderr}`)
  return JSON.parse(r.stdout)
}
