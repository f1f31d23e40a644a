/**
 * The CPU time (user + system, in ms) this process spends running `fn`. Linear-time checks
 * use it rather than the wall clock: the suite runs beside other work on a loaded machine,
 * where the wall clock measures the machine, but a super-linear algorithm still burns the
 * CPU time it needs. (Vitest runs each test file in its own child process.)
 */
export function cpuMs(fn: () => unknown): number {
  const start = process.cpuUsage()
  fn()
  const d = process.cpuUsage(start)
  return (d.user + d.system) / 1000
}

/** The least CPU time of `runs` runs of `fn`: a size's cost, for comparing it with another's. */
export function leastCpuMs(fn: () => unknown, runs = 2): number {
  let least = Infinity
  for (let i = 0; i < runs; i++) least = Math.min(least, cpuMs(fn))
  return least
}
