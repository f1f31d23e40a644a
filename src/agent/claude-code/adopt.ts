/**
 * `engram adopt claude-code`: set a repository up so that every Claude Code session in it
 * reaches memory only through engram (README "Claude Code"). Plan first (every file's
 * content before and after), then write; running it again plans nothing. The store gets a
 * git repository of its own, ignored by the project's: the agent's shell may commit to
 * the project, and a store inside the project's repository would let it rewrite the
 * store's history (the cooperative mode); its own repository sits in a folder the
 * sandbox hides.
 */
import {spawnSync} from 'node:child_process'
import {existsSync, lstatSync, readFileSync, realpathSync} from 'node:fs'
import {homedir, tmpdir} from 'node:os'
import {basename, join, resolve} from 'node:path'

import {GIT_OPTS, gitEnv} from '../../core/git/git.js'
import {badInput} from '../../core/store/errors.js'
import {configDir} from '../../core/store/cachefile.js'
import {packageRoot} from '../../core/store/package-root.js'
import {ignoreStoreIn} from '../../core/store/init.js'
import {formatScope, parseScope, projectScopeFor} from '../../core/store/scope.js'
import {writeFileAtomic} from '../../core/store/fsutil.js'
import {Json, JsonObject, SettingsInput, engramMcpServer, engramSettings, hiddenPaths, inProject, mergeSettings, shellQuote, shortfalls, splitCommand} from './settings.js'

export interface FilePlan {
  /** path relative to the project */
  path: string
  before: string | undefined
  after: string
}

export interface AdoptPlan {
  project: string
  store: string
  /** the store does not exist yet: adopt creates it (with its own git repository) */
  createStore: boolean
  files: FilePlan[]
  /** what keeps this setup from the confined mode, after the plan is applied */
  warnings: string[]
}


/** The command hooks and the MCP server start engram with: absolute, never a PATH lookup. */
export function defaultCommand(): string {
  const bin = join(packageRoot(), 'bin', 'run.js')
  return `${shellQuote(process.execPath)} ${shellQuote(bin)}`
}

function readJson(project: string, rel: string): JsonObject | undefined {
  const file = join(project, rel)
  if (!existsSync(file)) return undefined
  const text = readFileSync(file, 'utf8')
  if (text.trim() === '') return undefined
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (error) {
    throw badInput(`${rel} is not valid JSON (${(error as Error).message}); adopt changed nothing.`, `fix or remove ${rel}, then run adopt again`)
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw badInput(`${rel} does not hold a JSON object; adopt changed nothing.`, `fix or remove ${rel}`)
  return parsed as JsonObject
}

const current = (project: string, rel: string) => (existsSync(join(project, rel)) ? readFileSync(join(project, rel), 'utf8') : undefined)
const json = (v: Json) => `${JSON.stringify(v, null, 2)}\n`

/** The scope and agent of an earlier adoption, from its `.mcp.json` entry (unset when none or unreadable). */
export function adoptedAs(project: string): {assigned?: string; agent?: string} {
  try {
    const args = (readJson(project, '.mcp.json')?.mcpServers as {engram?: {args?: unknown}} | undefined)?.engram?.args
    if (!Array.isArray(args)) return {}
    const after = (flag: string) => {
      const i = args.indexOf(flag)
      return i >= 0 && typeof args[i + 1] === 'string' ? (args[i + 1] as string) : undefined
    }
    // the command is never taken from there: .mcp.json is a committed file, and what the hooks run must be this engram
    return {assigned: after('--assigned'), agent: after('--agent')}
  } catch {
    return {}
  }
}

/**
 * The setup adopt makes for `project` and `store` on this machine: the config folder and
 * any passphrase or key file outside it (hidden like it), this installation's command,
 * and the scope and agent given, else those the project was adopted with, else the
 * defaults. adopt, its --check and doctor all compare against this one answer.
 */
export function adoptInput(project: string, store: string, opts: {assigned?: string; agent?: string; command?: string; passphraseFile?: string; taintTools?: string[]} = {}): SettingsInput {
  const adopted = adoptedAs(project)
  const cfg = resolve(configDir())
  const secrets = [process.env.ENGRAM_PASSPHRASE_FILE, opts.passphraseFile, process.env.ENGRAM_KEY]
    .filter((f): f is string => typeof f === 'string' && f !== '')
    .map((f) => resolve(f))
    .filter((f, i, all) => all.indexOf(f) === i && !(f === cfg || f.startsWith(`${cfg}/`)))
  return {
    project, store, configDir: cfg, home: homedir(), secrets, taintTools: opts.taintTools,
    command: opts.command ?? defaultCommand(),
    assigned: formatScope(parseScope(opts.assigned ?? adopted.assigned ?? projectScopeFor(basename(project)))),
    agent: opts.agent ?? adopted.agent ?? 'claude-code',
  }
}

export function planAdoption(input: SettingsInput): AdoptPlan {
  const {project, store} = input
  const files: FilePlan[] = []
  const add = (path: string, after: string) => {
    const before = current(project, path)
    if (before !== after) files.push({path, before, after})
  }
  // parse both first: a broken file refuses the whole plan before anything is written
  const settings = readJson(project, '.claude/settings.json')
  const mcp = readJson(project, '.mcp.json')
  add('.claude/settings.json', json(mergeSettings(settings, engramSettings(input))))
  add('.mcp.json', json(mergeSettings(mcp, {mcpServers: {engram: engramMcpServer(input)}})))
  add('.claude/skills/engram/SKILL.md', readFileSync(join(packageRoot(), 'skills', 'engram', 'SKILL.md'), 'utf8'))
  const storeRel = inProject(project, store)
  if (storeRel && existsSync(join(project, '.git'))) {
    const next = ignoreStoreIn(project, storeRel, current(project, '.gitignore'))
    if (next !== undefined) add('.gitignore', next)
  }
  const plan: AdoptPlan = {project, store, createStore: !existsSync(join(store, '.engram')), files, warnings: []}
  plan.warnings = confinementWarnings(input, {afterPlan: plan})
  return plan
}

export function applyAdoption(plan: AdoptPlan): void {
  for (const f of plan.files) writeFileAtomic(join(plan.project, f.path), f.after)
}

/** Whether `a` and `b` are the same path or one holds the other. */
const overlaps = (a: string, b: string) => a === b || b.startsWith(`${a}/`) || a.startsWith(`${b}/`)

/**
 * The paths a settings path may mean: `//x` is absolute, `~/x` under home, `/x` (whose
 * anchoring has changed between releases) both absolute and from the project, anything
 * else from the project.
 */
function settingsPaths(input: SettingsInput, p: string): string[] {
  if (p.startsWith('//')) return [p.slice(1)]
  if (p.startsWith('~/')) return [join(input.home, p.slice(2))]
  if (p.startsWith('/')) return [p, join(input.project, p)]
  return [resolve(input.project, p)]
}

const isObj = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v)
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [])

/**
 * Settings that undo the confinement whatever engram's own keys say: another scope
 * turning the sandbox off, commands let out of it, the hidden paths let back in, hooks
 * that stop engram's or run other code outside the sandbox, an environment that points
 * engram, node or git elsewhere. Checked in every settings file Claude Code merges.
 */
export function loosening(input: SettingsInput, label: string, settings: JsonObject): string[] {
  const out: string[] = []
  const hidden = hiddenPaths(input)
  const sandbox = isObj(settings.sandbox) ? settings.sandbox : {}
  const fs = isObj(sandbox.filesystem) ? sandbox.filesystem : {}
  if (sandbox.enabled === false) out.push(`${label}: sandbox.enabled is false`)
  if (sandbox.allowUnsandboxedCommands === true) out.push(`${label}: sandbox.allowUnsandboxedCommands lets a command ask to leave the sandbox`)
  if (strings(sandbox.excludedCommands).length > 0) out.push(`${label}: sandbox.excludedCommands run outside the sandbox (${strings(sandbox.excludedCommands).join(', ')})`)
  if (isObj(sandbox.network) && sandbox.network.allowAllUnixSockets === true) out.push(`${label}: sandbox.network.allowAllUnixSockets`)
  const permissions = isObj(settings.permissions) ? settings.permissions : {}
  for (const [key, list] of [['sandbox.filesystem.allowRead', fs.allowRead], ['sandbox.filesystem.allowWrite', fs.allowWrite], ['permissions.additionalDirectories', permissions.additionalDirectories]] as const) {
    for (const p of strings(list)) if (settingsPaths(input, p).some((x) => hidden.some((h) => overlaps(x, h)))) out.push(`${label}: ${key} lets the agent back into ${p}`)
  }
  if (settings.disableAllHooks === true) out.push(`${label}: disableAllHooks stops engram's hooks (no session binding, no taint)`)
  if (settings.enableAllProjectMcpServers === true) out.push(`${label}: enableAllProjectMcpServers approves every server in .mcp.json`)
  const hooks = isObj(settings.hooks) ? settings.hooks : {}
  for (const [event, groups] of Object.entries(hooks)) {
    for (const g of Array.isArray(groups) ? groups : []) {
      for (const h of isObj(g) && Array.isArray(g.hooks) ? g.hooks : []) {
        const c = isObj(h) && typeof h.command === 'string' ? h.command : undefined
        if (c !== undefined && !c.startsWith(`${input.command} hook `)) out.push(`${label}: the ${event} hook \`${c}\` runs outside the sandbox; the agent must not be able to change what it runs`)
      }
    }
  }
  if (isObj(settings.statusLine) && typeof settings.statusLine.command === 'string') out.push(`${label}: statusLine \`${settings.statusLine.command}\` runs outside the sandbox`)
  const env = isObj(settings.env) ? settings.env : {}
  const ours = engramSettings(input).env as JsonObject
  for (const k of Object.keys(env)) {
    if (k in ours && env[k] === ours[k]) continue
    if (/^(PATH|NODE_.*|ENGRAM_.*|GIT_.*|LD_.*|DYLD_.*|BASH_ENV|ENV|HOME|XDG_.*)$/.test(k)) out.push(`${label}: env.${k} changes what the hooks and the MCP server run or read`)
  }
  return out
}

/**
 * What keeps the agent from being confined (empty: confined as far as files can tell).
 * Read from the project's files as they are, or as they will be after `afterPlan`.
 */
export function confinementWarnings(input: SettingsInput, opts: {afterPlan?: AdoptPlan} = {}): string[] {
  const out: string[] = []
  const planned = (rel: string) => opts.afterPlan?.files.find((f) => f.path === rel)?.after
  const load = (rel: string, base = input.project): JsonObject | undefined => {
    const text = (base === input.project ? planned(rel) : undefined) ?? current(base, rel)
    if (text === undefined) return undefined
    try {
      const v = JSON.parse(text) as unknown
      return isObj(v) ? v : undefined
    } catch {
      return undefined
    }
  }
  const settings = load('.claude/settings.json')
  if (!settings) out.push('.claude/settings.json is missing or not JSON: nothing confines the agent')
  else out.push(...shortfalls(settings, engramSettings(input)).map((s) => `.claude/settings.json ${s}`), ...loosening(input, '.claude/settings.json', settings))
  // every scope Claude Code merges: the local one overrides the project's
  const local = load('.claude/settings.local.json')
  if (local) out.push(...loosening(input, '.claude/settings.local.json', local))
  const user = load('.claude/settings.json', input.home)
  if (user) out.push(...loosening(input, '~/.claude/settings.json', user))
  const mcp = load('.mcp.json')
  const servers = mcp && isObj(mcp.mcpServers) ? mcp.mcpServers : {}
  if (JSON.stringify(servers.engram) !== JSON.stringify(engramMcpServer(input))) out.push('.mcp.json: the engram server entry is missing or differs')
  for (const [name, srv] of Object.entries(servers)) {
    const cmd = isObj(srv) && typeof srv.command === 'string' ? srv.command : undefined
    if (name !== 'engram' && cmd !== undefined && (!cmd.startsWith('/') || inProject(input.project, cmd) || inProject(realpathSync(tmpdir()), cmd))) {
      out.push(`.mcp.json: server ${name} runs ${cmd}, which the agent can change, outside the sandbox`)
    }
  }
  // the paths the rules name must be the paths: no symlink between the project and them
  for (const p of [join(input.project, '.claude'), join(input.project, '.mcp.json'), input.store]) {
    try {
      if (lstatSync(p).isSymbolicLink()) out.push(`${p} is a symbolic link: the agent can point it elsewhere`)
    } catch {
      // absent
    }
  }
  const storeRel = inProject(input.project, input.store)
  if (storeRel?.includes('/')) out.push(`the store ${storeRel} is not directly in the project: the agent can rename the folders above it and plant another`)
  if (inProject(input.project, input.configDir)) out.push(`the config folder ${input.configDir} is inside the project`)
  if (existsSync(join(input.store, '.engram'))) {
    out.push(...storeRepositoryProblems(input.store))
    // what the project's history still holds of the store is readable from the agent's shell
    if (storeRel && existsSync(join(input.project, '.git'))) {
      // the project's .git/config is the agent's to write: engram's git options and
      // environment, and no signature check (log.showSignature would run its gpg.program)
      const past = spawnSync('git', [...GIT_OPTS, '-C', input.project, 'log', '--no-show-signature', '-1', '--format=%H', '--end-of-options', 'HEAD', '--', storeRel], {encoding: 'utf8', env: gitEnv()})
      if (past.status === 0 && past.stdout.trim() !== '') out.push(`the project's history holds the store's past content (commit ${past.stdout.trim().slice(0, 10)}), which the agent's shell can read: rewrite it out of the project's history, or adopt in a fresh clone`)
    }
  } else if (!opts.afterPlan) {
    out.push(`no store at ${input.store}`)
  }
  const tmp = realpathSync(tmpdir())
  for (const part of [...new Set([...splitCommand(input.command), realpathSync(packageRoot())])]) {
    if (!part.startsWith('/')) continue
    if (inProject(realpathSync(input.project), part) || part === input.project) out.push(`${part} (what the hooks and the MCP server run) is inside the project, where the agent's shell can replace it`)
    if (inProject(tmp, part)) out.push(`${part} (what the hooks and the MCP server run) is under the temp folder, which the agent's sandbox may write`)
  }
  if (!splitCommand(input.command)[0]?.startsWith('/')) out.push(`the hooks run \`${input.command}\` through PATH: the agent can put another first`)
  // git is found on PATH by the hooks and the MCP server: no entry the agent's shell writes
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir === '' || !dir.startsWith('/')) out.push(`PATH holds a relative entry (${dir === '' ? 'empty' : dir}): git would be looked up there`)
    else if (inProject(input.project, dir) || dir === input.project) out.push(`PATH holds ${dir}, inside the project: git would be looked up there`)
  }
  if (process.platform === 'linux' && spawnSync('bwrap', ['--version']).status !== 0) out.push('bubblewrap (bwrap) is not installed: Claude Code cannot sandbox the agent\'s shell on this machine')
  return out
}

/** A store's repository must be its own: a real `.git` folder inside it, borrowing no objects. */
export function storeRepositoryProblems(store: string): string[] {
  const dotGit = join(store, '.git')
  try {
    const st = lstatSync(dotGit)
    if (!st.isDirectory()) return [`${dotGit} is not a folder: the store's history lives elsewhere, where the sandbox may not hide it`]
  } catch {
    return [`the store ${store} has no git repository of its own: its history is the project's, which the agent's shell can rewrite`]
  }
  if (existsSync(join(dotGit, 'objects', 'info', 'alternates'))) return [`${dotGit} borrows objects from another repository (objects/info/alternates)`]
  if (existsSync(join(dotGit, 'commondir'))) return [`${dotGit} is a linked worktree of another repository`]
  return []
}
