/**
 * The host process of a process (core/session/procjoin.ts): its nearest ancestor that is
 * not a shell, named by PID and start time, read from /proc. Real processes only.
 */
import {spawn} from 'node:child_process'
import {copyFileSync, mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {hostProcess, processAlive, procStat} from '../../src/core/session/procjoin.js'

/** Start `sh -c '<exe> 30 & echo $!; wait'` and resolve with the sleeper's pid (its parent is that shell). */
function sleeper(exe: string): Promise<{pid: number; stop: () => void}> {
  const sh = spawn('sh', ['-c', `"$0" 30 & echo $!; wait`, exe], {stdio: ['ignore', 'pipe', 'inherit']})
  return new Promise((resolve) => sh.stdout.once('data', (d: Buffer) => {
    const pid = Number(String(d).trim())
    resolve({pid, stop: () => {
      process.kill(pid, 'SIGKILL')
      sh.kill('SIGKILL')
    }})
  }))
}

describe.skipIf(process.platform !== 'linux')('hostProcess: the nearest ancestor that is not a shell', () => {
  it('skips the shell a command runs in, reaches this process, and reads a command name with spaces and parentheses', async () => {
    const exe = join(mkdtempSync(join(tmpdir(), 'engram-proc-')), 'a) b (c')
    copyFileSync('/bin/sleep', exe)
    const s = await sleeper(exe)
    try {
      // `$!` is printed as soon as the shell forks: the child may not have exec'd the program yet (a loaded machine)
      for (let i = 0; i < 200 && procStat(s.pid)?.comm !== 'a) b (c'; i++) await new Promise((r) => setTimeout(r, 10))
      const me = procStat(process.pid)!
      expect(procStat(s.pid)).toMatchObject({comm: 'a) b (c'})
      expect(procStat(procStat(s.pid)!.ppid)!.ppid).toBe(process.pid)
      expect(hostProcess(s.pid)).toEqual({pid: process.pid, start: me.start})
      expect(processAlive({pid: process.pid, start: me.start})).toBe(true)
      // the same PID with another start time is another process
      expect(processAlive({pid: process.pid, start: String(Number(me.start) + 1)})).toBe(false)
    } finally {
      s.stop()
    }
  })
})
