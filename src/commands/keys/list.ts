import {EngramCommand} from '../../cli/base.js'
import {listKeys} from '../../core/trust/keyops.js'
import {Store} from '../../core/store/store.js'
import {visible} from '../../cli/render.js'

export default class KeysList extends EngramCommand {
  static override summary = 'List the keys this store knows of: role, status (trusted, untrusted, revoked) and why.'
  static override examples = ['<%= config.bin %> keys list', '<%= config.bin %> keys list --json']

  async run() {
    const {flags} = await this.parse(KeysList)
    const store = await Store.open(flags.base)
    const notice = await this.rootNotice(store)
    const keys = await listKeys(store)
    if (!this.jsonEnabled()) {
      for (const k of keys) this.log(visible(`${k.name}\t${k.keyid || '-'}\t${k.role}\t${k.status}${k.local ? '\t(private key here)' : ''}\t${k.reason}`))
      if (keys.length === 0) this.note('no keys')
    }
    return {keys, ...(notice ? {root_not_pinned: notice} : {})}
  }
}
