import {statSync} from 'node:fs'
import {join} from 'node:path'

import {Command, Config, flush} from '@oclif/core'
import {normalizeArgv} from '@oclif/core/help'

import {oclifOptions, reportTopLevel} from './main.js'

/**
 * oclif's hook events of a command's run (main.run, config.runCommand, Command.parse), which
 * this path would have to load: a bundle loads no module file (oclif's loader fails in it).
 * (command_not_found and command_incomplete, engram's own among them, are for a command line
 * that names no command, which this path never takes.)
 */
const RUN_HOOKS = ['init', 'prerun', 'preparse', 'postrun', 'finally'] as const

/**
 * Whether a command line may be a plain run of one of `ids`, before any file is read: its
 * first word begins a command id, and it asks for no help and no version. What passes is
 * then read by oclif's own normalizeArgv (runBundled).
 */
export function mayBeCommand(argv: string[], ids: string[], helpFlags: string[] = ['--help', '-h']): boolean {
  if (argv.length === 0 || argv[0] === '' || argv[0].startsWith('-')) return false
  const end = argv.indexOf('--')
  if ((end === -1 ? argv : argv.slice(0, end)).some((a) => helpFlags.includes(a))) return false
  return ids.some((id) => id === argv[0] || id.startsWith(`${argv[0]}:`))
}

/**
 * Runs a command from the bundle of the whole CLI (dist/fast/cli.cjs, scripts/bundle.mjs),
 * which bin/run.js compiles from a V8 code cache: one script instead of resolving, loading
 * and compiling a few hundred modules (oclif's and engram's), which was most of every
 * command's start (README "Performance"). It is oclif's own run of a command — the same
 * Config (package.json, manifest, plugins), the same reading of the command line into a
 * command id and its arguments (normalizeArgv), the same command class and its parse,
 * errors reported as main.ts reports them — minus what a bundle compiled by node:vm does
 * not do: load a module file at run time. So it takes only a command line that names a
 * command of the bundle and asks for no help or version, only with the manifest it was
 * made from, and only while no plugin declares a hook of a command run; otherwise it
 * returns false before any command has run, and
 * bin/run.js hands the command line to oclif (help, versions, topics, not-found
 * suggestions all go that way).
 */
export async function runBundled(argv: string[], root: string, commands: Record<string, () => Promise<{default: Command.Class}>>, manifestSize: number): Promise<boolean> {
  if (!mayBeCommand(argv, Object.keys(commands))) return false
  // the manifest the bundle was made from; without it oclif would load every command file
  try {
    if (statSync(join(root, 'oclif.manifest.json')).size !== manifestSize) return false
  } catch {
    return false
  }
  const config = await Config.load(oclifOptions(root))
  const helpFlags = [...new Set(['--help', ...(config.pjson.oclif.additionalHelpFlags ?? [])])]
  if (!mayBeCommand(argv, Object.keys(commands), helpFlags)) return false
  const [id, ...rest] = normalizeArgv(config, [...argv])
  if (!Object.hasOwn(commands, id) || !config.findCommand(id)) return false
  for (const plugin of config.getPluginsList()) for (const event of RUN_HOOKS) if ((plugin.hooks[event] ?? []).length > 0) return false
  const command = (await commands[id]()).default
  // what oclif's plugin sets on a command class it loads (config/plugin.js findCommand)
  command.id = id
  command.plugin = config.getPluginsList().find((p) => p.isRoot)
  try {
    await command.run(rest, config)
    await flush()
  } catch (error) {
    await reportTopLevel(error, argv)
  }
  return true
}
