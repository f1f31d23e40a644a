/**
 * The worker that runs one vote for runVoteWithin (budget.ts): it reads the job, votes, posts
 * the result and ends. Nothing here is read from the store: the job comes from the parent.
 */
import {parentPort, workerData} from 'node:worker_threads'
import type {VoteJob} from './budget.js'
import {runVote} from './index.js'

const job = workerData as VoteJob
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
