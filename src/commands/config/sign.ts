import {Flags} from '@oclif/core'

import {EngramCommand} from '../../cli/base.js'
import {signConfig} from '../../core/trust/configsign.js'
import {Store} from '../../core/store/store.js'
import {renderTextDiff} from '../../cli/render.js'

export default class ConfigSign extends EngramCommand {
  static override ownerOnly = true
  static override summary = 'Sign .engram/config.yml as the owner: show its change against the signed config, then sign exactly what you reviewed.'
  static override description =
    'The vote, scope and redaction policy and the external validators apply only from a config.yml signed by a trusted owner key. ' +
    'Without --digest this shows the diff and the digest and signs nothing; with the digest it signs those exact bytes and commits config.yml and config.sig. ' +
    'An unknown key or a wrong type is refused (exit 2) and nothing is signed.'
  static override examples = ['<%= config.bin %> config sign', '<%= config.bin %> config sign --digest 9c1e4b7a0d2f8e31']
  static override flags = {
    digest: Flags.string({description: 'the digest `config sign` printed for the config.yml you reviewed (at least 16 hex characters)'}),
    key: Flags.string({description: 'owner key name (default: ENGRAM_KEY or the only key in your key folder)'}),
  }

  async run() {
    const {flags} = await this.parse(ConfigSign)
    const store = await Store.open(flags.base)
    const r = await signConfig(store, {digest: flags.digest, keyName: flags.key})
    for (const w of r.warnings) this.warnLine(w)
    if (!this.jsonEnabled()) {
      if (r.unchanged) this.log(`config.yml is already signed (serial ${r.previous.serial}, by ${r.previous.signed_by}); nothing to sign`)
      else if (r.signed) this.log(`signed config.yml (serial ${r.serial}) with ${r.signed_by}, commit ${r.commit?.slice(0, 10)}`)
      else {
        this.log(
          await renderTextDiff(
            {name: `a/.engram/config.yml`, text: r.previous.text ?? '', header: r.previous.text === undefined ? 'built-in defaults' : `signed, ${r.previous.source}`},
            {name: `b/.engram/config.yml`, text: r.text, header: 'work tree'},
          ),
        )
        this.log(`digest ${r.digest}`)
        this.note(`nothing signed; if this is the change you want, run: engram config sign --digest ${r.digest.slice(0, 16)}`)
      }
    }
    return r
  }
}
