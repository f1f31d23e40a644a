#!/usr/bin/env node
// `engram search` starts without oclif when it can (src/cli/fast.ts, bundled by scripts/bundle.mjs); all else goes to oclif.
const argv = process.argv.slice(2)
const done = argv[0] === 'search' && !process.env.ENGRAM_NO_FAST && (await (await import('../dist/fast/search.js')).fastSearch(argv.slice(1)))
if (!done) {
  const {execute} = await import('@oclif/core')
  await execute({dir: import.meta.url})
}
