import {Flags} from '@oclif/core'
import {createInterface} from 'node:readline/promises'

import {EngramCommand, passphraseFileFlag} from '../../cli/base.js'
import {EngramError} from '../../core/store/errors.js'
import {acceptProposal, listQueue, ownerKey, rejectEntry, showEntryChecked} from '../../core/review/review.js'
import {currentSession} from '../../core/session/sessions.js'
import {Store} from '../../core/store/store.js'
import {visible} from '../../core/text/visible.js'
import {page} from '../../cli/pager.js'
import {renderEntry} from '../../cli/render.js'
import {listEnvelope, QUEUE_HEADER, queueRows, table} from '../../cli/list.js'

export default class Review extends EngramCommand {
  static override summary = 'Walk the review queue in a terminal: each diff, flags, votes and digest; accept, reject or skip.'
  static override examples = ['<%= config.bin %> review', '<%= config.bin %> review --scope tenant:acme']
  static override description = 'Accepting here accepts the digest that was displayed. Without a terminal it only lists the queue: it never prompts and never accepts.'
  static override flags = {'passphrase-file': passphraseFileFlag, scope: Flags.string({description: 'only this scope'}), key: Flags.string({description: 'owner key name'})}

  async run() {
    const {flags} = await this.parse(Review)
    const store = await Store.open(flags.base)
    // inside a session: its readable scopes' entries only, and never the interactive accept
    const session = await currentSession(store)
    const q = listQueue(store, 'pending', {scope: flags.scope, session})
    if (!process.stdin.isTTY || !process.stdout.isTTY || this.jsonEnabled() || session) {
      if (!this.jsonEnabled()) {
        for (const line of table(QUEUE_HEADER, queueRows(q.items))) this.log(line)
        for (const b of q.broken) this.warnLine(`${b.file}: ${b.error}`)
        this.note('not a terminal: listing only; use `engram review show <id>` and `engram review accept <id> --digest <hex>`')
      }
      // the JSON of `review list`: --json never prompts, so nothing is decided here
      return listEnvelope(q.items, {broken: q.broken})
    }
    // Unlock the owner key before readline takes the terminal: its passphrase prompt and the
    // queue's questions must not read the same keystrokes. Later decisions reuse the open key.
    if (q.items.length > 0) await ownerKey(store, flags.key)
    const rl = createInterface({input: process.stdin, output: process.stdout})
    // Ctrl-C and Ctrl-D end the walk quietly (null), like q: nothing undecided is touched
    const ask = (prompt: string) =>
      new Promise<string | null>((resolve) => {
        const quit = () => resolve(null)
        rl.once('close', quit)
        rl.once('SIGINT', quit)
        rl.question(prompt).then(
          (a) => {
            rl.off('close', quit)
            rl.off('SIGINT', quit)
            resolve(a)
          },
          quit,
        )
      })
    const decided: {id: string; decision: string}[] = []
    let quit = false
    try {
      for (const item of q.items) {
        if (quit) break
        const e = await showEntryChecked(store, 'pending', item.id)
        this.logRendered(`\n${await renderEntry(e)}`)
        let answer: string | null = ''
        for (;;) {
          answer = await ask('accept (y), reject (n), skip (s), full diff (f), text (t), quit (q), help (?) ')
          answer = answer === null ? null : answer.trim().toLowerCase()
          if (answer === 'f' || answer === 't') {
            const text = answer === 'f' ? await renderEntry(e, {full: true}) : proposedText(e.proposedText)
            // the pager takes the terminal; readline gets it back afterwards
            rl.pause()
            const paged = page(text)
            rl.resume()
            if (!paged) this.logRendered(text)
          }
          else if (answer === '?' || answer === 'h') this.log(REVIEW_HELP)
          else if (answer === null || ['y', 'n', 's', 'q'].includes(answer)) break
          else this.log(`"${answer}" is not an answer here: y, n, s, f, t, q or ? (help)`)
        }
        if (answer === null || answer === 'q') {
          quit = true
          break
        }
        if (answer === 'y') {
          try {
            // the digest displayed above, not one recomputed now: a change since display refuses
            const r = await acceptProposal(store, e.proposal.id, e.digest, {keyName: flags.key})
            this.log(`accepted ${r.id}`)
            decided.push({id: r.id, decision: 'accepted'})
          } catch (error) {
            if (!(error instanceof EngramError)) throw error
            this.warnLine(error.message)
          }
        } else if (answer === 'n') {
          const given = await ask('reason: ')
          if (given === null) {
            quit = true
            break
          }
          const reason = given.trim() || 'rejected in interactive review'
          await rejectEntry(store, 'pending', e.proposal.id, reason, {keyName: flags.key})
          this.log(`rejected ${e.proposal.id}`)
          decided.push({id: e.proposal.id, decision: 'rejected'})
        } else decided.push({id: e.proposal.id, decision: 'skipped'})
      }
    } finally {
      rl.close()
    }
    const count = (d: string) => decided.filter((x) => x.decision === d).length
    const left = q.items.length - count('accepted') - count('rejected')
    this.log(`\n${quit ? 'quit: ' : ''}accepted ${count('accepted')}, rejected ${count('rejected')}, skipped ${count('skipped')}; ${left} left in the queue`)
    return listEnvelope(q.items, {broken: q.broken, decided})
  }
}

/** The file as it will be after accept, every stored string made terminal-safe. */
function proposedText(text: string): string {
  return text === '' ? '(the change removes this file: no text after accepting)' : visible(text)
}

const REVIEW_HELP = [
  'y  accept: sign and commit exactly the change shown above (its digest)',
  'n  reject: asks a reason, removes the proposal, records who and why in a commit',
  's  skip: leave it in the queue, go to the next',
  'f  show the whole files\' diff (reviewer, digest, signature, version and dates included), in $ENGRAM_PAGER, $PAGER or less',
  't  show the whole text the memory will have after accepting, in the pager (a view: nothing typed there is kept)',
  'q  quit (also Ctrl-C or Ctrl-D): what is not decided stays in the queue',
].join('\n')
