import type MiniSearch from 'minisearch'

/** One term's postings in MiniSearch: field id → document short id → term frequency. */
export type Postings = Map<number, Map<number, number>>

/**
 * The fields of a MiniSearch index (7.x) that engram reads or fills in directly, in one
 * place: the ranking (rank.ts), the file writer (persist.ts), the postings file and the
 * neighbour lookup's partial index (index.ts). package.json pins minisearch to 7.x; the
 * property tests of rank.ts and persist.ts compare against MiniSearch's own `search` and
 * `JSON.stringify`, so a change of these internals fails them.
 */
export interface MiniInternals {
  _documentCount: number
  _nextId: number
  _documentIds: Map<number, string>
  _idToShortId: Map<string, number>
  _fieldIds: Record<string, number>
  _fieldLength: Map<number, number[]>
  _avgFieldLength: number[]
  _storedFields: Map<number, unknown>
  _dirtCount: number
  _options: {fields: string[]}
  _index: {
    readonly size: number
    get(term: string): Postings | undefined
    set(term: string, data: Postings): void
    atPrefix(prefix: string): Iterable<[string, Postings]>
    fuzzyGet(term: string, distance: number): Map<string, [Postings, number]>
    [Symbol.iterator](): Iterator<[string, Postings]>
  }
}

export function internals<T>(ms: MiniSearch<T>): MiniInternals {
  return ms as unknown as MiniInternals
}
