import {EngramCommand} from '../../cli/base.js'
import {listEnvelope, table} from '../../cli/list.js'
import {listKeys} from '../../core/trust/keyops.js'
import {Store} from '../../core/store/store.js'

export default class KeysList extends EngramCommand {
  static override summary = 'List the keys this store knows of: role, status (trusted, untrusted, revoked) and why.'
  static override examples = ['<%= config.bin %> keys list', '<%= config.bin %> keys list --json']

  async run() {
    const {flags} = await this.parse(KeysList)
    const store = await Store.open(flags.base)
    const notice = await this.rootNotice(store)
    const keys = await listKeys(store)
    if (!this.jsonEnabled()) {
      for (const line of table(['NAME', 'KEYID', 'ROLE', 'STATUS', 'HERE', 'WHY'], keys.map((k) => [k.name, k.keyid || '-', k.role, k.status, k.local ? '(private key here)' : '', k.reason]))) this.log(line)
      if (keys.length === 0) this.note('no keys')
    }
    return listEnvelope(keys, notice ? {root_not_pinned: notice} : {})
  }
}
