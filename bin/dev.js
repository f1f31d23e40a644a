#!/usr/bin/env node
// Development entry: runs the compiled CLI after `npm run build` (we keep one code path).
import {execute} from '@oclif/core'

await execute({development: true, dir: import.meta.url})
