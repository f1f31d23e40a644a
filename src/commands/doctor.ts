import {Flags} from '@oclif/core'
import {existsSync} from 'node:fs'
import {dirname, join, resolve} from 'node:path'

import {EngramCommand} from '../cli/base.js'
import {listEnvelope, table} from '../cli/list.js'
import {adoptInput, confinementWarnings} from '../agent/claude-code/adopt.js'
import {gitTopLevel} from '../core/git/git.js'
import {Check, diagnose} from '../core/store/doctor.js'
import {EngramError} from '../core/store/errors.js'
import {Store} from '../core/store/store.js'

export default class Doctor extends EngramCommand {
  static override ownerOnly = true
  static override summary = 'Check this store on this machine (git, history, config, the vote\'s weights, keys and their modes, trust pins, locks, index, queue, sessions, verify, the agent host\'s confinement), each finding with its fix; --fix does the safe ones.'
  static override description = 'Exit 0 when nothing fails (warnings included), 7 when a check fails. --fix only does what engram would do at its next command (recover a dead process\'s lock or journal, rebuild a stale index, tighten a private file\'s mode); trusting, pinning and signing stay the owner\'s.'
  static override examples = ['<%= config.bin %> doctor', '<%= config.bin %> doctor --fix', '<%= config.bin %> doctor --json | jq \'.items[] | select(.status != "ok")\'']
  static override flags = {
    fix: Flags.boolean({description: 'do the safe fixes'}),
    'no-verify': Flags.boolean({description: 'skip checking every curated file\'s signature (the slow part on a large store)'}),
  }

  async run() {
    const {flags} = await this.parse(Doctor)
    const store = await Store.open(flags.base)
    const checks = await diagnose(store, {fix: flags.fix, verify: !flags['no-verify']})
    checks.push(...(await confinement(store)))
    if (!this.jsonEnabled()) {
      for (const line of table(['STATUS', 'CHECK', 'DETAIL'], checks.map((c) => [c.fixed ? 'fixed' : c.status, c.check, c.detail]))) this.log(line)
      for (const c of checks) if (c.status !== 'ok' && c.fix && !c.fixed) this.note(`${c.check}: ${c.fix}${c.fixable ? ' (or `engram doctor --fix`)' : ''}`)
    }
    const failed = checks.filter((c) => c.status === 'fail' && !c.fixed)
    const result = listEnvelope(checks, {failed: failed.length, warnings: checks.filter((c) => c.status === 'warn' && !c.fixed).length, fixed: checks.filter((c) => c.fixed).length})
    if (failed.length > 0) {
      throw new EngramError('verification', `${failed.length} check(s) failed: ${failed.map((c) => c.check).join(', ')}.`, {nextStep: failed[0].fix, output: result})
    }
    return result
  }
}

/** The agent host's setup around this store, when there is one: confined, or what makes it cooperative. */
async function confinement(store: Store): Promise<Check[]> {
  // the project around the store: the repository it shares, else the one above it, else its folder
  const project = store.top !== store.root ? store.top : ((await gitTopLevel(dirname(store.root))) ?? dirname(store.root))
  if (!(existsSync(join(project, '.claude/settings.json')) || existsSync(join(project, '.mcp.json')))) {
    return [{check: 'confinement', status: 'ok', detail: 'no agent host set up around this store (`engram adopt claude-code` in the project sets one up)'}]
  }
  const warnings = confinementWarnings(adoptInput(project, resolve(store.root), {taintTools: store.config.taint.tools}))
  if (warnings.length === 0) return [{check: 'confinement', status: 'ok', detail: `Claude Code in ${project} is confined: it reaches memory only through engram`}]
  return [{check: 'confinement', status: 'warn', detail: `cooperative: ${warnings.join('; ')}`, fix: `run \`engram adopt claude-code --project ${project}\``}]
}
