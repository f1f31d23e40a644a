/**
 * `engram adopt claude-code`: set a repository up so that every Claude Code session in it
 * reaches memory only through engram (README "Claude Code"). Plan first (every file's
 * content before and after), then write; running it again plans nothing. The store gets a
 * git repository of its own, ignored by the project's: the agent's shell may commit to
 * the project, and a store inside the project's repository would let it rewrite the
 * store's history (the cooperative mode); its own repository sits in a folder the
 * sandbox hides.
 */
import {existsSync, readFileSync, realpathSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'

import {badInput} from '../../core/store/errors.js'
import {ignoreStoreIn} from '../../core/store/init.js'
import {writeFileAtomic} from '../../core/store/fsutil.js'
import {Json, JsonObject, SettingsInput, engramMcpServer, engramSettings, inProject, mergeSettings, shellQuote, shortfalls} from './settings.js'

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

/** This installation's root (bin/, dist/, skills/): the folder above dist/. */
export function packageRoot(): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..')
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
export function adoptedAs(project: string): {assigned?: string; agent?: string; command?: string} {
  try {
    const server = (readJson(project, '.mcp.json')?.mcpServers as {engram?: {command?: unknown; args?: unknown}} | undefined)?.engram
    const args = server?.args
    if (!Array.isArray(args)) return {}
    const mcp = args.indexOf('mcp')
    const command = typeof server?.command === 'string' && mcp >= 0 && args.slice(0, mcp).every((a) => typeof a === 'string')
      ? [server.command, ...(args.slice(0, mcp) as string[])].map(shellQuote).join(' ')
      : undefined
    const after = (flag: string) => {
      const i = args.indexOf(flag)
      return i >= 0 && typeof args[i + 1] === 'string' ? (args[i + 1] as string) : undefined
    }
    return {assigned: after('--assigned'), agent: after('--agent'), command}
  } catch {
    return {}
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

/**
 * What keeps the agent from being confined (empty: confined as far as files can tell).
 * Read from the project's files as they are, or as they will be after `afterPlan`.
 */
export function confinementWarnings(input: SettingsInput, opts: {afterPlan?: AdoptPlan} = {}): string[] {
  const out: string[] = []
  const planned = (rel: string) => opts.afterPlan?.files.find((f) => f.path === rel)?.after
  const load = (rel: string): JsonObject | undefined => {
    const text = planned(rel) ?? current(input.project, rel)
    if (text === undefined) return undefined
    try {
      return JSON.parse(text) as JsonObject
    } catch {
      return undefined
    }
  }
  const settings = load('.claude/settings.json')
  if (!settings) out.push('.claude/settings.json is missing or not JSON: nothing confines the agent')
  else out.push(...shortfalls(settings, engramSettings(input)).map((s) => `.claude/settings.json ${s}`))
  const mcp = load('.mcp.json')
  const server = mcp && typeof mcp.mcpServers === 'object' && mcp.mcpServers !== null && !Array.isArray(mcp.mcpServers) ? (mcp.mcpServers as JsonObject).engram : undefined
  if (JSON.stringify(server) !== JSON.stringify(engramMcpServer(input))) out.push('.mcp.json: the engram server entry is missing or differs')
  // the store's history must not be the project's: the agent's shell commits to the project
  if (existsSync(join(input.store, '.engram'))) {
    const storeGit = existsSync(join(input.store, '.git'))
    if (!storeGit) out.push(`the store ${input.store} has no git repository of its own: its history is the project's, which the agent's shell can rewrite`)
  } else if (!opts.afterPlan) {
    out.push(`no store at ${input.store}`)
  }
  const install = realpathSync(packageRoot())
  if (inProject(realpathSync(input.project), install)) out.push(`engram itself is installed inside the project (${install}), where the agent's shell can replace it`)
  // the sandbox lets the shell write the temp folder too: code there is the agent's to change
  const tmp = realpathSync(tmpdir())
  if (inProject(tmp, install)) out.push(`engram itself is installed under the temp folder (${install}), which the agent's sandbox may write`)
  return out
}
