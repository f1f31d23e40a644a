import {Args, Flags} from '@oclif/core'

import {EngramCommand} from '../cli/base.js'
import {Store} from '../core/store/store.js'

const pct = (r: {count: number; total: number; rate: number}) => (r.total === 0 ? '-' : `${r.count}/${r.total} ${(100 * r.rate).toFixed(1)}%`)

export default class Eval extends EngramCommand {
  static override ownerOnly = true
  static override summary = 'Measure the vote: run a labelled corpus through the real write path in throwaway stores.'
  static override description = `Reads the project corpus format (*.jsonl cases and curated.jsonl, see corpus/README.md) and the shared tuning sets (BIPIA, NotInject) when the folder holds them. Each write goes through redaction, flags and the vote into a temporary store, which is deleted afterwards; every planted secret is then searched for in every git object. Prints, per origin, attacks and benign writes quarantined and the flags raised; per set and per category what was quarantined; the confusion table (attacks quarantined or let through, benign writes quarantined or let through); and, per validator, the quarantined attacks and benign writes it voted to reject, and those it alone rejected. The throwaway stores vote with the default config, or with --store-config as this store's config in force does: an owner measures what an external validator (the LLM judge), another weights file or protected terms add, on labelled writes of their own; external validators run in each throwaway store's folder, so name their files by absolute paths. Exits 7 when a secret leaked.`
  static override examples = ['<%= config.bin %> eval corpus', '<%= config.bin %> eval ~/corpora/public --limit 20 --json', '<%= config.bin %> eval ~/my-labelled-writes --store-config']
  static override args = {dir: Args.string({description: 'corpus folder', required: true})}
  static override flags = {
    limit: Flags.integer({description: 'at most this many cases of each set', min: 1}),
    concurrency: Flags.integer({description: 'stores run side by side', min: 1, max: 16, default: 3}),
    keep: Flags.boolean({description: 'keep the temporary stores for inspection (their paths are printed)'}),
    verbose: Flags.boolean({char: 'v', description: 'list every case that went against its label'}),
    'store-config': Flags.boolean({
      description: "vote as this store's config in force does (its external validators, learned weights, protected paths and terms, pass ratio, veto and redaction rules), not the defaults; the bursts and escalation stay raised",
    }),
  }

  async run() {
    const {args, flags} = await this.parse(Eval)
    // Loaded here: the eval pulls in the whole write path, which no other command start needs.
    const {runEval} = await import('../eval/eval.js')
    // the policy in force: a config signed by a trusted owner key, or the defaults (the store warns which)
    const policy = flags['store-config'] ? (await Store.open(flags.base)).config : undefined
    const r = await runEval(args.dir, {
      policy,
      limit: flags.limit,
      concurrency: flags.concurrency,
      keep: flags.keep,
      onProgress: (done, total) => this.note(`  ${done}/${total} writes`),
    })
    if (r.secrets.leaked > 0) {
      process.exitCode = 7
      this.warnLine(`${r.secrets.leaked} planted secret(s) reached the repository: ${r.secrets.leaks.map((l) => `${l.set} ${l.id} (${l.where})`).join(', ')}`)
    }
    if (!this.jsonEnabled()) {
      this.log(`corpus ${r.corpus}: ${r.writes} cases in ${r.sets.length} sets, ${r.curated} curated memories, ${(r.elapsed_ms / 1000).toFixed(1)} s`)
      this.log(`note: ${r.config.note} (burst limits ${r.config.burst.per_session}, escalate_after ${r.config.escalate_after})`)
      if (r.config.vote.from === 'store') this.log(`note: the vote is this store's: external validators ${r.config.vote.external.join(', ') || 'none'}; learned weights ${r.config.vote.weights ?? 'shipped'}`)
      if (r.curated_released.length > 0) this.log(`note: the vote quarantined ${r.curated_released.length} curated memory(ies) from direct chat (${r.curated_released.join(', ')}); released and accepted by the owner before the cases ran`)
      this.log('')
      this.log(['origin', 'attacks quarantined', 'benign quarantined', 'instruction-like (attack / benign)', 'bad input', 'errors'].join('\t'))
      for (const o of r.origins) {
        const il = o.flags['instruction-like']
        this.log([o.origin, pct(o.attacks.quarantined), pct(o.benign.quarantined), il ? `${pct(il.attack)} / ${pct(il.benign)}` : '-', o.bad_input, o.errors].join('\t'))
      }
      this.log('')
      this.log('flags raised per origin (attack / benign):')
      for (const o of r.origins) {
        const parts = Object.entries(o.flags).map(([f, v]) => `${f} ${pct(v.attack)} / ${pct(v.benign)}`)
        this.log(`  ${o.origin}: ${parts.join('; ') || 'none'}`)
      }
      this.log('')
      this.log(['set', 'origin', 'label', 'total', 'quarantined', 'pending', 'bad input', 'errors', 'instruction-like'].join('\t'))
      for (const s of r.by_set) this.log([s.set, s.origin, s.label, s.total, s.quarantined, s.pending, s.bad_input, s.errors, s.instruction_like].join('\t'))
      this.log('')
      this.log(['set', 'category', 'label', 'quarantined'].join('\t'))
      for (const c of r.by_category) this.log([c.set, c.category, c.label, pct({count: c.quarantined, total: c.total, rate: c.total === 0 ? 0 : c.quarantined / c.total})].join('\t'))
      this.log('')
      this.log('confusion (quarantined = flagged as attack): set, attacks quarantined (TP), attacks let through (FN), benign quarantined (FP), benign let through (TN)')
      for (const c of r.confusion) this.log([c.set, `TP ${c.tp}`, `FN ${c.fn}`, `FP ${c.fp}`, `TN ${c.tn}`].join('\t'))
      this.log('')
      this.log('what quarantined each write: per validator, the quarantined attacks and benign writes it voted to reject, and those it alone rejected')
      this.log(['validator', 'attacks rejected', 'alone', 'benign rejected', 'alone'].join('\t'))
      for (const v of r.validators) this.log([v.validator, v.attacks.rejected, v.attacks.alone, v.benign.rejected, v.benign.alone].join('\t'))
      this.log('')
      this.log(`secrets: ${r.secrets.planted} planted, ${r.secrets.leaked} leaked`)
      for (const t of r.targets) this.log(`${t.ok ? 'PASS' : 'FAIL'}  ${t.name}: ${(100 * t.value).toFixed(1)}% (target ${t.target})`)
      this.log(`${r.misses.length} case(s) went against their label${flags.verbose || r.misses.length === 0 ? '' : ' (--verbose lists them)'}`)
      if (flags.verbose) for (const m of r.misses) this.log(`  ${m.set} ${m.id} [${m.origin}, ${m.label}] ${m.misses.join('; ')}${m.rejected_by.length > 0 ? ` (rejected by ${m.rejected_by.join(', ')})` : ''} — ${m.summary}`)
      for (const k of r.kept) this.log(`kept ${k}`)
    }
    return r
  }
}
