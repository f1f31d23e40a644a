import fc from 'fast-check'

/**
 * One fixed seed for every property test, so CI is deterministic; ENGRAM_FUZZ_SEED varies
 * it (README "Fuzzing") and ENGRAM_FUZZ_RUNS scales the number of runs. A failure prints
 * the seed and the shrunk counterexample.
 */
export const SEED = Number(process.env.ENGRAM_FUZZ_SEED ?? 20_261_201)
const SCALE = Number(process.env.ENGRAM_FUZZ_RUNS ?? 1)

/** numRuns for one property, scaled by ENGRAM_FUZZ_RUNS. */
export const runs = (n: number): number => Math.max(1, Math.round(n * SCALE))

fc.configureGlobal({seed: SEED, numRuns: runs(100), endOnFailure: false})

export {fc}
