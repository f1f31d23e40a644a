import {refused} from './errors.js'
import {formatScope, parseScope, printable} from './scope.js'
import type {SessionRecord} from './sessions.js'
import type {EngramConfig} from './config.js'

/**
 * Who may do what with which scope (DESIGN.md §2–3). A session reads org, its assigned
 * scope, the project scopes it was given at start, and its own run: scope. No session
 * means the owner's view, which reads everything.
 */
export function readableScopes(session: SessionRecord): string[] {
  return [...new Set(['org', session.assigned, ...session.reads, `run:${session.id}`])]
}

export function canRead(session: SessionRecord | undefined, scope: string): boolean {
  if (!session) return true
  return readableScopes(session).includes(scope)
}

/** Refuse with the same message whether or not the scope exists: no existence oracle. */
export function assertCanRead(session: SessionRecord | undefined, scopeText: string): string {
  const scope = formatScope(parseScope(scopeText))
  if (!canRead(session, scope)) {
    throw refused(`Session ${session!.id} may not read scope ${printable(scope)}.`, `it may read: ${readableScopes(session!).join(', ')}`)
  }
  return scope
}

export type WriteRoute = 'direct' | 'proposal'

/**
 * Where an agent write goes: its own run: scope directly; its assigned scope as a
 * proposal; anything else (org, read-only scopes, other tenants, other runs) is refused.
 */
export function writeRoute(session: SessionRecord, scope: string, config: EngramConfig): WriteRoute {
  if (scope === `run:${session.id}`) return 'direct'
  if (config.read_only.includes(scope)) {
    throw refused(`Scope ${scope} is read-only for agents.`, 'ask the owner to add it, or write to your own run: scope')
  }
  if (scope === session.assigned) return 'proposal'
  throw refused(`Session ${session.id} may not write to scope ${printable(scope)}.`, `it may write to run:${session.id} and propose to ${session.assigned}`)
}
