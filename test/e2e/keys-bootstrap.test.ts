import {join} from 'node:path'
import {expect, it} from 'vitest'

import {sandbox} from '../helpers/cli.js'

it('a store made with --no-key gets its first owner from `keys trust` with that key at hand, and only then', () => {
  const sb = sandbox()
  expect(sb.run(['init', '--no-key']).code).toBe(0)
  for (const n of ['alice', 'mallory']) expect(sb.run(['keys', 'generate', '--name', n, '--out', join(sb.configDir, `${n}.pub`)]).code).toBe(0)
  // someone else's key cannot be made the first owner by a key that is not its own
  const wrong = sb.run(['keys', 'trust', join(sb.configDir, 'mallory.pub'), '--role', 'owner', '--key', 'alice', '--json'])
  expect(wrong.code).toBe(3)
  // not from inside an agent session either
  expect(sb.run(['keys', 'trust', join(sb.configDir, 'alice.pub'), '--role', 'owner'], {env: {ENGRAM_SESSION: 's-00000000'}}).code).toBe(3)
  const first = sb.run(['keys', 'trust', join(sb.configDir, 'alice.pub'), '--role', 'owner', '--json'])
  expect(first.code, first.stderr).toBe(0)
  const keys = sb.run(['keys', 'list', '--json']).json
  const alice = keys.items.find((k: any) => k.name === 'alice')
  expect(alice).toMatchObject({role: 'owner', status: 'trusted', root: true})
  // from now on, the bootstrap path is closed: a new owner needs alice's endorsement
  expect(sb.run(['keys', 'trust', join(sb.configDir, 'mallory.pub'), '--role', 'owner', '--key', 'mallory']).code).toBe(3)
  expect(sb.run(['keys', 'trust', join(sb.configDir, 'mallory.pub'), '--role', 'dreamer', '--key', 'alice']).code).toBe(0)
})
