/**
 * What the vote reads from a write's text alone — the instruction checks' hits, and the
 * provenance and learned validators' votes — apart from what needs the store (the neighbours,
 * and the semantic validator's comparison with them). The two halves share nothing, so a
 * long-lived process (`engram mcp`) reads the text in a thread of its own (TextReader) while
 * this one looks the neighbours up and compares: the same work, the same votes, in less time
 * on a machine with a second core (README "Performance"). A one-shot command reads in its own
 * thread: starting a worker (loading the modules and the learned model) costs more than the
 * whole vote of a small write.
 */
import {Worker} from 'node:worker_threads'
import {existsSync} from 'node:fs'
import {join} from 'node:path'
import {packageRoot} from '../../store/package-root.js'
import {instructionHits} from './flags.js'
import type {InstructionHit} from './instruction.js'
import {learnedVote} from './learned.js'
import {provenanceVote} from './provenance.js'
import type {Vote, WriteCandidate} from './types.js'

export interface TextReading {
  hits: InstructionHit[]
  provenance: Vote
  learned: Vote
}

/** The reading, in this thread. `texts`: the visible text, the folded one, and what encoded blobs decode to (runVote's). */
export function readText(c: WriteCandidate, texts: string[], weights?: string): TextReading {
  return {hits: instructionHits(c), provenance: provenanceVote(c, texts), learned: learnedVote(c, texts, weights)}
}

/** What the reader's worker is sent, and what it answers. */
export interface ReadRequest {
  id: number
  candidate: WriteCandidate
  texts: string[]
  weights?: string
}
export type ReadAnswer = {id: number; reading: TextReading} | {id: number; failed: string}

/** The worker's script: compiled beside this module in dist/ (the bundles in dist/fast/ hold no worker). */
export const readerScript = (): string => join(packageRoot(), 'dist', 'core', 'write', 'vote', 'reading-worker.js')

/**
 * A worker thread that reads write texts for a long-lived process, one request after another.
 * `read` answers undefined whenever the worker cannot (not started yet, failed, stopped, too
 * slow, or a candidate it cannot be sent): the caller then reads in its own thread, so the
 * vote is the same either way. A worker that failed once is not used again. It holds nothing
 * between requests but what a thread of its own would (the loaded model, a cache of word
 * classes): no text of one write reaches another's answer.
 */
export class TextReader {
  private worker: Worker | undefined
  private ready = false
  private seq = 0
  private readonly waiting = new Map<number, {resolve: (r: TextReading | undefined) => void; timer: NodeJS.Timeout}>()

  /**
   * `waitMs`: how long a read may take before the worker is given up and the caller reads
   * in its own thread (a write's text here is small: runVoteWithin sends a large one to a
   * worker under the budget instead).
   */
  constructor(private readonly waitMs = 10_000, script = readerScript()) {
    if (!existsSync(script)) return
    try {
      const worker = new Worker(script)
      this.worker = worker
      // never what keeps the process alive
      worker.unref()
      worker.on('message', (m: {ready: true} | ReadAnswer) => {
        if ('ready' in m) {
          this.ready = true
          return
        }
        const w = this.waiting.get(m.id)
        if (!w) return
        this.waiting.delete(m.id)
        clearTimeout(w.timer)
        w.resolve('reading' in m ? m.reading : undefined)
      })
      worker.on('error', () => this.stop())
      worker.on('exit', () => this.stop())
    } catch {
      this.worker = undefined
    }
  }

  /** Whether reads go to the worker now. */
  get running(): boolean {
    return this.worker !== undefined && this.ready
  }

  /** Start reading `c`'s text in the worker; undefined when it is not running (read it here). */
  read(c: WriteCandidate, texts: string[], weights?: string): Promise<TextReading | undefined> | undefined {
    const worker = this.worker
    if (!worker || !this.ready) return undefined
    const id = this.seq++
    const request: ReadRequest = {id, candidate: c, texts, ...(weights === undefined ? {} : {weights})}
    try {
      worker.postMessage(request)
    } catch {
      // a candidate that cannot be cloned: read here, the worker stays
      return undefined
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id)
        resolve(undefined)
        this.stop()
      }, this.waitMs)
      timer.unref()
      this.waiting.set(id, {resolve, timer})
    })
  }

  /** Stop the worker; reads still waiting answer undefined (their callers read in their own thread). */
  stop(): void {
    const worker = this.worker
    this.worker = undefined
    this.ready = false
    for (const [id, w] of this.waiting) {
      this.waiting.delete(id)
      clearTimeout(w.timer)
      w.resolve(undefined)
    }
    if (worker) void worker.terminate().catch(() => {})
  }
}
