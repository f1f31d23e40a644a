import {Flags} from '@oclif/core'

import {EngramCommand, passphraseFileFlag} from '../cli/base.js'
import {dream} from '../core/dream/dream.js'
import {Store} from '../core/store/store.js'

export default class Dream extends EngramCommand {
  // the job runs as the owner's machine account, never inside an agent session
  static override ownerOnly = true
  static override summary = 'Dream: read a scope\'s recent sessions (committed run: scratchpads, Claude Code transcripts) and propose, for review, facts to promote, duplicates to merge, contradictions, expired memories to retire and old scratchpads to clear. Proposes, never writes.'
  static override description = 'Every proposal carries its evidence, goes through the write path (redaction, flags, the vote), inherits the taint of any outside text it rests on, is signed by the dreamer key (trusted with `engram keys trust <pub> --role dreamer`) and waits in `engram review list`. Dreaming twice over the same input proposes nothing new; a rejected proposal comes back only with new evidence.'
  static override examples = [
    '<%= config.bin %> dream --scope tenant:acme --transcripts ~/.claude/projects/acme --since 7d --key nightly',
    '<%= config.bin %> dream --scope tenant:acme --transcripts ~/.claude/projects/acme --dry-run',
    '<%= config.bin %> dream --scope project:shop --branch --key nightly',
    '<%= config.bin %> dream --scope project:shop --llm-command "claude -p --output-format json" --branch --key nightly',
  ]
  static override flags = {
    'passphrase-file': passphraseFileFlag,
    scope: Flags.string({description: 'the curated scope to dream (its sessions\' run: scratchpads are read)', required: true}),
    since: Flags.string({description: 'the period: 7d, 36h, 2w or an ISO date', default: '7d'}),
    transcripts: Flags.string({description: 'a Claude Code transcript (.jsonl) or a folder of them (repeatable)', multiple: true}),
    'dry-run': Flags.boolean({description: 'print what would be proposed; write nothing (no key needed)'}),
    branch: Flags.boolean({description: 'commit the proposals on a dream/<yyyy-mm-dd> branch, then check the current branch out again'}),
    key: Flags.string({description: 'dreamer key name (default: ENGRAM_KEY or the only key in your key folder)'}),
    'llm-command': Flags.string({description: 'the model engine: a command that reads templates/dreaming/prompt.md and the evidence (JSON) on stdin and answers a JSON list of proposals, e.g. "claude -p --output-format json"'}),
    'llm-timeout': Flags.integer({description: 'seconds the model command may take', default: 120}),
  }

  async run() {
    const {flags} = await this.parse(Dream)
    const store = await Store.open(flags.base)
    const r = await dream(store, {scope: flags.scope, since: flags.since, transcripts: flags.transcripts, dryRun: flags['dry-run'], branch: flags.branch, keyName: flags.key,
      ...(flags['llm-command'] === undefined ? {} : {llmCommand: flags['llm-command'], llmTimeoutMs: flags['llm-timeout'] * 1000}),
    })
    if (!this.jsonEnabled()) {
      for (const i of r.items) {
        if (i.status === 'duplicate' || i.status === 'decided') continue
        this.log(`${i.status}\t${i.kind}\t${i.scope}/${i.path}${i.removes.length ? ` (+${i.removes.length} deleted)` : ''}${i.proposal ? `\t${i.proposal}` : ''}${i.flags.length ? `\tflags: ${i.flags.join(',')}` : ''}${i.tainted ? '\ttainted' : ''}`)
      }
      const kinds = Object.entries(r.proposals).filter(([, n]) => n > 0).map(([k, n]) => `${k} ${n}`).join(', ') || 'none'
      this.note(`read ${r.sessions_read} session(s): ${r.transcripts} transcript(s), ${r.run_notes} run note(s), ${r.lines_read} line(s), ${r.lines_skipped} skipped${r.lines_too_long ? ` (${r.lines_too_long} longer than 16 MiB)` : ''}`)
      this.note(`${r.dry_run ? 'would propose' : 'proposed'}: ${kinds}; ${r.pending} pending, ${r.quarantined} quarantined, ${r.flagged} flagged, ${r.tainted} tainted; skipped ${r.skipped.duplicate} already queued, ${r.skipped.decided} decided before, ${r.skipped.stale} stale${r.skipped.refused ? `, ${r.skipped.refused} refused` : ''}`)
      for (const i of r.items) if (i.refusal) this.warnLine(`${i.scope}/${i.path} refused: ${i.refusal}`)
      for (const x of r.rejected) this.warnLine(`model proposal ${x.index + 1} refused: ${x.reason}`)
      if (r.branch) this.note(`committed on branch ${r.branch}: review with \`git merge ${r.branch}\` then \`engram review list --scope ${r.scope}\``)
    }
    return r
  }
}
