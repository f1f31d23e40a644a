import {defineConfig} from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'conformance/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // End-to-end tests spawn the built CLI; two workers suit these 2-core machines.
    maxWorkers: 2,
    // the JSON report lets CI print one plain 'N passed, N failed' line
    reporters: ['default', 'json'],
    outputFile: {json: '.test-results.json'},
  },
})
