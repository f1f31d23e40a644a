import {readFileSync} from 'node:fs'
import {fileURLToPath} from 'node:url'
import {expect, it} from 'vitest'

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
