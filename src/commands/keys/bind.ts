import {Flags} from '@oclif/core'

import {EngramCommand, passphraseFileFlag} from '../../cli/base.js'
import {visible} from '../../cli/render.js'
import {bindStore} from '../../core/trust/bind.js'
import {Store} from '../../core/store/store.js'

export default class KeysBind extends EngramCommand {
  static override ownerOnly = true
  static override summary = 'Bind a store made before stores had an identity to one: pin it on this machine and re-sign the config and manifests for it (owner).'
  static override description =
    'Config signatures and scope manifests name the store identity pinned on this machine, so one signed for another store of the same owner key is not in force here. ' +
    'A store made by an older engram has none. Without --digest this shows what would be re-signed (the config in force and every manifest, with the commit that last changed each) and its digest; ' +
    'with --digest it makes the identity (or, with --id, pins the one it was bound to on another machine) and re-signs them with the same content, one serial up. ' +
    'Refused while config.yml is not the signed config in force or a manifest does not verify. In a store bound already, it puts back a changed .engram/store-id.'
  static override examples = [
    '<%= config.bin %> keys bind',
    '<%= config.bin %> keys bind --digest 5d41…(the digest it showed)',
    '<%= config.bin %> keys bind --id 0f3c…(32 hex digits, from `engram status` on the machine that bound it)',
  ]
  static override flags = {
    'passphrase-file': passphraseFileFlag,
    digest: Flags.string({description: 'the digest `engram keys bind` showed: re-sign exactly what it listed'}),
    id: Flags.string({description: 'the identity the store was bound to on another machine (`engram status` there shows it)'}),
    key: Flags.string({description: 'your owner key name (default: ENGRAM_KEY or the only key in your key folder)'}),
  }

  async run() {
    const {flags} = await this.parse(KeysBind)
    const store = await Store.open(flags.base)
    const r = await bindStore(store, {id: flags.id, digest: flags.digest, keyName: flags.key})
    if (this.jsonEnabled()) return r
    if (!r.changed && r.plan) {
      this.log(`${r.store} has no identity pinned on this machine. Binding it ${r.store_id ? `to ${r.store_id}` : 'to a new identity'} re-signs, with the same content, one serial up:`)
      const signedFor = (id: string | null) => (id ? `signed for store ${id}` : 'signed for no store identity')
      if (r.plan.config) this.log(visible(`  config.yml  serial ${r.plan.config.serial}, ${signedFor(r.plan.config.store_id)} by ${r.plan.config.signed_by}; last changed in ${r.plan.config.last_change ?? '(not committed)'}`))
      for (const m of r.plan.manifests) this.log(visible(`  manifest of ${m.scope}  serial ${m.serial}, ${m.files} file(s), ${signedFor(m.store_id)}; last changed in ${m.last_change ?? '(not committed)'}`))
      this.log('Check that each last change is yours (an agent could have copied another store\'s signed files here), then run:')
      this.log(`  engram keys bind${r.store_id && r.from === 'committed' ? ` --id ${r.store_id}` : ''} --digest ${r.digest}`)
    } else if (!r.changed) this.log(`${r.store} is bound to its identity ${r.store_id} on this machine already`)
    else if (r.restored_file) this.log(`put back .engram/store-id: ${r.store_id}, the identity this machine pinned${r.commit ? `, commit ${r.commit.slice(0, 10)}` : ''}`)
    else {
      const what = [r.config ? `config re-signed at serial ${r.config.serial}` : '', r.manifests.length ? `${r.manifests.length} manifest(s) re-signed (${r.manifests.map((m) => m.scope).join(', ')})` : ''].filter(Boolean)
      this.log(`bound ${r.store} to its identity ${r.store_id}${what.length ? `: ${what.join('; ')}` : ''}${r.commit ? `, commit ${r.commit.slice(0, 10)}` : ''}`)
    }
    return r
  }
}
