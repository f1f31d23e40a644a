import {execFileSync} from 'node:child_process'
import {cpuMs} from '../helpers/cpu.js'
import {existsSync, mkdtempSync, realpathSync, writeFileSync} from 'node:fs'
import {hostname, tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {canonicalJson} from '../../src/core/memory/canonical.js'
import {keyOfLine, parseConfig} from '../../src/core/store/config.js'
import {decodeContent, parseTags} from '../../src/core/store/content.js'
import {gitBlobHash} from '../../src/core/memory/hash.js'
import {withStoreLock} from '../../src/core/store/lock.js'
import {MemoryFile, loadYaml, normaliseBody, parseFrontmatter, parseMemory, serializeMemory} from '../../src/core/memory/memory.js'
import {validateMemoryPath} from '../../src/core/store/paths.js'
import {Proposal, parseProposal, proposalDigest, serializeProposal} from '../../src/core/review/proposal.js'
import {formatScope, parseScope, scopeDir, scopeOfPath} from '../../src/core/store/scope.js'
import {Store} from '../../src/core/store/store.js'

const memory: MemoryFile = {
  frontmatter: {
    id: 'm-abc', title: 'Acme renews', scope: 'tenant:acme', tags: ['billing'], author: 'claude-code', source_session: 's-12345678',
    origin: 'email', tainted: true, taint_reasons: ['origin: email'], created: '2026-01-01T00:00:00.000Z', updated: '2026-01-01T00:00:00.000Z',
    version: 1, proposal: 'p1234567', reviewed_by: null, digest: null, signature: null,
  },
  body: 'Acme renews in March.\n',
}

describe('scopes', () => {
  it('parses the four kinds and maps them to folders', () => {
    expect(parseScope('org')).toEqual({kind: 'org', name: ''})
    expect(scopeDir('tenant:acme')).toBe('tenant/acme')
    expect(scopeDir('project:web.app')).toBe('project/web.app')
    expect(formatScope(parseScope('run:s-1a2b'))).toBe('run:s-1a2b')
    expect(scopeOfPath('tenant/acme/a/b.md')).toEqual({scope: 'tenant:acme', path: 'a/b.md'})
  })
  it.each(['', 'ORG', 'tenant:', 'tenant:Acme', 'tenant:../x', 'tenant:a/b', 'team:x', 'tenant:-x', `tenant:${'a'.repeat(64)}`, 'tenant:a..b'])(
    'refuses %j',
    (s) => expect(() => parseScope(s)).toThrow(/scope/i),
  )
})

describe('memory paths', () => {
  it('accepts relative .md paths', () => {
    expect(validateMemoryPath('notes/deploy.md')).toBe('notes/deploy.md')
  })
  it.each(['../x.md', '/etc/x.md', 'a/../../b.md', 'a/./b.md', 'a//b.md', '.hidden.md', 'a\\b.md', 'C:x.md', 'x.txt', 'x\u0000.md', `${'a'.repeat(256)}.md`])(
    'refuses %j',
    (p) => expect(() => validateMemoryPath(p)).toThrow(),
  )
})

describe('memory files', () => {
  it('round-trips through the one canonical serialisation, byte for byte', () => {
    const text = serializeMemory(memory)
    expect(parseMemory(text, 'x')).toEqual(memory)
    expect(serializeMemory(parseMemory(text, 'x'))).toBe(text)
  })
  it('reads hand-written YAML frontmatter too, and names the file in errors', () => {
    const yaml = '---\nid: m-1\ntitle: t\nscope: org\nauthor: a\norigin: owner\ncreated: 2026-01-01T00:00:00Z\nupdated: 2026-01-01T00:00:00Z\n---\nbody'
    const m = parseMemory(yaml, 'org/x.md')
    expect(m.frontmatter.created).toBe('2026-01-01T00:00:00.000Z')
    expect(m.body).toBe('body\n')
    expect(() => parseMemory('---\nid: [unclosed\n---\nx', 'org/bad.md')).toThrow(/org\/bad\.md/)
    expect(() => parseMemory('no frontmatter', 'org/none.md')).toThrow(/org\/none\.md/)
    expect(() => parseMemory(yaml.replace('origin: owner', 'origin: telepathy'), 'org/o.md')).toThrow(/origin/)
  })
  it('reads YAML only: a language tag or a code-bearing YAML type makes the file broken (R18)', () => {
    const yaml = '\nid: m-1\ntitle: t\nscope: org\nauthor: a\norigin: owner\ncreated: c\nupdated: u\n---\nbody\n'
    let ran = false
    ;(globalThis as Record<string, unknown>).__engramRan = () => (ran = true)
    const js = '\n{id: globalThis.__engramRan()}\n---\nbody\n'
    for (const open of ['---js', '---javascript', '--- js', '---JS', '---js \r', '---coffee', '---cson', '---yaml', '--- yaml', '----']) {
      expect(() => parseMemory(`${open}${js}`, 'org/x.md'), open).toThrow(/org\/x\.md: frontmatter must open with a line of exactly "---"/)
      expect(() => parseMemory(`${open}${yaml}`, 'org/x.md'), open).toThrow(/language tag/)
    }
    expect(() => parseMemory('---\ntitle: !!js/function "function () { globalThis.__engramRan() }"' + yaml, 'org/x.md')).toThrow(/malformed frontmatter/)
    expect(ran).toBe(false)
    // the bare opening line, with trailing blanks or CRLF, still reads
    expect(parseMemory(`--- ${yaml}`, 'org/x.md').frontmatter.id).toBe('m-1')
    expect(parseMemory(`---${yaml.replace(/\n/g, '\r\n')}`, 'org/x.md').frontmatter.id).toBe('m-1')
    // a "__proto__" key stays a key
    const p = parseMemory(`---\n__proto__: {polluted: true}${yaml}`, 'org/x.md')
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect(Object.getPrototypeOf(p)).toBe(Object.prototype)
  })
  it('keeps a body that starts with its own frontmatter block as body text', () => {
    const m = {...memory, body: '---\nauthor: owner\n---\ntext\n'}
    const back = parseMemory(serializeMemory(m), 'x')
    expect(back.frontmatter.author).toBe('claude-code')
    expect(back.body).toBe('---\nauthor: owner\n---\ntext\n')
  })
  it('normalises line ends and trailing newlines', () => {
    expect(normaliseBody('a\r\nb\r\n\n\n')).toBe('a\nb\n')
    expect(normaliseBody('a')).toBe('a\n')
  })
})

describe('canonical JSON and blob ids', () => {
  it('sorts keys recursively and drops undefined', () => {
    expect(canonicalJson({b: 1, a: {d: [3, {f: 1, e: 2}], c: undefined}})).toBe('{"a":{"d":[3,{"e":2,"f":1}]},"b":1}')
  })
  it('computes git blob ids in-process', () => {
    const dir = mkdtempSync(join(tmpdir(), 'engram-blob-'))
    writeFileSync(join(dir, 'f'), 'hello\nworld\n')
    const viaGit = execFileSync('git', ['hash-object', join(dir, 'f')], {encoding: 'utf8'}).trim()
    expect(gitBlobHash('hello\nworld\n')).toBe(viaGit)
  })
})

describe('proposal digest', () => {
  const p: Proposal = {
    id: 'p1234567', status: 'pending', kind: 'write', operation: 'create', scope: 'tenant:acme', path: 'billing.md', base: null,
    author: 'claude-code', session: 's-12345678', origin: 'email', tainted: true, taint_reasons: ['origin: email'], created: '2026-01-01T00:00:00.000Z',
    flags: [{flag: 'tainted-source', reason: 'email'}], redactions: {}, votes: [], vote: {passed: true, dissent: false, summary: 'passed'},
    evidence: [], note: null, memory: memory.frontmatter, body: memory.body, removes: [], signature: null,
  }
  it('round-trips the proposal file', () => {
    expect(parseProposal(serializeProposal(p), 'x')).toEqual(p)
  })
  it('changes with everything the accept will write, and only with that', () => {
    const d = proposalDigest(p)
    expect(d).toMatch(/^[0-9a-f]{64}$/)
    const covered: Partial<Proposal>[] = [
      {id: 'p7654321'}, {scope: 'tenant:globex'}, {path: 'other.md'}, {operation: 'update'}, {base: 'a'.repeat(40)}, {body: 'Acme renews in May.\n'},
      {memory: {...p.memory, title: 'x'}}, {memory: {...p.memory, tags: []}}, {removes: [{path: 'old.md', base: 'b'.repeat(40)}]}, {memory: {...p.memory, tainted: false}}, {memory: {...p.memory, version: 2}},
    ]
    for (const change of covered) expect(proposalDigest({...p, ...change}), JSON.stringify(change)).not.toBe(d)
    // review metadata does not change what gets written
    expect(proposalDigest({...p, flags: [], votes: [], created: 'later', note: 'x'})).toBe(d)
  })
  it('refuses a proposal whose shown provenance disagrees with the memory it would write', () => {
    const text = serializeProposal(p).replace('author: "claude-code"', 'author: "owner"')
    expect(() => parseProposal(text, 'x.md')).toThrow(/does not match the reviewed change/)
  })
})

describe('config', () => {
  it('fills defaults and validates', () => {
    const c = parseConfig('vote:\n  veto: 0.9\n')
    expect(c.vote.veto).toBe(0.9)
    expect(c.vote.pass_ratio).toBeCloseTo(2 / 3)
    expect(c.read_only).toContain('org')
  })
  it.each([
    ['vote: [unclosed', /malformed/],
    ['- a list', /mapping/],
    ['vote:\n  veto: 2', /veto/],
    ['read_only: [team:x]', /scope/i],
    ['redaction:\n  extra: [{kind: x, pattern: "("}]', /regular expression/],
    ['version: 9', /version/],
    ['version: 1\nvote:\n  pas_ratio: 0.5\n', /line 3: unknown key `vote\.pas_ratio` — did you mean `pass_ratio`\?/],
    ['vote:\n  vetoo: 0.5\n', /line 2: unknown key `vote\.vetoo` — did you mean `veto`\?/],
    ['escalate_afterr: 3\n', /line 1: unknown key `escalate_afterr` — did you mean `escalate_after`\?/],
    ['vote:\n  burst:\n    per_sesion: 3\n', /line 3: unknown key `vote\.burst\.per_sesion` — did you mean `per_session`\?/],
    ['vote:\n  external:\n    - name: x\n      comand: /bin/true\n', /line 4: unknown key `vote\.external\[0\]\.comand` — did you mean `command`\?/],
    ['vote:\n  veto: "high"\n', /line 2: `vote\.veto` must be a number, not the string "high"/],
    ['vote:\n  external:\n    - command: /bin/true\n      args: 3\n', /`vote\.external\[0\]\.args` must be a list of strings/],
    ['vote:\n  external:\n    - command: classify\n', /must be an absolute path/],
    ['vote: 3\n', /`vote` must be a mapping/],
    ['zzz: 1\n', /unknown key `zzz`\./],
  ])('refuses %j', (text, re) => expect(() => parseConfig(text)).toThrow(re))
  it('refuses an external validator inside the store folder', () => {
    expect(() => parseConfig('vote:\n  external:\n    - command: /s/bin/x\n', {root: '/s'})).toThrow(/inside the store/)
    expect(parseConfig('vote:\n  external:\n    - command: /usr/bin/x\n', {root: '/s'}).vote.external[0].command).toBe('/usr/bin/x')
  })
  // an owner's copy of the weights with other bars (docs/vote-rounds.md "Round twenty-seven") is read on every write: never one the agent can rewrite
  it('refuses the learned validator\'s weights inside the store folder, or by a relative path', () => {
    expect(() => parseConfig('vote:\n  learned:\n    weights: /s/models/w.json\n', {root: '/s'})).toThrow(/inside the store/)
    expect(() => parseConfig('vote:\n  learned:\n    weights: /s/../s/w.json\n', {root: '/s'})).toThrow(/inside the store/)
    expect(() => parseConfig('vote:\n  learned:\n    weights: models/w.json\n', {root: '/s'})).toThrow(/must be an absolute path/)
    expect(parseConfig('vote:\n  learned:\n    weights: /opt/engram/w.json\n', {root: '/s'}).vote.learned.weights).toBe('/opt/engram/w.json')
  })
})

describe('YAML in store files and config.yml', () => {
  const bomb = (levels: number) => {
    const lines = [`l0: &l0 [${Array(9).fill('"lol"').join(',')}]`]
    for (let i = 1; i < levels; i++) lines.push(`l${i}: &l${i} [${Array(9).fill(`*l${i - 1}`).join(',')}]`)
    return lines.join('\n')
  }
  it('refuses anchors and aliases: an alias bomb is bad input, fast', () => {
    const started = process.cpuUsage()
    expect(() => loadYaml(bomb(9), 'x.md')).toThrow(/YAML aliases are not allowed in store files/)
    expect(() => parseFrontmatter(`---\n${bomb(9)}\n---\nbody\n`, 'p.md')).toThrow(/p\.md: malformed frontmatter \(YAML aliases are not allowed in store files\)/)
    expect(() => loadYaml('a: &x 1\nb: *x\n')).toThrow(/aliases are not allowed/)
    expect(() => loadYaml('a: &x {k: 1}\nb: {<<: *x}\n')).toThrow(/aliases are not allowed/)
    const cpu = process.cpuUsage(started)
    expect((cpu.user + cpu.system) / 1000).toBeLessThan(2000)
    expect(loadYaml('a: [1, 2]\nb: "&x *y"\n')).toEqual({a: [1, 2], b: '&x *y'})
  })
  it('refuses aliases in config.yml, and a config.yml over 64 KiB', () => {
    const big = `vote:\n  external: [&e {name: x, command: /bin/true, args: &big [${Array(50).fill('"s"').join(',')}]}, ${Array(50).fill('*e').join(', ')}]\n`
    expect(() => parseConfig(big)).toThrow(/config\.yml is malformed: YAML aliases are not allowed/)
    expect(() => parseConfig(`# ${'x'.repeat(70 * 1024)}\nversion: 1\n`)).toThrow(/larger than 64 KiB/)
  })
  it('finds config keys by line in linear time (a 1 MB line costs well under 100 ms)', () => {
    const line = `  a${' '.repeat(1024 * 1024)}b`
    for (const l of [line, `a${':'.repeat(1024 * 1024)}`, `"${'a'.repeat(1024 * 1024)}`, `a${' '.repeat(1024 * 1024)}`]) {
      expect(cpuMs(() => expect(keyOfLine(l)).toBeUndefined())).toBeLessThan(100)
    }
    expect(keyOfLine('  - - name: x')).toEqual({indent: 6, key: 'name'})
    expect(keyOfLine('"ve to"  : 1')).toEqual({indent: 0, key: 've to'})
    expect(keyOfLine("  'k':")).toEqual({indent: 2, key: 'k'})
    expect(keyOfLine('key   :\r')).toEqual({indent: 0, key: 'key'})
    expect(keyOfLine('a:b: c')).toBeUndefined()
    expect(keyOfLine('"a\': 1')).toBeUndefined()
    expect(keyOfLine('# c: 1')).toBeUndefined()
  })
  it('redacts a refused frontmatter opening line before clipping it', () => {
    const token = 'ghp_DNxril3RavGD5MfvJ7NScUykT8C8UBkkpdhi'
    let message = ''
    try {
      parseFrontmatter(`---js ${token}\nid: 1\n---\nx\n`, 'p.md')
    } catch (error) {
      message = (error as Error).message
    }
    expect(message).toMatch(/language tag/)
    for (let i = 0; i + 8 <= token.length; i++) expect(message).not.toContain(token.slice(i, i + 8))
  })
})

describe('content', () => {
  it('refuses binary, non-UTF-8, empty and oversized content', () => {
    expect(() => decodeContent(Buffer.from([0x61, 0, 0x62]), 100)).toThrow(/binary/)
    expect(() => decodeContent(Buffer.from([0xff, 0xfe]), 100)).toThrow(/UTF-8/)
    expect(() => decodeContent(' \n\t', 100)).toThrow(/empty/)
    expect(() => decodeContent('x'.repeat(101), 100)).toThrow(/limit/)
    expect(decodeContent('\ufeffhello', 100)).toBe('hello')
  })
  it('parses tags', () => {
    expect(parseTags('a, b,a')).toEqual(['a', 'b'])
    expect(() => parseTags('bad tag')).toThrow(/tag/)
  })
})

describe('store lock', () => {
  it('serialises holders and recovers a lock left by a dead process', async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'engram-lock-')))
    execFileSync('git', ['init', '-q'], {cwd: dir})
    execFileSync('mkdir', ['-p', join(dir, '.engram')])
    const store = new Store(dir, dir)
    const order: string[] = []
    await Promise.all([
      withStoreLock(store, async () => {
        order.push('a-in')
        await new Promise((r) => setTimeout(r, 100))
        order.push('a-out')
      }),
      new Promise((r) => setTimeout(r, 10)).then(() => withStoreLock(store, async () => void order.push('b'))),
    ])
    expect(order).toEqual(['a-in', 'a-out', 'b'])
    writeFileSync(join(dir, '.engram/lock'), JSON.stringify({pid: 999999, host: hostname(), time: '', token: 'x'}))
    writeFileSync(join(dir, '.git/index.lock'), '')
    const recovered: string[] = []
    await withStoreLock(store, async (wasStale) => void recovered.push(String(wasStale)), {onRecover: (m) => recovered.push(m)})
    expect(recovered.join(' ')).toMatch(/stale store lock/)
    expect(recovered).toContain('true')
    expect(existsSync(join(dir, '.git/index.lock'))).toBe(false)
    expect(existsSync(join(dir, '.engram/lock'))).toBe(false)
  })
  it('waits for a live holder and then reports a conflict', async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'engram-lock-')))
    execFileSync('git', ['init', '-q'], {cwd: dir})
    execFileSync('mkdir', ['-p', join(dir, '.engram')])
    writeFileSync(join(dir, '.engram/lock'), JSON.stringify({pid: process.pid, host: hostname(), time: '', token: 'other'}))
    await expect(withStoreLock(new Store(dir, dir), async () => 1, {timeoutMs: 200})).rejects.toThrow(/locked by process/)
  })
})
