/**
 * The worker that runs one job for budget.ts — a vote (runVoteWithin), a text's flags
 * (textFlagsWithin) or a large write's redaction and reading (prepareWithin) — posts the
 * result and ends. Nothing here is read from the store: the job comes from the parent. Each
 * job loads only the modules it needs.
 */
import {parentPort, workerData} from 'node:worker_threads'
import type {FlagsJob, PrepareJob, VoteJob} from './budget.js'

const job = workerData as VoteJob | FlagsJob | PrepareJob
if (job.kind === 'prepare') {
  const {prepareText} = await import('../prepare.js')
  parentPort!.postMessage(prepareText(job.raw, job.title0, job.tags, job.extra, true))
} else if (job.kind === 'flags') {
  const {textFlags} = await import('./budget.js')
  parentPort!.postMessage(textFlags(job.candidate))
} else {
  const {runVote} = await import('./index.js')
  const result = await runVote(job.candidate, {
    neighbours: () => {
      if (job.lookupError !== undefined) throw new Error(job.lookupError)
      return job.neighbours
    },
    recentWrites: job.recentWrites,
    config: job.config,
    cwd: job.cwd,
  })
  parentPort!.postMessage(result)
}
