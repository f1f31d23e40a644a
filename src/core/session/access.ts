import {listScopes} from '../memory/curated.js'
import {refused} from '../store/errors.js'
import {formatScope, parseScope, printable} from '../store/scope.js'
import type {SessionRecord} from './sessions.js'
import type {EngramConfig} from '../store/config.js'
import type {Store} from '../store/store.js'

/**
 * Who may do what with which scope (STANDARD.md R7). A session reads org, its assigned
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

/**
 * The scopes this caller may see: one named scope (checked), or every scope the session
 * may read, or (the owner) every scope in the store. The one answer every command uses
 * to decide what a session's output may contain.
 */
export function visibleScopes(store: Store, session: SessionRecord | undefined, scope?: string): string[] {
  if (scope !== undefined) return [assertCanRead(session, scope)]
  return session ? readableScopes(session) : listScopes(store)
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
