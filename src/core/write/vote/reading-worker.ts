/**
 * The worker of a TextReader (reading.ts): reads one write's text at a time as the vote does in
 * its own thread (readText) and answers {id, reading}; {ready} once its modules and the shipped
 * learned model are loaded. Nothing here is read from the store: each request carries its text,
 * the weights file the signed config names, and the redaction rules in force.
 */
import {parentPort} from 'node:worker_threads'
import {setRulesInForce} from '../redact/index.js'
import {loadModel} from './learned.js'
import {readText, type ReadAnswer, type ReadRequest} from './reading.js'

try {
  loadModel()
} catch {
  // the learned validator reports a model it cannot read, in the vote
}
parentPort!.on('message', (m: ReadRequest) => {
  let answer: ReadAnswer
  try {
    // the caller's rules in force, for what the reasons quote (the store's signed redaction.extra)
    setRulesInForce(m.rules)
    answer = {id: m.id, reading: readText(m.candidate, m.texts, m.weights)}
  } catch (error) {
    // read again in the caller's thread, where the same error is thrown as runVote would throw it
    answer = {id: m.id, failed: error instanceof Error ? error.message : String(error)}
  }
  parentPort!.postMessage(answer)
})
parentPort!.postMessage({ready: true})
