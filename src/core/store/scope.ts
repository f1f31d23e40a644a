import {badInput} from './errors.js'
import {redactText} from '../write/redact/index.js'

export type ScopeKind = 'org' | 'project' | 'tenant' | 'run'
export interface Scope {
  kind: ScopeKind
  /** project name, tenant id or session id; empty for org */
  name: string
}

export const SCOPE_NAME_RE = /^[a-z0-9][a-z0-9._-]{0,62}$/

const EXAMPLE = 'use org, project:<name>, tenant:<id> or run:<session>, e.g. tenant:acme'

export function parseScope(text: string): Scope {
  if (typeof text !== 'string' || text.length === 0) throw badInput('A scope is required.', EXAMPLE)
  if (text === 'org') return {kind: 'org', name: ''}
  const m = /^(project|tenant|run):(.*)$/.exec(text)
  if (!m) throw badInput(`Unknown scope "${printable(text)}".`, EXAMPLE)
  const name = m[2]
  if (!SCOPE_NAME_RE.test(name) || name.includes('..')) {
    throw badInput(
      `Bad scope name "${printable(name)}" in "${printable(text)}".`,
      'names are lowercase: a letter or digit, then up to 62 of [a-z0-9._-]',
    )
  }
  return {kind: m[1] as ScopeKind, name}
}

export function formatScope(scope: Scope): string {
  return scope.kind === 'org' ? 'org' : `${scope.kind}:${scope.name}`
}

/** The folder (relative to the store root, POSIX separators) that holds a scope's memory. */
export function scopeDir(scope: Scope | string): string {
  const s = typeof scope === 'string' ? parseScope(scope) : scope
  return s.kind === 'org' ? 'org' : `${s.kind}/${s.name}`
}

/** The scope whose folder contains a store-relative path, or undefined. */
export function scopeOfPath(relPath: string): {scope: string; path: string} | undefined {
  const parts = relPath.split('/')
  if (parts[0] === 'org' && parts.length >= 2) return {scope: 'org', path: parts.slice(1).join('/')}
  if ((parts[0] === 'project' || parts[0] === 'tenant' || parts[0] === 'run') && parts.length >= 3) {
    if (!SCOPE_NAME_RE.test(parts[1])) return undefined
    return {scope: `${parts[0]}:${parts[1]}`, path: parts.slice(2).join('/')}
  }
  return undefined
}

/**
 * Shorten and neutralise user text for an error message (no control characters, bounded).
 * Secrets are redacted in the whole text first: clipping first would leave, say, 34 of a
 * token's 40 characters, which no rule recognises (STANDARD.md R9).
 */
export function printable(text: string, max = 80): string {
  // eslint-disable-next-line no-control-regex
  const clean = redactText(String(text)).replace(/[\u0000-\u001f\u007f-\u009f]/g, '?')
  return clean.length > max ? `${clean.slice(0, max)}…` : clean
}

/**
 * The project: scope a folder's name stands for when no scope is given (adopt, hooks):
 * lower-cased, anything outside the scope grammar turned into `-`, clipped to 63.
 */
export function projectScopeFor(folderName: string): string {
  const slug = folderName.toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/\.\.+/g, '.').replace(/^[^a-z0-9]+/, '').slice(0, 63).replace(/[-.]+$/, '')
  return `project:${SCOPE_NAME_RE.test(slug) ? slug : 'project'}`
}
