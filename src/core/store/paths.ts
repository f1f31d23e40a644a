import {lstatSync} from 'node:fs'

import {badInput, refused} from './errors.js'
import {printable, scopeDir} from './scope.js'
import type {Store} from './store.js'

const MAX_PATH_BYTES = 255

/**
 * Check a memory path given by a user or agent: relative, `.md`, no `..` or `.` segments,
 * no hidden segments, no absolute or Windows paths, no control characters, ≤ 255 bytes.
 * Returns the normalised POSIX path.
 */
export function validateMemoryPath(input: string): string {
  const shown = printable(input)
  const example = 'give a relative path ending in .md inside the scope, e.g. notes/deploy.md'
  if (typeof input !== 'string' || input.length === 0) throw badInput('A memory path is required.', example)
  if (Buffer.byteLength(input, 'utf8') > MAX_PATH_BYTES) throw badInput(`Path is longer than ${MAX_PATH_BYTES} bytes.`, example)
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(input)) throw badInput(`Path "${shown}" contains control characters.`, example)
  if (input.includes('\\')) throw badInput(`Path "${shown}" contains a backslash.`, example)
  if (input.startsWith('/') || /^[A-Za-z]:/.test(input)) throw badInput(`Path "${shown}" is absolute.`, example)
  const segments = input.split('/')
  for (const seg of segments) {
    if (seg === '..' || seg === '.') throw badInput(`Path "${shown}" leaves its scope folder (".." or ".").`, example)
    if (seg === '') throw badInput(`Path "${shown}" has an empty segment.`, example)
    if (seg.startsWith('.')) throw badInput(`Path "${shown}" has a hidden segment ("${printable(seg)}").`, example)
  }
  if (!input.endsWith('.md') || input === '.md') throw badInput(`Path "${shown}" must end in .md.`, example)
  return segments.join('/')
}

/**
 * The store-relative path of a memory, after checking that no component on the way
 * from the store root to it is a symlink (a planted link could point outside the store).
 */
export function memoryRelPath(store: Store, scope: string, path: string): string {
  const rel = `${scopeDir(scope)}/${validateMemoryPath(path)}`
  assertNoSymlinks(store, rel)
  return rel
}

function assertNoSymlinks(store: Store, rel: string): void {
  const parts = rel.split('/')
  let cur = ''
  for (const part of parts) {
    cur = cur ? `${cur}/${part}` : part
    let st
    try {
      st = lstatSync(store.abs(cur))
    } catch {
      return // nothing exists from here down: nothing to follow
    }
    if (st.isSymbolicLink()) {
      throw refused(`"${printable(cur)}" in the store is a symbolic link; engram never follows links.`, 'remove the link (`git rm`) and retry')
    }
  }
}
