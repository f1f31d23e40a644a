import {readdirSync, readFileSync, statSync} from 'node:fs'
import {dirname, join, relative, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const core = join(root, 'src/core')

function tsFiles(dir: string): string[] {
  return readdirSync(dir, {withFileTypes: true}).flatMap((d) => {
    const p = join(dir, d.name)
    return d.isDirectory() ? tsFiles(p) : d.name.endsWith('.ts') ? [p] : []
  })
}

/** Every module specifier a file names: static imports and re-exports, import(), require(). */
export function specifiers(text: string): string[] {
  const out: string[] = []
  const patterns = [/\b(?:import|export)\s[^'"]*?\bfrom\s*['"]([^'"]+)['"]/g, /\bimport\s*['"]([^'"]+)['"]/g, /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g, /\brequire\(\s*['"]([^'"]+)['"]\s*\)/g]
  for (const re of patterns) for (const m of text.matchAll(re)) out.push(m[1])
  return out
}

/** Why a specifier in a src/core file breaks the layout, or null. */
export function forbidden(file: string, spec: string): string | null {
  if (/^@?oclif\b/.test(spec)) return 'oclif'
  if (spec.startsWith('.')) {
    const target = relative(root, resolve(dirname(file), spec))
    if (target === 'src/cli' || target.startsWith('src/cli/') || target.startsWith('src/commands/')) return target
  }
  return null
}

describe('the layout of src/core', () => {
  it('finds the kinds of imports it must refuse (the check itself can fail)', () => {
    const f = join(core, 'trust/x.ts')
    const bad = "import {writeWarning} from '../../cli/output.js'\nexport {x} from '../../commands/a.js'\nconst f = await import('@oclif/core')\nimport '../../cli/side.js'"
    expect(specifiers(bad).map((s) => forbidden(f, s))).toEqual(['src/cli/output.js', 'src/commands/a.js', 'src/cli/side.js', 'oclif'])
    expect(forbidden(f, '../store/errors.js')).toBeNull()
    expect(forbidden(f, 'node:fs')).toBeNull()
  })

  it('never imports src/cli, src/commands or oclif (nor does src/mcp, the MCP server, which imports the core only)', () => {
    const offences = [...tsFiles(core), ...tsFiles(join(root, 'src/mcp'))].flatMap((file) =>
      specifiers(readFileSync(file, 'utf8')).flatMap((spec) => {
        const why = forbidden(file, spec)
        return why ? [`${relative(root, file)} imports ${spec} (${why})`] : []
      }),
    )
    expect(offences).toEqual([])
  })

  it('holds folders only at its top level, and README.md, the index of them', () => {
    const loose = readdirSync(core).filter((n) => n !== 'README.md' && !statSync(join(core, n)).isDirectory())
    expect(loose).toEqual([])
    // the index names every folder
    const index = readFileSync(join(core, 'README.md'), 'utf8')
    const folders = readdirSync(core).filter((n) => statSync(join(core, n)).isDirectory())
    expect(folders.filter((f) => !index.includes(`${f}/`))).toEqual([])
  })
})
