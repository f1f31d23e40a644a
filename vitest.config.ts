import {defineConfig} from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'conformance/**/*.test.ts'],
    setupFiles: ['test/setup-env.ts'],
    // Most tests spawn the built CLI several times (0.3-1 s each on a loaded 2-core machine);
    // the slowest ones without a timeout of their own took about 22 s in CI. Twice the old
    // 60 s leaves room for slower machines and growing files; a hung test still fails.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // End-to-end tests spawn the built CLI; two workers suit these 2-core machines.
    maxWorkers: 2,
    // the JSON report lets CI print one plain 'N passed, N failed' line
    reporters: ['default', 'json'],
    outputFile: {json: '.test-results.json'},
  },
})
