import {describe, expect, it} from 'vitest'
import {cpuMs} from '../helpers/cpu.js'

import {redact} from '../../src/core/write/redact/index.js'
import {fc, runs} from './properties-seed.js'

// Secrets are generated from their alphabets, never pasted (scanners must not see a leak).
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'
const LOWER = 'abcdefghijklmnopqrstuvwxyz'
const DIGITS = '0123456789'
const ALNUM = UPPER + LOWER + DIGITS
const B64URL = ALNUM + '-_'
const HEX = '0123456789abcdef'

/** n characters of `alphabet`, with a digit, a capital and a small letter where the alphabet has them (validators want them). */
const body = (alphabet: string, n: number) =>
  fc.string({unit: fc.constantFrom(...alphabet.split('')), minLength: n, maxLength: n}).map((s) => {
    const force = [DIGITS, UPPER, LOWER].map((a) => [...a].find((c) => alphabet.includes(c))).filter(Boolean).join('')
    return force + s.slice(force.length)
  })
const b64 = (s: string) => Buffer.from(s).toString('base64url')

/** A secret of a known shape: the text planted, and a random part that must never survive. */
interface Planted {
  secret: string
  random: string
}
const shape = (arb: fc.Arbitrary<string>, make: (r: string) => string): fc.Arbitrary<Planted> => arb.map((r) => ({secret: make(r), random: r}))
const secret: fc.Arbitrary<Planted> = fc.oneof(
  shape(body(ALNUM, 36), (r) => `ghp_${r}`),
  shape(body(ALNUM, 36), (r) => `gho_${r}`),
  shape(fc.tuple(body(ALNUM, 22), body(ALNUM, 59)).map(([a, b]) => `${a}_${b}`), (r) => `github_pat_${r}`),
  shape(body(B64URL, 20), (r) => `glpat-${r}`),
  shape(body(ALNUM, 24), (r) => `xoxb-123456789012-1234567890123-${r}`),
  shape(body(ALNUM, 24), (r) => `sk_live_${r}`),
  shape(body(ALNUM, 32), (r) => `whsec_${r}`),
  shape(body(B64URL, 40), (r) => `sk-ant-api03-${r}`),
  shape(body(B64URL, 40), (r) => `sk-proj-${r}`),
  shape(body(ALNUM, 36), (r) => `npm_${r}`),
  shape(body('ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', 16), (r) => `AKIA${r}`),
  shape(body(B64URL, 35), (r) => `AIza${r}`),
  shape(body(B64URL, 28), (r) => `GOCSPX-${r}`),
  shape(body(ALNUM, 34), (r) => `hf_${r}`),
  shape(body(ALNUM, 40), (r) => `lin_api_${r}`),
  shape(body(HEX, 64), (r) => `dop_v1_${r}`),
  shape(body('abcdef0123456789', 32), (r) => `shpat_${r}`),
  shape(fc.tuple(body(B64URL, 22), body(B64URL, 43)).map(([a, b]) => `${a}.${b}`), (r) => `SG.${r}`),
  shape(body(B64URL, 43), (r) => `${b64('{"alg":"HS256","typ":"JWT"}')}.${b64('{"sub":"1234567890"}')}.${r}`),
  shape(body('QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L', 58), (r) => `AGE-SECRET-KEY-1${r}`),
  shape(body(ALNUM + '+/', 64), (r) => `-----BEGIN RSA PRIVATE KEY-----\n${r}\n${r.slice(0, 20)}==\n-----END RSA PRIVATE KEY-----`),
)

/** The wrappings a secret arrives in. */
const WRAPS: Record<string, (s: string) => string> = {
  bare: (s) => s,
  fence: (s) => '```\n' + s + '\n```',
  fenceShell: (s) => '```bash\nexport SOME_VAR=' + s + '\n```',
  yamlPlain: (s) => `value: ${s}`,
  yamlDouble: (s) => `value: "${s}"`,
  yamlSingle: (s) => `value: '${s}'`,
  yamlList: (s) => `items:\n  - ${s}\n  - other`,
  yamlFlow: (s) => `items: [${s}, other]`,
  yamlFolded: (s) => `note: >\n  ${s}\n`,
  urlQuery: (s) => `https://example.com/cb?state=xyz&code=${s}&x=1`,
  urlQueryEncoded: (s) => `https://example.com/cb?next=${encodeURIComponent(`https://other.example/?k=${s}`)}`,
  urlUserinfo: (s) => `https://deploy:${s}@git.example.com/repo.git`,
  urlPath: (s) => `https://example.com/hooks/${s}/run`,
  jsonValue: (s) => JSON.stringify({note: 'x', value: s}),
  jsonEscapes: (s) => JSON.stringify({note: `said "use ${s}" \\ then\ttab`}),
  jsonNewlineBefore: (s) => JSON.stringify({note: `first line\n${s}\nlast`}),
  quotedLineBreak: (s) => `"first line\n${s}\nlast line"`,
  singleQuotedLineBreak: (s) => `'\n${s}\n'`,
  mdLinkText: (s) => `[${s}](https://example.com)`,
  mdLinkTarget: (s) => `[docs](https://example.com/?t=${s})`,
  mdAutolink: (s) => `<https://example.com/?t=${s}>`,
  htmlAttr: (s) => `<a href="https://example.com/?k=${s}">link</a>`,
  htmlValue: (s) => `<input type="hidden" value="${s}">`,
  htmlSingle: (s) => `<meta content='${s}'/>`,
  htmlUnquoted: (s) => `<div data-x=${s}>`,
  htmlEntity: (s) => `&quot;${s}&quot;`,
  parens: (s) => `(${s})`,
  sentence: (s) => `Use ${s}.`,
  comma: (s) => `a,${s},b`,
  semicolons: (s) => `;${s};`,
  stars: (s) => `**${s}**`,
  backticks: (s) => `\`${s}\``,
  guillemets: (s) => `«${s}»`,
  pipes: (s) => `| key | ${s} |`,
  colon: (s) => `${s}:`,
  equals: (s) => `=${s}`,
  tilde: (s) => `~${s}~`,
  quote: (s) => `> ${s}`,
  comment: (s) => `// ${s}`,
  shell: (s) => `curl -H "X-Api: ${s}" https://api.example.com`,
  yamlLiteral: (s) => `note: |\n  ${s}\n  more`,
  urlEncodedValue: (s) => `https://example.com/?v=${encodeURIComponent(s)}`,
  jsonPem: (s) => JSON.stringify({key: s}),
  splitInQuotes: (s) => `"${s.slice(0, Math.ceil(s.length / 2))}\n${s.slice(Math.ceil(s.length / 2))}"`,
  jsonSplit: (s) => JSON.stringify({note: `${s.slice(0, Math.ceil(s.length / 2))}\n${s.slice(Math.ceil(s.length / 2))}`}),
  htmlEscaped: (s) => `<p title="a&amp;b">${s}</p>`,
  table: (s) => `| name | value |\n|---|---|\n| token | ${s} |`,
}
const wrap = fc.constantFrom(...Object.keys(WRAPS))
const before = fc.constantFrom('', 'note ', 'See:\n', '\n\n', '- ', '# heading\n')
const after = fc.constantFrom('', ' note', '\nSee:', '\n\n', ' -', '\n# heading')

describe('properties: the redactor', () => {
  it('no planted secret of a known shape survives any wrapping', () => {
    fc.assert(
      fc.property(secret, wrap, before, after, ({secret, random}, w, b, a) => {
        // known gap (README "Redaction"): a token with dots (a JWT, SendGrid's) is not
        // followed across a line break
        fc.pre(!(/split/i.test(w) && secret.includes('.')))
        const text = b + WRAPS[w](secret) + a
        const out = redact(text).text
        expect(out).not.toContain(secret)
        // no long piece of the random part either (a half-redacted token still leaks)
        for (let i = 0; i + 12 <= random.length; i += 6) expect(out).not.toContain(random.slice(i, i + 12))
      }),
      {numRuns: runs(1500)},
    )
  })

  const anyText = fc.oneof(
    fc.string({maxLength: 200}),
    fc.string({unit: 'binary', maxLength: 200}),
    fc.tuple(secret, wrap, fc.string({maxLength: 40}), fc.string({maxLength: 40})).map(([s, w, a, b]) => `${a} ${WRAPS[w](s.secret)} ${b}`),
    fc.array(fc.constantFrom('password: ', 'token=', '[REDACTED:x]', '[REDACTED:', 'ghp_', 'sk-', '\n', ' ', '%41', 'QUJD', 'eyJ', '.', 'a1B2', '"', 'https://u:', '@h', 'PIN ', 'p\u0430ssword is ', '\u0430', '\uff50\uff41\uff53\uff53='), {maxLength: 40}).map((a) => a.join('')),
  )

  // look-alike letters for the Latin ones of a secret's name (Cyrillic, Greek, fullwidth)
  const LOOKALIKE: Record<string, string[]> = {a: ['\u0430', '\u03b1', '\uff41'], o: ['\u043e', '\u03bf', '\uff4f', '\u0585'], s: ['\u0455', '\uff53'], e: ['\u0435', '\u03b5'], p: ['\u0440', '\u03c1'], k: ['\u043a', '\u03ba'], t: ['\u0442', '\u03c4'], c: ['\u0441'], w: ['\u051d'], d: ['\u0501']}
  // and for every letter: mathematical bold and sans-serif, circled, with a combining low line or stroke
  const ANY_LETTER = [
    (ch: string) => String.fromCodePoint(0x1d41a + ch.charCodeAt(0) - 97),
    (ch: string) => String.fromCodePoint(0x1d5ba + ch.charCodeAt(0) - 97),
    (ch: string) => String.fromCodePoint(0x24d0 + ch.charCodeAt(0) - 97),
    (ch: string) => `${ch}\u0332`,
    (ch: string) => `${ch}\u0336`,
  ]
  const disguised = (name: string) =>
    fc.array(fc.nat(), {minLength: name.length, maxLength: name.length}).map((picks) =>
      [...name]
        .map((ch, i) =>
          picks[i] % 3 === 0 && LOOKALIKE[ch]
            ? LOOKALIKE[ch][picks[i] % LOOKALIKE[ch].length]
            : picks[i] % 3 === 1
              ? ANY_LETTER[picks[i] % ANY_LETTER.length](ch)
              : ch,
        )
        .join(''))
  const named = fc.oneof(
    fc.tuple(disguised('password'), body(ALNUM, 14)).map(([n, v]) => ({text: `The wifi ${n} is ${v} for guests.`, value: v})),
    fc.tuple(disguised('password'), body(ALNUM, 14)).map(([n, v]) => ({text: `${n}=${v}`, value: v})),
    fc.tuple(disguised('secret'), body(ALNUM, 20)).map(([n, v]) => ({text: `client_${n}: ${v}`, value: v})),
    fc.tuple(disguised('token'), body(ALNUM, 24)).map(([n, v]) => ({text: `api ${n} = "${v}"`, value: v})),
  )

  it("a secret whose name is spelt with look-alike letters is redacted as if spelt plainly, and nothing else in the text moves", () => {
    fc.assert(
      fc.property(named, before, after, ({text, value}, b, a) => {
        const plain = redact(b + text.normalize('NFKC').replace(/\p{M}/gu, '').replace(/[^\x00-\x7f]/g, (ch) => Object.keys(LOOKALIKE).find((k) => LOOKALIKE[k].includes(ch)) ?? ch) + a)
        fc.pre(!plain.text.includes(value))
        const out = redact(b + text + a)
        expect(out.text).not.toContain(value)
        expect(out.redactions).toEqual(plain.redactions)
        // the marker stands where the value stood: the text around it is the text as written
        const at = (b + text + a).indexOf(value)
        expect(out.text.startsWith((b + text + a).slice(0, at))).toBe(true)
        expect(out.text.endsWith((b + text + a).slice(at + value.length))).toBe(true)
      }),
      {numRuns: runs(800)},
    )
  })

  it('is idempotent: redacting redacted text changes nothing and counts nothing', () => {
    fc.assert(
      fc.property(anyText, (t) => {
        const once = redact(t)
        const twice = redact(once.text)
        expect(twice.text).toBe(once.text)
        expect(twice.redactions).toEqual({})
      }),
      {numRuns: runs(600)},
    )
  })

  it('is idempotent on secrets glued to each other: a second pass finds what a marker freed', () => {
    fc.assert(
      fc.property(fc.array(secret, {minLength: 2, maxLength: 4}), fc.constantFrom('', '=', ':', '"'), (glued, tail) => {
        const once = redact(glued.map((g) => g.secret).join('') + tail)
        const twice = redact(once.text)
        expect(twice.text).toBe(once.text)
        expect(twice.redactions).toEqual({})
      }),
      {numRuns: runs(600)},
    )
  })

  it('output is bounded: at most one marker per redaction longer than the input', () => {
    fc.assert(
      fc.property(anyText, (t) => {
        const r = redact(t)
        const n = Object.values(r.redactions).reduce((a, b) => a + b, 0)
        // a marker is `[REDACTED:<kind>]`, a kind at most 64 characters
        expect(r.text.length).toBeLessThanOrEqual(t.length + n * 75)
        expect(n).toBeLessThanOrEqual(t.length)
      }),
      {numRuns: runs(600)},
    )
  })

  // Adversarial units repeated to 64 KiB: prefixes without bodies, openers without closers,
  // near-miss encodings. Each must finish well inside the bound (backtracking would not).
  const UNITS = ['ghp_ ', 'sk- ', 'ghp_1\n', 'password: ', '-----BEGIN PRIVATE KEY-----\n', 'QUJD', '%41', 'eyJabcdefg.', 'machine a.b login x password ', 'https://a:', 'the password for the wifi of the house is ', 'token_token_token=', '[REDACTED:', 'a'.repeat(31) + ' ', 'AKIA', '"x": "', '\\\n']
  it('finishes in bounded time on adversarial input', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...UNITS), {minLength: 1, maxLength: 3}), fc.string({maxLength: 8}), (units, noise) => {
        const unit = units.join('') + noise
        const text = unit.repeat(Math.ceil((64 * 1024) / unit.length)).slice(0, 64 * 1024)
        expect(cpuMs(() => redact(text))).toBeLessThan(8000)
      }),
      {numRuns: runs(6)},
    )
  })

  it('a 256 KiB random string is redacted within the bound', () => {
    fc.assert(
      fc.property(fc.string({unit: 'binary-ascii', minLength: 256 * 1024, maxLength: 256 * 1024}), (text) => {
        expect(cpuMs(() => redact(text))).toBeLessThan(8000)
      }),
      {numRuns: runs(2)},
    )
  })
})

describe('properties: shrunk counterexamples (redactor)', () => {
  // a JSON or code string's escape ends in a letter or digit, which glued the token to it
  const gl = `glpat-0Aa${'A'.repeat(17)}`
  const jwt = `${b64('{"alg":"HS256","typ":"JWT"}')}.${b64('{"sub":"1234567890"}')}.0Aa${'A'.repeat(40)}`
  it.each([
    ['a token after \\n', JSON.stringify({note: `first line\n${gl}\nlast`}), gl],
    ['a token after \\t', String.raw`"a\t${gl}"`, gl],
    ['a token after \\u0022', String.raw`"\u0022${gl}\u0022"`, gl],
    ['a JWT after \\n', JSON.stringify({note: `first line\n${jwt}\nlast`}), jwt.slice(-43)],
    ['a token split by an escaped line break', JSON.stringify({note: `GOCSPX-0Aa${'A'.repeat(11)}\n${'A'.repeat(14)}`}), 'A'.repeat(12)],
  ])('%s is redacted', (_name, text, leaked) => {
    expect(redact(text).text).not.toContain(leaked)
  })
})
