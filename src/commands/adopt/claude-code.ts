import {Flags} from '@oclif/core'
import {createTwoFilesPatch} from 'diff'
import {existsSync, realpathSync} from 'node:fs'
import {isAbsolute, join, relative, resolve, sep} from 'node:path'

import {EngramCommand, passphraseFileFlag} from '../../cli/base.js'
import {adoptInput, applyAdoption, confinementWarnings, planAdoption} from '../../agent/claude-code/adopt.js'
import {gitTopLevel} from '../../core/git/git.js'
import {EngramError, badInput, refused} from '../../core/store/errors.js'
import {initStore} from '../../core/store/init.js'
import {Store} from '../../core/store/store.js'

export default class AdoptClaudeCode extends EngramCommand {
  static override ownerOnly = true
  static override summary = 'Set this repository up so every Claude Code session reaches memory only through engram (run by the owner, in their terminal).'
  static override description = [
    'Creates the store (with a git repository of its own) if there is none, and merges into .claude/settings.json',
    'the hooks (`engram hook …`), the deny rules, the sandbox settings and auto memory off; declares `engram mcp` in',
    '.mcp.json; installs the engram skill in .claude/skills/. Idempotent: a second run changes nothing. --dry-run shows',
    'the changes; --check says whether the project confines the agent (exit 7 and what is missing when it does not).',
  ].join(' ')
  static override examples = [
    '<%= config.bin %> adopt claude-code --dry-run',
    '<%= config.bin %> adopt claude-code --assigned tenant:acme',
    '<%= config.bin %> adopt claude-code --check',
  ]
  static override flags = {
    'passphrase-file': passphraseFileFlag,
    project: Flags.string({description: 'the repository Claude Code works in (default: the git work tree holding the current folder)'}),
    store: Flags.string({description: 'the store folder, relative to the project', default: 'memory'}),
    assigned: Flags.string({description: 'the scope sessions propose to (default: what the project was adopted with, else project:<the project folder\'s name>)'}),
    agent: Flags.string({description: 'the agent name sessions write as (default: claude-code, or what the project was adopted with)'}),
    command: Flags.string({description: 'how hooks and the MCP server start engram (default: this installation, by absolute path)'}),
    owner: Flags.string({description: 'name of the owner key when adopt creates the store', default: 'owner'}),
    'no-key': Flags.boolean({description: 'when adopt creates the store: make no owner key (see `engram init --no-key`)'}),
    'dry-run': Flags.boolean({description: 'show what would change, change nothing'}),
    check: Flags.boolean({description: 'change nothing; exit 7 naming what keeps the agent from being confined'}),
  }

  async run() {
    const {flags} = await this.parse(AdoptClaudeCode)
    if (flags['dry-run'] && flags.check) throw badInput('--dry-run and --check do not go together.', 'use one of them')
    const start = resolve(flags.project ?? process.cwd())
    const project = realpathSync(flags.project ? start : ((await gitTopLevel(start)) ?? start))
    const store = resolve(project, flags.store)
    // the tools the store's signed config adds to the taint list must reach the hook
    const taintTools = existsSync(join(store, '.engram')) ? (await Store.open(store)).config.taint.tools : []
    const input = adoptInput(project, store, {assigned: flags.assigned, agent: flags.agent, command: flags.command, passphraseFile: flags['passphrase-file'], taintTools})
    const {assigned, configDir: cfg} = input
    if (!/^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/.test(input.agent)) throw badInput(`Bad agent name "${input.agent}".`, 'use letters, digits and . _ @ -, up to 64 characters')

    if (flags.check) {
      const warnings = confinementWarnings(input)
      const result = {project, store, confined: warnings.length === 0, warnings}
      if (warnings.length > 0) {
        for (const w of warnings) this.warnLine(`not confined: ${w}`)
        throw new EngramError('verification', `Claude Code in ${project} is not confined (${warnings.length} problem${warnings.length === 1 ? '' : 's'}): the agent's shell may reach the store or act as the owner.`, {
          nextStep: 'run `engram adopt claude-code` (the cooperative mode: engram detects, it cannot prevent)',
          output: result,
        })
      }
      if (!this.jsonEnabled()) this.log(`confined: ${project} sends every Claude Code session through engram`)
      return result
    }

    // the rules protect paths, not what is under them: a store below a folder the agent can
    // rename, or a config folder inside the project, cannot be confined (README "Claude Code")
    const rel = relative(project, store)
    if (!rel.startsWith('..') && !isAbsolute(rel) && rel.includes(sep)) {
      throw badInput(`The store must be a folder directly in the project (or outside it), not ${rel}: the agent could rename the folders above it and plant another.`, 'use --store memory, or a folder outside the project')
    }
    if (!relative(project, cfg).startsWith('..')) throw badInput(`The engram config folder ${cfg} is inside the project, where the agent works.`, 'point ENGRAM_CONFIG_DIR at a folder outside the project (default ~/.config/engram)')
    if (!existsSync(join(store, '.engram')) && existsSync(join(store, '.git'))) {
      throw refused(`${store} already holds a git repository (or a .git file pointing elsewhere); adopt makes the store's own.`, 'move it away, or use another --store')
    }
    const plan = planAdoption(input)
    const summary = {
      project,
      store,
      assigned,
      createStore: plan.createStore,
      files: plan.files.map((f) => ({path: f.path, action: f.before === undefined ? 'create' : 'update'})),
      warnings: plan.warnings,
      dryRun: flags['dry-run'],
    }
    if (flags['dry-run']) {
      if (!this.jsonEnabled()) {
        if (plan.createStore) this.log(`would create the store ${store} (a git repository of its own${flags['no-key'] ? '' : ', and an owner key'})`)
        for (const f of plan.files) this.logRendered(createTwoFilesPatch(f.before === undefined ? '/dev/null' : `a/${f.path}`, `b/${f.path}`, f.before ?? '', f.after, '', '', {context: 2}).split('\n').slice(1).join('\n'))
        if (!plan.createStore && plan.files.length === 0) this.log('nothing to change')
      }
      return summary
    }
    if (plan.createStore) {
      // its own repository (init's default inside a project): never the project's, whose history the agent's shell can rewrite
      await initStore(store, {owner: flags.owner, noKey: flags['no-key']})
      this.note(`created the store ${store}`)
    }
    applyAdoption(plan)
    for (const f of plan.files) this.note(`${f.before === undefined ? 'created' : 'updated'} ${f.path}`)
    if (!plan.createStore && plan.files.length === 0) this.note('nothing to change: already adopted')
    for (const w of plan.warnings) this.warnLine(`not confined: ${w}`)
    if (!this.jsonEnabled()) {
      this.log(project)
      this.note(`Claude Code sessions here now start an engram session assigned ${assigned}; review from your own terminal: engram review list --base ${store}`)
    }
    return summary
  }
}
