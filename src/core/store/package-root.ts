import {existsSync, readFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

/**
 * engram's installation root (bin/, dist/, models/, skills/, templates/): the nearest
 * folder above this module whose package.json is engram's. The module may sit at
 * dist/core/store/ or inside one of the bundles in dist/fast/ (scripts/bundle.mjs), so
 * the root is found by walking up, not by a fixed number of `..`. Never a folder above
 * the package: a project that installs engram in its node_modules is the agent's to
 * write, and files planted there must not be read as engram's own. Undefined when no
 * engram package is around this module.
 */
export const PACKAGE_ROOT: string | undefined = ((): string | undefined => {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (let i = 0; i < 8; i++) {
    const pkg = join(dir, 'package.json')
    if (existsSync(pkg)) {
      let name: unknown
      try {
        name = (JSON.parse(readFileSync(pkg, 'utf8')) as {name?: unknown}).name
      } catch {
        name = undefined
      }
      // a folder's own package.json (bin/ has one to say CommonJS) names no package: keep looking
      if (name === 'engram') return dir
      if (name !== undefined) return undefined
    }
    const up = dirname(dir)
    if (up === dir) return undefined
    dir = up
  }
  return undefined
})()

/** The installation root, or an error naming what is wrong with the installation. */
export function packageRoot(): string {
  if (PACKAGE_ROOT === undefined) throw new Error(`engram's package.json was not found above ${dirname(fileURLToPath(import.meta.url))}: a broken installation`)
  return PACKAGE_ROOT
}
