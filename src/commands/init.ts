import {Flags} from '@oclif/core'

import {EngramCommand, passphraseFileFlag} from '../cli/base.js'
import {initStore} from '../core/store/init.js'

export default class Init extends EngramCommand {
  static override ownerOnly = true
  static override summary = 'Create an engram store here (and a git repository and first owner key if needed).'
  static override examples = ['<%= config.bin %> init', '<%= config.bin %> init --owner alice', '<%= config.bin %> init --base ./memory --no-key']
  static override flags = {'passphrase-file': passphraseFileFlag, 
    // no default here: without --owner, the key ENGRAM_KEY names is the owner key (else "owner")
    owner: Flags.string({description: 'name of the first owner key (without it: the key ENGRAM_KEY names, else "owner")'}),
    'no-key': Flags.boolean({description: 'do not create or register an owner key'}),
    'shared-history': Flags.boolean({description: 'inside a project repository: commit memory to the project\'s repository (its branches) instead of a repository of the store\'s own'}),
  }

  async run() {
    const {flags} = await this.parse(Init)
    const result = await initStore(flags.base ?? process.cwd(), {owner: flags.owner, noKey: flags['no-key'], sharedHistory: flags['shared-history']})
    this.note(`Initialised engram store in ${result.root}${result.gitInitialised ? ' (new git repository)' : ''}`)
    if (result.insideRepository) this.note(`The store has a git repository of its own inside ${result.insideRepository}, whose .gitignore now leaves it out: memory commits never land on the project's branches (--shared-history to share them)`)
    if (result.sharedWith) this.warnLine(`the store's commits go to the repository at ${result.sharedWith}, on whatever branch it has checked out; an agent that can commit there can rewrite memory's history (the cooperative mode)`)
    if (result.owner) {
      this.note(
        result.owner.reused
          ? `Owner key ${result.owner.name} (${result.owner.keyid}) reused from ${result.owner.keyFile} (last changed ${result.owner.keyChanged}): this store now trusts it as its owner. If you did not make that key, remove this store's .engram folder and that file, and run init again.`
          : `Owner key ${result.owner.name} (${result.owner.keyid}) written to ${result.owner.privateKey} (mode 0600, encrypted with your passphrase)`,
      )
    }
    if (!this.jsonEnabled()) this.log(result.root)
    return result
  }
}
