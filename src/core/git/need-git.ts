import {accessSync, constants, statSync} from 'node:fs'
import {delimiter, join} from 'node:path'

import {EngramError} from '../store/errors.js'

/** The one message for a machine without git: what to do, not "spawn git ENOENT". */
export function gitMissing(): EngramError {
  return new EngramError('refused', 'git is required: engram keeps memory in a git repository, and no `git` is on PATH.', {
    nextStep: 'install git (e.g. `sudo apt install git`, `brew install git`, or https://git-scm.com/downloads) and make sure `git --version` runs, then try again',
  })
}

/** True when an executable `git` is on PATH: a few stat calls, no process started. */
function gitOnPath(path = process.env.PATH ?? ''): boolean {
  const names = process.platform === 'win32' ? ['git.exe', 'git.cmd', 'git'] : ['git']
  for (const dir of path.split(delimiter)) {
    if (!dir) continue
    for (const name of names) {
      try {
        const file = join(dir, name)
        if (!statSync(file).isFile()) continue
        accessSync(file, constants.X_OK)
        return true
      } catch {
        // not here
      }
    }
  }
  return false
}

/**
 * Refuse before anything is written when git is missing: a write must not leave a file in
 * the work tree that no commit records (and that a read would then serve).
 */
export function requireGit(): void {
  if (!gitOnPath()) throw gitMissing()
}
