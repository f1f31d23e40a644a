/**
 * The one JSON envelope of every list command (README "JSON output"): the list is always
 * `items`, `total` counts what matched before `--limit`, and anything else is a fact about
 * the list as a whole, beside it (`broken`, `skipped`, `checked`, `root_not_pinned`…). The
 * same keys whether the command succeeds or fails (`verify` adds `error` when it fails).
 */
export interface ListEnvelope<T> {
  items: T[]
  total: number
  [fact: string]: unknown
}

export function listEnvelope<T>(all: T[], facts: Record<string, unknown> = {}, limit?: number): ListEnvelope<T> {
  return {items: limit === undefined ? all : all.slice(0, limit), total: all.length, ...facts}
}
