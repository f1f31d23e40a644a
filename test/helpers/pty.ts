import {spawnSync} from 'node:child_process'

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
