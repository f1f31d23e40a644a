import {EngramCommand} from '../cli/base.js'

export default class Version extends EngramCommand {
  static override summary = 'Show the version of engram, Node and the platform (also `engram --version`, `-v`).'
  static override examples = ['<%= config.bin %> version', '<%= config.bin %> version --json']

  async run() {
    await this.parse(Version)
    const v = {engram: this.config.version, node: process.version, platform: process.platform, arch: process.arch}
    if (!this.jsonEnabled()) this.log(this.config.userAgent)
    return v
  }
}
