import {readdirSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {CJK, features, fnv, modelText, structure, TOKEN} from '../../src/core/write/vote/learned.js'
import {fc, runs} from './properties-seed.js'

/**
 * The featuriser hashes n-grams without building their strings. It must give exactly the
 * buckets of the plain definition below (the hashes of the strings themselves), or the
 * committed weights would be read against other features than they were trained on.
 */
function plainFeatures(text: string, bits: number, version = 1): Uint32Array {
  const mask = (1 << bits) - 1
  const out = new Set<number>()
  const words = modelText(text).match(TOKEN) ?? []
  let prev = '<s>'
  for (const w of words) {
    out.add(fnv(w, 1) & mask)
    out.add(fnv(`${prev} ${w}`, 2) & mask)
    prev = w
    if (CJK.test(w)) {
      for (let i = 0; i < w.length; i++) {
        out.add(fnv(w[i], 3) & mask)
        if (i + 1 < w.length) out.add(fnv(w.slice(i, i + 2), 4) & mask)
      }
      continue
    }
    if (w.length < 3) continue
    const p = ` ${w} `
    for (let i = 0; i + 3 <= p.length; i++) out.add(fnv(p.slice(i, i + 3), 5) & mask)
    for (let i = 0; i + 5 <= p.length; i++) out.add(fnv(p.slice(i, i + 5), 6) & mask)
  }
  out.add(fnv(`${prev} </s>`, 2) & mask)
  for (const f of structure(words, version)) out.add(fnv(f, 7) & mask)
  return Uint32Array.from(out).sort()
}

function corpusTexts(): string[] {
  const out: string[] = []
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, {withFileTypes: true})) {
      const p = join(dir, e.name)
      if (e.isDirectory()) walk(p)
      else if (e.name.endsWith('.jsonl')) {
        for (const line of readFileSync(p, 'utf8').split('\n')) if (line.trim().startsWith('{')) out.push(String((JSON.parse(line) as {text?: unknown}).text ?? line))
      } else if (/\.(md|txt)$/.test(e.name)) out.push(readFileSync(p, 'utf8'))
    }
  }
  walk(join(__dirname, '..', '..', 'corpus'))
  return out
}

describe('the learned validator\'s features', () => {
  it('are the hashes of the n-gram strings, for any text', () => {
    const text = fc.oneof(fc.string({unit: 'grapheme', maxLength: 300}), fc.string({unit: 'binary', maxLength: 300}), fc.array(fc.constantFrom('ignore', 'your', 'the', '日本語のテキスト', 'ключ', ' ', '.', '\n', 'API_KEY', 'you'), {maxLength: 60}).map((a) => a.join(' ')))
    fc.assert(
      fc.property(text, fc.constantFrom(12, 16, 18, 20), (t, bits) => {
        expect(features(t, bits)).toEqual(plainFeatures(t, bits))
      }),
      {numRuns: runs(300)},
    )
  })

  it('are the hashes of the n-gram strings at every model size, small or large (a bit set sorts them up to 2^16 buckets, a sort above)', () => {
    // characters that case-fold or lower-case in surprising ways, and scripts the featuriser splits by character
    const odd = ['\u212a', '\u017f', '\u0130', '\u0131', '\u1c82', '\u1c81', 'ς', 'Σ', 'ａ', '\u200b', '\u00ad', 'ß']
    const text = fc.oneof(
      fc.string({unit: 'grapheme', maxLength: 300}),
      fc.string({unit: 'binary', maxLength: 300}),
      fc.array(fc.constantFrom('ignore', 'your', 'assistant', '日本語', '한국어', 'ひらがな', 'ключ', ' ', '.', '\n', 'you', ...odd), {maxLength: 60}).map((a) => a.join(' ')),
    )
    fc.assert(
      fc.property(text, fc.integer({min: 0, max: 22}), (t, bits) => {
        expect(features(t, bits)).toEqual(plainFeatures(t, bits))
      }),
      {numRuns: runs(400)},
    )
  })

  it('are the hashes of the n-gram strings under featuriser 2 too (the classes in more languages), for any text', () => {
    const words = ['asystenta', 'şifreleri', 'trợ', 'lý', 'mật', 'khẩu', '비서에게', '비밀번호를', '不要发送密码', 'المساعد', 'always', 'you', ' ', '.', '\n', 'gửi', 'kirim']
    const text = fc.oneof(fc.string({unit: 'grapheme', maxLength: 300}), fc.array(fc.constantFrom(...words), {maxLength: 60}).map((a) => a.join(' ')))
    fc.assert(
      fc.property(text, fc.constantFrom(12, 16, 17, 18), (t, bits) => {
        expect(features(t, bits, 2)).toEqual(plainFeatures(t, bits, 2))
      }),
      {numRuns: runs(300)},
    )
  })

  it('are the hashes of the n-gram strings for every text of the project corpus', () => {
    const texts = corpusTexts()
    expect(texts.length).toBeGreaterThan(50)
    for (const t of texts) expect(features(t, 18)).toEqual(plainFeatures(t, 18))
  })
})
