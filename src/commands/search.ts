import {Args, Flags} from '@oclif/core'

import {EngramCommand, sessionFlag} from '../cli/base.js'
import {runSearch, searchLines} from '../cli/search.js'
import {SEARCH_LIMIT} from '../cli/fast.js'
import {queryFromArgv, searchArgv} from '../cli/query-words.js'

export default class Search extends EngramCommand {
  static override summary = 'Search verified memory in the scopes you may read (BM25 with prefix and light fuzzy matching).'
  static override description =
    'Words are OR-ed and ranked; +word requires a word, -word excludes it, "quoted words" must all appear. ' +
    'The words may be one argument or several: `search billing -draft` is `search "billing -draft"`. ' +
    'A word starting with "--" is a flag, unless it comes after `--`: every word after `--` is a search word. ' +
    'Uses a running `engram serve` for this store when there is one.'
  static override examples = [
    '<%= config.bin %> search "deploy host" --scope tenant:acme --limit 5',
    '<%= config.bin %> search billing -draft --json',
    '<%= config.bin %> search -- -draft invoices',
  ]
  // several words, and -word, are search words (cli/query-words.ts)
  static override strict = false
  static override args = {query: Args.string({description: 'search words (+word required, -word excluded)', ignoreStdin: true})}
  static override flags = {
    scope: Flags.string({description: 'only this scope'}),
    limit: Flags.integer({description: 'at most this many results', ...SEARCH_LIMIT}),
    session: sessionFlag,
  }

  async run() {
    const valueFlags = Object.entries({...Search.baseFlags, ...Search.flags}).filter(([, f]) => f.type === 'option').map(([name]) => name)
    const {argv, flags} = await this.parse(Search, searchArgv(this.argv, valueFlags))
    const query = queryFromArgv(argv as string[])
    const result = await runSearch({query, scope: flags.scope, limit: flags.limit, session: flags.session, base: flags.base}, (m) => this.warnLine(m))
    if (!this.jsonEnabled()) {
      for (const line of searchLines(result.hits)) this.log(line)
      if (result.hits.length === 0) this.note('no results')
    }
    return result
  }
}
