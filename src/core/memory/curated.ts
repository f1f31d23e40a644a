import {lstatSync, readdirSync} from 'node:fs'

import {gitBlobHash} from './hash.js'
import {MemoryFile, parseMemory} from './memory.js'
import {memoryRelPath} from '../store/paths.js'
import {SCOPE_NAME_RE, scopeDir} from '../store/scope.js'
import type {Store} from '../store/store.js'

export interface StoredMemory {
  scope: string
  /** scope-relative path */
  path: string
  /** store-relative path */
  rel: string
  text: string
  blob: string
  memory: MemoryFile
}

/** The memory file at scope/path as it is on disk now, or undefined. Parse errors name the file. */
export function readStored(store: Store, scope: string, path: string): StoredMemory | undefined {
  const rel = memoryRelPath(store, scope, path)
  const text = store.readText(rel)
  if (text === undefined) return undefined
  return {scope, path, rel, text, blob: gitBlobHash(text), memory: parseMemory(text, rel)}
}

/** Scope-relative paths of every .md file in a scope folder (symlinks and hidden entries skipped). */
export function listScopeFiles(store: Store, scope: string): string[] {
  const base = scopeDir(scope)
  const out: string[] = []
  const walk = (rel: string) => {
    let names: string[]
    try {
      names = readdirSync(store.abs(rel))
    } catch {
      return
    }
    for (const n of names) {
      if (n.startsWith('.')) continue
      const child = `${rel}/${n}`
      const st = lstatSync(store.abs(child))
      if (st.isSymbolicLink()) continue
      if (st.isDirectory()) walk(child)
      else if (st.isFile() && n.endsWith('.md')) out.push(child.slice(base.length + 1))
    }
  }
  walk(base)
  return out.sort()
}

/**
 * Every scope that has a folder in the store (a real folder, never a link, under a valid
 * scope name), in order: org, project:…, tenant:…, run:…. The one listing of scope folders.
 */
export function listScopes(store: Store): string[] {
  const scopes: string[] = []
  try {
    if (lstatSync(store.abs('org')).isDirectory()) scopes.push('org')
  } catch {
    // no org folder yet
  }
  for (const kind of ['project', 'tenant', 'run']) {
    let names: string[] = []
    try {
      names = readdirSync(store.abs(kind))
    } catch {
      continue
    }
    for (const n of names.sort()) {
      if (SCOPE_NAME_RE.test(n) && !n.includes('..') && lstatSync(store.abs(`${kind}/${n}`)).isDirectory()) scopes.push(`${kind}:${n}`)
    }
  }
  return scopes
}
