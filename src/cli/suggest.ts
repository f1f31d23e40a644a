/**
 * "Did you mean" for an unknown command, without a prompt: agents run this CLI, and a
 * question on a terminal would hang them. Pure: command ids in, suggestions out.
 */

/** Edit distance with adjacent transpositions (optimal string alignment): "serach" is one step from "search". */
export function distance(a: string, b: string): number {
  const d: number[][] = Array.from({length: a.length + 1}, (_, i) => [i, ...Array(b.length).fill(0)])
  for (let j = 1; j <= b.length; j++) d[0][j] = j
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1)
    }
  }
  return d[a.length][b.length]
}

/**
 * The commands (ids with spaces) that `words` most likely meant, best first, each with the
 * words after it kept (an argument: `serach foo` → `search foo`). The longest prefix of
 * the words that is close to a command wins; close means at most a third of its letters.
 */
export function suggestCommands(words: string[], ids: string[]): string[] {
  const commands = ids.map((id) => id.split(':'))
  for (let k = Math.min(words.length, 3); k >= 1; k--) {
    const typed = words.slice(0, k).join(' ')
    const rest = words.slice(k)
    const scored = commands
      .filter((c) => c.length === k)
      .map((c) => ({c: c.join(' '), d: distance(typed, c.join(' '))}))
      .filter(({c, d}) => d > 0 && d <= Math.max(1, Math.floor(c.length / 3)))
      .sort((x, y) => x.d - y.d || (x.c < y.c ? -1 : 1))
    if (scored.length > 0) {
      const best = scored[0].d
      return scored.filter((s) => s.d === best).slice(0, 3).map((s) => [s.c, ...rest].join(' '))
    }
  }
  return []
}
