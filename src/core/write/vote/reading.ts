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
import {rulesNowInForce} from '../redact/index.js'
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
  /** the redaction rules in force in the caller's thread (the signed `redaction.extra`): what a reason quotes is redacted with them */
  rules: {kind: string; pattern: string}[]
}
export type ReadAnswer = {id: number; reading: TextReading} | {id: number; failed: string}

/** The worker's script: compiled beside this module in dist/ (the bundles in dist/fast/ hold no worker). */
export const readerScript = (): string => join(packageRoot(), 'dist', 'core', 'write', 'vote', 'reading-worker.js')

/** How many times a reader starts a worker again after one failed. */
const RESTARTS = 3

/**
 * A worker thread that reads write texts for a long-lived process, one request after another.
 * `read` answers undefined whenever the worker cannot (not started yet, failed, stopped, too
 * slow, or a candidate it cannot be sent): the caller then reads in its own thread, so the
 * vote is the same either way. A worker that failed is let go, and another started at the next
 * read (a few times at most). It holds nothing
 * between requests but what a thread of its own would (the loaded model, a cache of word
 * classes): no text of one write reaches another's answer. Each request carries the redaction
 * rules in force in the caller's thread: the worker's own start empty, and the learned
 * validator's reason quotes the folded text, redacted.
 */
export class TextReader {
  private worker: Worker | undefined
  private ready = false
  private seq = 0
  private readonly waiting = new Map<number, {resolve: (r: TextReading | undefined) => void; timer: NodeJS.Timeout}>()
  /** stopped by its owner: never started again */
  private closed = false
  /** workers started after one failed (an error, an exit, a read past its wait), at most RESTARTS */
  private restarts = 0

  /**
   * `waitMs`: how long a read may take before the worker is given up and the caller reads
   * in its own thread (a write's text here is small: runVoteWithin sends a large one to a
   * worker under the budget instead). A worker that failed is started again at the next read,
   * RESTARTS times at most in the reader's life (that read, and those until it is up, are read
   * by the caller).
   */
  constructor(
    private readonly waitMs = 10_000,
    private readonly script = readerScript(),
  ) {
    this.start()
  }

  private start(): void {
    if (!existsSync(this.script)) return
    try {
      const worker = new Worker(this.script)
      this.worker = worker
      // never what keeps the process alive
      worker.unref()
      worker.on('message', (m: {ready: true} | ReadAnswer) => {
        if (this.worker !== worker) return
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
      worker.on('error', () => this.drop(worker))
      worker.on('exit', () => this.drop(worker))
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
    if (!this.worker && !this.closed && this.restarts < RESTARTS) {
      this.restarts++
      this.start()
    }
    const worker = this.worker
    if (!worker || !this.ready) return undefined
    const id = this.seq++
    const request: ReadRequest = {id, candidate: c, texts, ...(weights === undefined ? {} : {weights}), rules: rulesNowInForce()}
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
        this.drop(worker)
      }, this.waitMs)
      timer.unref()
      this.waiting.set(id, {resolve, timer})
    })
  }

  /** Stop the worker for good; reads still waiting answer undefined (their callers read in their own thread). */
  stop(): void {
    this.closed = true
    if (this.worker) this.drop(this.worker)
  }

  /** Let `worker` go (failed, too slow, or stopped): its reads waiting answer undefined. */
  private drop(worker: Worker): void {
    if (this.worker !== worker) return
    this.worker = undefined
    this.ready = false
    for (const [id, w] of this.waiting) {
      this.waiting.delete(id)
      clearTimeout(w.timer)
      w.resolve(undefined)
    }
    void worker.terminate().catch(() => {})
  }
}
