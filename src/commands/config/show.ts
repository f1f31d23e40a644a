import {EngramCommand} from '../../cli/base.js'
import {Store} from '../../core/store/store.js'
import {visible} from '../../cli/render.js'

export default class ConfigShow extends EngramCommand {
  // the owner's policy (its redaction patterns and protected terms too) is not a session's to read
  static override ownerOnly = true
  static override summary = 'Show the config in force, whether config.yml is signed, and which signed version applies.'
  static override examples = ['<%= config.bin %> config show', '<%= config.bin %> config show --json']

  async run() {
    const {flags} = await this.parse(ConfigShow)
    const store = await Store.open(flags.base)
    const p = store.policy
    const result = {state: p.state, source: p.source, serial: p.serial ?? null, signed_by: p.signed_by ?? null, problem: p.problem ?? null, config: p.config}
    if (!this.jsonEnabled()) {
      if (p.state === 'signed') this.log(`config.yml is signed (serial ${p.serial}, by ${p.signed_by}) and in force`)
      else if (p.state === 'default') this.log('no config was ever signed; config.yml sets nothing beyond the built-in defaults, which are in force')
      else this.log(visible(`config.yml is NOT in force: ${p.problem}\nin force: ${p.source === 'built-in defaults' ? 'the built-in defaults' : `the last signed version (${p.source}, serial ${p.serial}, by ${p.signed_by})`}`))
      this.log(JSON.stringify(p.config, null, 2))
    }
    return result
  }
}
