/**
 * The worker that runs one job for budget.ts — a vote (runVoteWithin) or a text's flags
 * (textFlagsWithin) — posts the result and ends. Nothing here is read from the store: the job
 * comes from the parent.
 */
import {parentPort, workerData} from 'node:worker_threads'
import {type FlagsJob, type VoteJob, textFlags} from './budget.js'
import {runVote} from './index.js'

const job = workerData as VoteJob | FlagsJob
if (job.kind === 'flags') {
  parentPort!.postMessage(textFlags(job.candidate))
} else {
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
