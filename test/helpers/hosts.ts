import {join} from 'node:path'

import {Sandbox, curate, git, initWithSession, sandbox, tempDir} from './cli.js'

/** One host of a synced store: its own sandbox (store clone and key folder) and an agent session. */
export interface Host {
  sb: Sandbox
  session: string
  run: Sandbox['run']
}

export function head(h: Host): string {
  return git(h.sb.dir, 'rev-parse', 'HEAD').trim()
}

/** A tenant:acme memory as the host's session is served it, or undefined when it is not. */
export function readBody(h: Host, path: string): string | undefined {
  const r = h.run(['read', path, '--scope', 'tenant:acme', '--json'], {env: {ENGRAM_SESSION: h.session}})
  return r.code === 0 ? r.json.body : undefined
}

/**
 * The first host: a store with one curated memory (tenant:acme/plan.md, "renew in March"),
 * a bare repository as the remote, and the owner's first sync to it (returned, unchecked).
 */
export function firstHost(): {a: Host; remote: string; first: ReturnType<Sandbox['run']>} {
  const sb = sandbox()
  const session = initWithSession(sb)
  const a = {sb, session, run: sb.run}
  const remote = join(tempDir('engram-remote-'), 'memory.git')
  git(sb.dir, 'init', '-q', '--bare', remote)
  curate(a.sb, a.session, 'tenant:acme', 'plan.md', 'The plan is to renew in March.')
  return {a, remote, first: a.run(['sync', '--remote', remote, '--json'])}
}

/** Someone with push access to the remote (not the owner): a plain clone. */
export function pusherClone(from: Host, remote: string): string {
  const evil = join(tempDir(), 'evil')
  git(from.sb.dir, 'clone', '-q', remote, evil)
  return evil
}
