/**
 * The owner's terminal: `/dev/tty`, the controlling terminal of this process, not stdin or
 * stdout (which a script or an agent may have redirected). A process without one (a CI job,
 * a daemon, anything started with setsid) gets `undefined`, never a prompt that hangs.
 */
import {closeSync, openSync, writeSync} from 'node:fs'
import {ReadStream} from 'node:tty'

import {refused} from '../store/errors.js'

export interface Terminal {
  /** Ask one line; `echo: false` for a passphrase. */
  ask(prompt: string, opts: {echo: boolean}): Promise<string>
}

export function openTerminal(): Terminal | undefined {
  const open = (): number | undefined => {
    try {
      return openSync('/dev/tty', 'r+')
    } catch {
      return undefined
    }
  }
  const probe = open()
  if (probe === undefined) return undefined
  closeSync(probe)
  return {
    async ask(prompt, opts) {
      const fd = open()
      if (fd === undefined) throw refused('The terminal went away; nothing changed.')
      return askLine(fd, prompt, opts.echo)
    },
  }
}

/**
 * Raw mode, so that nothing typed is echoed unless asked; the line editing a user expects
 * (backspace, ^U) is done here. ^C and ^D cancel: a refusal, nothing changed.
 */
function askLine(fd: number, prompt: string, echo: boolean): Promise<string> {
  const write = (s: string) => {
    try {
      writeSync(fd, s)
    } catch {
      // a terminal that cannot be written to still reads
    }
  }
  // the stream owns the descriptor from here: destroying it closes it. Raw mode first, then
  // the prompt: what is typed as soon as the prompt shows is never echoed.
  const input = new ReadStream(fd)
  input.setRawMode(true)
  write(prompt)
  return new Promise((resolvePromise, reject) => {
    let line = ''
    const done = (error?: Error) => {
      input.removeAllListeners('data')
      try {
        input.setRawMode(false)
      } catch {
        // already gone
      }
      write('\r\n')
      input.destroy()
      if (error) reject(error)
      else resolvePromise(line)
    }
    input.on('data', (chunk: Buffer) => {
      for (const ch of chunk.toString('utf8')) {
        if (ch === '\r' || ch === '\n') return done()
        if (ch === '\u0003' || (ch === '\u0004' && line === '')) return done(refused('Cancelled at the terminal; nothing changed.'))
        if (ch === '\u007f' || ch === '\b') {
          if (line.length > 0) {
            line = [...line].slice(0, -1).join('')
            if (echo) write('\b \b')
          }
        } else if (ch === '\u0015') {
          if (echo) write('\b \b'.repeat([...line].length))
          line = ''
        } else if (ch >= ' ') {
          line += ch
          if (echo) write(ch)
        }
      }
    })
    input.on('error', (error) => done(refused(`The terminal could not be read (${error.message}); nothing changed.`)))
  })
}
