import {chmodSync, existsSync, mkdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {curate, git, initWithSession, sandbox, tempDir} from '../helpers/cli.js'

/**
 * The repository's own config, hooks and attributes are as writable by an agent as the
 * store (cooperative mode). None of them may run a command when engram runs git for the
 * owner (STANDARD R18): hooks, fsmonitor, clean filters, diff text conversions.
 */
describe('a repository config planted by the agent runs nothing', () => {
  it('write, accept, history, verify, search and reject run no hook, fsmonitor, filter or textconv command', () => {
    const sb = sandbox()
    const session = initWithSession(sb)
    const marks = tempDir('engram-marks-')
    const mark = (name: string) => join(marks, name)
    git(sb.dir, 'config', 'core.fsmonitor', `touch ${mark('fsmonitor')}; false`)
    git(sb.dir, 'config', 'filter.evil.clean', `touch ${mark('clean')}; cat`)
    git(sb.dir, 'config', 'filter.evil.smudge', `touch ${mark('smudge')}; cat`)
    git(sb.dir, 'config', 'diff.evil.textconv', `touch ${mark('textconv')}; cat`)
    git(sb.dir, 'config', 'diff.external', `touch ${mark('external')}; true`)
    git(sb.dir, 'config', 'commit.gpgSign', 'true')
    git(sb.dir, 'config', 'gpg.program', mark('gpg'))
    const hooks = join(sb.dir, '.git', 'hooks')
    mkdirSync(hooks, {recursive: true})
    for (const hook of ['reference-transaction', 'pre-commit', 'post-commit', 'post-index-change']) {
      writeFileSync(join(hooks, hook), `#!/bin/sh\ntouch ${mark(hook)}\n`)
      chmodSync(join(hooks, hook), 0o755)
    }
    writeFileSync(join(sb.dir, '.gitattributes'), '* filter=evil diff=evil\n')

    const run = sb.run(['write', 'notes.md', '--scope', `run:${session}`], {input: 'a scratch note\n', env: {ENGRAM_SESSION: session}})
    expect(run.code, run.stderr).toBe(0)
    curate(sb, session, 'tenant:acme', 'billing.md', 'Acme renews in March\n')
    const w = sb.run(['write', 'other.md', '--scope', 'tenant:acme', '--json'], {input: 'Acme pays by card\n', env: {ENGRAM_SESSION: session}})
    expect(w.json?.status).toBe('pending')
    expect(sb.run(['review', 'reject', w.json.proposal, '--reason', 'not needed']).code).toBe(0)
    expect(sb.run(['history', 'billing.md', '--scope', 'tenant:acme']).code).toBe(0)
    expect(sb.run(['verify']).code).toBe(0)
    expect(sb.run(['search', 'renews'], {env: {ENGRAM_SESSION: session}}).code).toBe(0)

    for (const name of ['fsmonitor', 'clean', 'smudge', 'textconv', 'external', 'gpg', 'reference-transaction', 'pre-commit', 'post-commit', 'post-index-change']) {
      expect(existsSync(mark(name)), `${name} ran`).toBe(false)
    }
  })
})
