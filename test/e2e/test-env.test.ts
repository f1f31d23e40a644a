/**
 * The CLI under test runs as its users run it: the test runner's NODE_ENV=test never
 * reaches it. Under NODE_ENV=test oclif loads TypeScript at every start to look for the
 * sources, which doubled the CPU time of each of the suite's thousands of CLI runs.
 */
import {describe, expect, it} from 'vitest'

import {Store} from '../../conformance/harness.js'
import {sandbox} from '../helpers/cli.js'

describe('the environment the tests give the CLI', () => {
  it('carries no NODE_ENV, though the test runner sets one', () => {
    expect(process.env.NODE_ENV).toBe('test')
    const sb = sandbox()
    expect(sb.env.NODE_ENV).toBeUndefined()
    expect(new Store().env.NODE_ENV).toBeUndefined()
    // a command started from them loads no TypeScript (NODE_DEBUG=module names each module Node loads)
    sb.run(['init', '--json'])
    const r = sb.run(['status', '--json'], {env: {NODE_DEBUG: 'module'}})
    expect(r.code, r.stderr.slice(-2000)).toBe(0)
    expect(r.stderr).toMatch(/MODULE \d+: load /)
    expect(r.stderr).not.toMatch(/node_modules\/typescript\//)
  })
})
