/**
 * The worker that runs one job for budget.ts — a vote (runVoteWithin), a text's flags
 * (textFlagsWithin) or a large write's redaction and reading (prepareWithin) — posts the
 * result ({result}) and ends; {ready} first, once the job's modules are loaded (the budget counts
 * from there). Nothing here is read from the store: the job comes from the parent. Each job loads
 * only the modules it needs (and the redaction rules, for the rules in force the job carries).
 */
import {parentPort, workerData} from 'node:worker_threads'
import type {FlagsJob, PrepareJob, VoteJob} from './budget.js'

const job = workerData as VoteJob | FlagsJob | PrepareJob
// the parent's rules in force (the store's signed redaction.extra): a worker's own start empty,
// and what a reason or a flag quotes, or a message says, is redacted with them as in the parent
const {setRulesInForce} = await import('../redact/index.js')
setRulesInForce(job.rules)
if (job.kind === 'prepare') {
  const {prepareText} = await import('../prepare.js')
  parentPort!.postMessage({ready: true})
  parentPort!.postMessage({result: prepareText(job.raw, job.title0, job.tags, job.extra, true)})
} else if (job.kind === 'flags') {
  const {textFlags} = await import('./budget.js')
  parentPort!.postMessage({ready: true})
  parentPort!.postMessage({result: textFlags(job.candidate)})
} else {
  const {runVote, loadModel} = await import('./index.js')
  // the learned model is read before {ready}, like the modules (it is cached); a model that
  // cannot be read is the learned validator's to report, in the vote
  try {
    loadModel(job.config.learned?.weights ?? undefined)
  } catch {}
  parentPort!.postMessage({ready: true})
  const result = await runVote(job.candidate, {
    neighbours: () => {
      if (job.lookupError !== undefined) throw new Error(job.lookupError)
      return job.neighbours
    },
    recentWrites: job.recentWrites,
    config: job.config,
    cwd: job.cwd,
  })
  parentPort!.postMessage({result})
}
