import {readFileSync, rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {curate, initWithSession, Sandbox, sandbox} from '../helpers/cli.js'

/**
 * The command contract (commands, their arguments and flags) as the built manifest
 * declares it. A change here is a change for every script, skill and cron job that calls
 * engram: update the snapshot on purpose (`npx vitest run test/e2e/contract.test.ts -u`).
 */
it('keeps the command contract', async () => {
  const manifest = JSON.parse(readFileSync(fileURLToPath(new URL('../../oclif.manifest.json', import.meta.url)), 'utf8'))
  const contract = Object.values(manifest.commands as Record<string, any>)
    .map((c) => ({
      id: c.id,
      args: Object.values(c.args ?? {}).map((a: any) => `${a.name}${a.required ? '' : '?'}`),
      flags: Object.values(c.flags ?? {})
        .map((f: any) => `--${f.name}${f.type === 'option' ? '=' : ''}${f.required ? '!' : ''}${f.multiple ? '*' : ''}`)
        .sort(),
    }))
    .sort((a, b) => a.id.localeCompare(b.id))
  await expect(`${JSON.stringify(contract, null, 1)}\n`).toMatchFileSnapshot('./__snapshots__/contract.json')
})

/**
 * The output contract of every list command (README "JSON output"): one envelope, the list
 * under `items` and its `total`, the same keys when `verify` fails (plus `error`). The key
 * sets are snapshotted like the flags: a change is a change for every script.
 */
describe('list commands print one JSON envelope', () => {
  let sb: Sandbox
  let s: string
  beforeAll(() => {
    sb = sandbox()
    s = initWithSession(sb, 'tenant:acme')
    curate(sb, s, 'tenant:acme', 'billing.md', 'Acme pays its invoices on the first of the month.')
    sb.run(['write', 'plan.md', '--scope', 'tenant:acme', '--json'], {input: 'Acme is on the Gold plan.', env: {ENGRAM_SESSION: s}})
  })
  afterAll(() => rmSync(sb.dir, {recursive: true, force: true}))

  const LISTS: [string, string[]][] = [
    ['list', ['list']],
    ['history', ['history', 'billing.md', '--scope', 'tenant:acme']],
    ['review list', ['review', 'list']],
    ['review (no terminal)', ['review']],
    ['pending list', ['pending', 'list']],
    ['pending show', ['pending', 'show', 'plan.md', '--scope', 'tenant:acme']],
    ['quarantine list', ['quarantine', 'list']],
    ['session list', ['session', 'list']],
    ['keys list', ['keys', 'list']],
    ['verify', ['verify']],
  ]

  it('`items` and `total` first, then the facts about the list', async () => {
    const shapes: Record<string, string[]> = {}
    for (const [name, args] of LISTS) {
      const r = sb.run([...args, '--json'])
      expect(r.code, `${name}: ${r.stderr}`).toBe(0)
      expect(Array.isArray(r.json.items), name).toBe(true)
      expect(r.json.total, name).toBe(r.json.items.length)
      shapes[name] = Object.keys(r.json)
      expect(shapes[name].slice(0, 2), name).toEqual(['items', 'total'])
    }
    await expect(`${JSON.stringify(shapes, null, 1)}\n`).toMatchFileSnapshot('./__snapshots__/output.json')
  })

  it('`--limit` cuts `items`, never `total`', () => {
    sb.run(['session', 'start', '--agent', 'other', '--assigned', 'tenant:acme'])
    sb.run(['write', 'terms.md', '--scope', 'tenant:acme'], {input: 'Acme pays net 30.', env: {ENGRAM_SESSION: s}})
    for (const args of [['session', 'list'], ['review', 'list'], ['pending', 'list']]) {
      const all = sb.run([...args, '--json']).json
      expect(all.total, args.join(' ')).toBeGreaterThan(1)
      const one = sb.run([...args, '--limit', '1', '--json']).json
      expect(one).toEqual({...all, items: all.items.slice(0, 1)})
      const text = sb.run([...args, '--limit', '1'])
      expect(text.stderr).toContain(`${all.total - 1} more not shown (${all.total} in all); raise --limit to see`)
    }
    expect(sb.run(['list', '--limit', '0']).code).toBe(2)
  })

  it('`verify` keeps its shape when it fails, adds `error`, and prints its verdict on stdout', () => {
    const file = join(sb.dir, 'tenant/acme/billing.md')
    const good = readFileSync(file, 'utf8')
    const ok = sb.run(['verify', '--json']).json
    const passed = sb.run(['verify'])
    expect(passed.stdout).toBe(`ok: ${ok.checked} curated file(s) verified\n`)
    try {
      writeFileSync(file, good.replace('first', 'fifth'))
      const bad = sb.run(['verify', '--json'])
      expect(bad.code).toBe(7)
      expect(Object.keys(bad.json)).toEqual([...Object.keys(ok), 'error'])
      expect(bad.json.items).toEqual([expect.objectContaining({kind: 'bad-signature', path: 'tenant/acme/billing.md'})])
      expect(bad.json.error).toMatchObject({code: 'verification', exitCode: 7})
    } finally {
      writeFileSync(file, good)
    }
  })
})
