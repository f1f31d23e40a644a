import {spawnSync} from 'node:child_process'

/**
 * Long output for a person, as git does it: through `$ENGRAM_PAGER`, else `$PAGER`, else
 * `less -FRX` (quits at once when the text fits the screen, keeps colours, leaves the
 * text on the screen), only when stdout is a terminal and never with --json. `cat` or an
 * empty value turns it off, as does `--no-pager`. The text is what render.ts made: every
 * stored string in it is already escaped, so the pager only sees engram's own colours.
 */
export function pagerCommand(): string | undefined {
  const p = process.env.ENGRAM_PAGER ?? process.env.PAGER ?? 'less -FRX'
  return p.trim() === '' || p.trim() === 'cat' ? undefined : p
}

/** Show `text` through the pager; false (nothing shown) when there is none or it cannot start. */
export function page(text: string): boolean {
  if (!process.stdout.isTTY) return false
  const cmd = pagerCommand()
  if (!cmd) return false
  const r = spawnSync('/bin/sh', ['-c', cmd], {input: text.endsWith('\n') ? text : `${text}\n`, stdio: ['pipe', 'inherit', 'inherit'], env: {...process.env, LESS: process.env.LESS ?? 'FRX', LV: process.env.LV ?? '-c'}})
  // 127: the shell found no such pager; show the text plainly instead
  return !r.error && r.status !== 127 && r.status !== 126
}
