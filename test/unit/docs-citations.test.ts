/**
 * The project's documents point at each other, and its code cites them by section name
 * (`README "The write path"`, `docs/vote-rounds.md "Round sixteen"`). A section renamed or
 * moved leaves those pointing nowhere; this test reads every one.
 */
import {execFileSync} from 'node:child_process'
import {existsSync, readFileSync} from 'node:fs'
import {dirname, join, normalize} from 'node:path'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'

const root = fileURLToPath(new URL('../..', import.meta.url))
const read = (file: string) => readFileSync(join(root, file), 'utf8')

/** A markdown file's headings, outside code fences. */
function headings(file: string): string[] {
  const out: string[] = []
  let code = false
  for (const line of read(file).split('\n')) {
    if (line.startsWith('```')) code = !code
    const m = !code && /^#{1,6} (.*)$/.exec(line)
    if (m) out.push(m[1].trim())
  }
  return out
}

/** GitHub's anchor for a heading: lower case, punctuation dropped but hyphens, spaces to hyphens. */
const anchor = (heading: string) => heading.toLowerCase().replace(/[^\p{L}\p{N}_\- ]/gu, '').replaceAll(' ', '-')

/** A cited name matches a heading that is it, or begins with it before ":", "," or a space. */
const names = (heading: string, name: string) => heading === name || [':', ',', ' '].some((c) => heading.startsWith(name + c))

const tracked = execFileSync('git', ['ls-files'], {cwd: root, encoding: 'utf8'}).split('\n').filter(Boolean)
const documents = tracked.filter((f) => f.endsWith('.md') && !f.startsWith('corpus/holdout') && existsSync(join(root, f)))

describe('links between the documents', () => {
  it('every relative link names a file that exists, and a heading of it that exists', () => {
    const broken: string[] = []
    for (const file of documents) {
      let code = false
      for (const line of read(file).split('\n')) {
        if (line.startsWith('```')) code = !code
        if (code) continue
        for (const m of line.matchAll(/\]\(([^)\s]+)\)/g)) {
          const url = m[1]
          if (/^[a-z]+:/i.test(url)) continue
          const [target, hash] = url.split('#', 2)
          const path = target === '' ? file : normalize(join(dirname(file), target))
          if (!existsSync(join(root, path))) broken.push(`${file}: ${url} (no such file)`)
          else if (hash !== undefined && path.endsWith('.md') && !headings(path).map(anchor).includes(hash)) broken.push(`${file}: ${url} (no such heading)`)
        }
      }
    }
    expect(broken).toEqual([])
  })

  it('reads GitHub\'s anchors as GitHub makes them', () => {
    expect(anchor("Round twenty-seven: the learned model's bars, and a twenty-first sealed set")).toBe('round-twenty-seven-the-learned-models-bars-and-a-twenty-first-sealed-set')
    expect(anchor('Sync: many hosts, one memory')).toBe('sync-many-hosts-one-memory')
  })
})

describe('citations of a section in code and documents', () => {
  const cited = {README: headings('README.md'), 'docs/vote-rounds.md': headings('docs/vote-rounds.md')}
  // `README "Round` at a line's end, the name going on after a comment's marker, counts too
  const citation = /(README|docs\/vote-rounds\.md)(?:[ \t]*\n[ \t]*(?:\/\/|\*|#)?[ \t]*|[ \t]+)"([^"]{1,80}?)"/g
  // this file names the pattern itself ("…"), and is left out
  const self = 'test/unit/docs-citations.test.ts'
  const sources = tracked.filter((f) => /\.(?:ts|mjs|cjs|js|md|sh)$/.test(f) && f !== self && !f.startsWith('corpus/holdout') && existsSync(join(root, f)))

  it('every README "…" and docs/vote-rounds.md "…" names a section of that file', () => {
    const stale: string[] = []
    let seen = 0
    for (const file of sources) {
      for (const m of read(file).matchAll(citation)) {
        const name = m[2].replace(/(?:\s|\/\/|\*(?!\w))+/g, ' ').trim()
        seen++
        if (!cited[m[1] as keyof typeof cited].some((h) => names(h, name))) stale.push(`${file}: ${m[1]} "${name}"`)
      }
    }
    expect(stale).toEqual([])
    // the pattern finds the citations at all: the code cites both files many times
    expect(seen).toBeGreaterThan(150)
  })

  it('a section that moved is not cited where it was', () => {
    expect(cited.README.some((h) => names(h, 'Round sixteen'))).toBe(false)
    expect(cited['docs/vote-rounds.md'].some((h) => names(h, 'Round sixteen'))).toBe(true)
  })
})
