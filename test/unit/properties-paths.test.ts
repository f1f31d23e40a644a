import {mkdirSync, realpathSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join, posix} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'

import {isEngramError} from '../../src/core/store/errors.js'
import {memoryRelPath, validateMemoryPath} from '../../src/core/store/paths.js'
import {formatScope, parseScope, scopeDir, scopeOfPath} from '../../src/core/store/scope.js'
import type {Store} from '../../src/core/store/store.js'
import {fc, runs} from './properties-seed.js'

/** The typed error `f` throws, or undefined when it returns. */
function typedError(f: () => unknown, code: string): boolean {
  try {
    f()
    return false
  } catch (error) {
    if (!isEngramError(error)) throw error
    expect(error.code).toBe(code)
    expect(error.message).not.toMatch(/[\u0000-\u001f\u007f]/)
    return true
  }
}

const segmentChars = fc.constantFrom(...'ab.-_ /\\:\u0000\n\u007f\u00e9\u2028\uff0f%'.split(''), '..', '.md', 'C:', '~')
const pathLike = fc.oneof(
  fc.string({unit: segmentChars, maxLength: 30}),
  fc.string({unit: 'binary', maxLength: 40}),
  fc.array(fc.constantFrom('a', 'b', '..', '.', '', '.git', 'notes', 'x.md', '..md', 'a\u0000', '%2e%2e', '\u2025', 'C:'), {maxLength: 6}).map((s) => s.join('/') + '.md'),
  fc.string({minLength: 250, maxLength: 300}).map((s) => `${s}.md`),
)
const scopeText = fc.oneof(
  fc.constantFrom('org', 'project:web', 'tenant:acme', 'run:s1', 'tenant:..', 'tenant:a..b', 'tenant:.a', 'tenant:', 'tenant:A', 'Tenant:a', 'org:x', 'tenant:a/b', 'run:a\u0000'),
  fc.tuple(fc.constantFrom('project', 'tenant', 'run', 'org', 'x'), fc.string({unit: fc.constantFrom(...'az09._-/\\:A \u0000'.split(''), '..'), maxLength: 70})).map(([k, n]) => `${k}:${n}`),
  fc.string({unit: 'binary', maxLength: 30}),
)

describe('properties: the scope parser', () => {
  it('an accepted scope round-trips, and its folder is a plain relative path of the right shape', () => {
    fc.assert(
      fc.property(scopeText, (t) => {
        if (typedError(() => parseScope(t), 'bad-input')) return
        const s = parseScope(t)
        expect(formatScope(s)).toBe(t)
        const dir = scopeDir(s)
        expect(posix.normalize(dir)).toBe(dir)
        expect(dir.split('/')).not.toContain('..')
        expect(dir.startsWith('/') || dir.includes('\u0000') || dir.includes('\\')).toBe(false)
        expect(dir.split('/').length).toBe(s.kind === 'org' ? 1 : 2)
        expect(scopeOfPath(`${dir}/x.md`)).toEqual({scope: t, path: 'x.md'})
      }),
      {numRuns: runs(1000)},
    )
  })
})

describe('properties: the memory path parser', () => {
  it('an accepted path stays inside its scope folder: relative, no "..", no NUL, normalised; a refused one is bad-input', () => {
    fc.assert(
      fc.property(pathLike, fc.constantFrom('org', 'tenant:acme', 'project:web'), (p, scope) => {
        if (typedError(() => validateMemoryPath(p), 'bad-input')) return
        const v = validateMemoryPath(p)
        const rel = `${scopeDir(scope)}/${v}`
        expect(posix.normalize(rel)).toBe(rel)
        expect(rel.startsWith(`${scopeDir(scope)}/`)).toBe(true)
        expect(v.split('/')).not.toContain('..')
        expect(v.startsWith('/') || /[\u0000-\u001f\u007f\\]/.test(v)).toBe(false)
        expect(v.endsWith('.md')).toBe(true)
        expect(Buffer.byteLength(v)).toBeLessThanOrEqual(255)
        expect(scopeOfPath(rel)).toEqual({scope, path: v})
      }),
      {numRuns: runs(1500)},
    )
  })

  // real folders and real links, planted at random places on the way to the memory
  const root = realpathSync(tmpdirMk())
  const outside = join(root, 'outside')
  mkdirSync(outside)
  afterAll(() => rmSync(root, {recursive: true, force: true}))
  let n = 0
  it('no symlink on the way from the store root to an accepted path: a planted link is refused (typed), never followed', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('a', 'b', 'notes'), {minLength: 0, maxLength: 3}),
        fc.nat(4),
        fc.constantFrom('dir', 'file'),
        (segs, linkAt, target) => {
          const storeDir = join(root, `s${n++}`)
          const store = {root: storeDir, abs: (p: string) => join(storeDir, p)} as unknown as Store
          const rel = ['tenant', 'acme', ...segs, 'x.md']
          // everything before the link exists; the link replaces the component at linkAt
          const at = Math.min(linkAt, rel.length - 1)
          mkdirSync(join(storeDir, ...rel.slice(0, at)), {recursive: true})
          const tgt = target === 'dir' ? outside : join(outside, 'f.md')
          if (target === 'file') writeFileSync(tgt, 'x')
          symlinkSync(tgt, join(storeDir, ...rel.slice(0, at + 1)))
          expect(typedError(() => memoryRelPath(store, 'tenant:acme', [...segs, 'x.md'].join('/')), 'refused')).toBe(true)
        },
      ),
      {numRuns: runs(60)},
    )
  })
})

function tmpdirMk(): string {
  const d = join(tmpdir(), `engram-prop-${process.pid}-${Date.now()}`)
  mkdirSync(d)
  return d
}
