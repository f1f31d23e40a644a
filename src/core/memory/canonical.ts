/**
 * One canonical serialisation of structured data, used for digests and signatures:
 * JSON with object keys sorted recursively, no whitespace, `undefined` dropped.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortDeep(value))
}

function sortDeep(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value
  if (value instanceof Date) return value.toISOString()
  if (Array.isArray(value)) return value.map((v) => (v === undefined ? null : sortDeep(v)))
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(value as Record<string, unknown>).sort()) {
    const v = (value as Record<string, unknown>)[key]
    // defineProperty: a "__proto__" key (JSON.parse makes one) stays a key; assigning it
    // would set the prototype and drop the key, so two different values would serialise alike
    if (v !== undefined) Object.defineProperty(out, key, {value: sortDeep(v), enumerable: true, writable: true, configurable: true})
  }
  return out
}
