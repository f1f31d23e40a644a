/**
 * `engram doctor`: what is wrong with this store on this machine, each finding with the
 * fix it suggests, and `--fix` for the safe ones (README "Doctor"). A check reads; only a
 * fix changes anything, and only what engram itself would do at its next command
 * (recover a dead process's lock or journal, rebuild the derived index, tighten the mode
 * of a private file). Trust is never changed by a fix: pinning a root, trusting a key or
 * signing a config stays the owner's act, named as the next step.
 */
import {spawnSync} from 'node:child_process'
import {chmodSync, existsSync, lstatSync, readdirSync, statSync} from 'node:fs'
import {join} from 'node:path'

import {gitRead, indexLockPath} from '../git/git.js'
import {readSyncState} from '../sync/remote.js'
import {storeIdentity} from '../trust/bind.js'
import {listKeys} from '../trust/keyops.js'
import {loadKeyring, rootNotPinned, rootPinFile} from '../trust/keys.js'
import {privateKeyDir} from '../trust/privatekey.js'
import {verifyStore} from '../trust/verify.js'
import {DEFAULT_WEIGHTS, readWeights} from '../write/vote/learned.js'
import {configDir} from './cachefile.js'
import {lockHolder, withStoreLock} from './lock.js'
import {socketPath} from './private.js'
import {storeStatus} from './status.js'
import type {Store} from './store.js'

export type CheckStatus = 'ok' | 'warn' | 'fail'

export interface Check {
  check: string
  status: CheckStatus
  detail: string
  /** what to do about it (a command, or what to change) */
  fix?: string
  /** `doctor --fix` can do it */
  fixable?: boolean
  /** `doctor --fix` did it */
  fixed?: boolean
}

const ok = (check: string, detail: string): Check => ({check, status: 'ok', detail})

/**
 * The learned validator's weights, as every write will load them: the file the config in
 * force names, else the one shipped in the package. One engram cannot read (gone, not a
 * weights file, a featuriser this engram does not have) makes that validator abstain on
 * every write, with the reason in each vote and nowhere else: a failed check here.
 */
export function weightsCheck(named: string | null): Check {
  const file = named ?? DEFAULT_WEIGHTS
  const whose = named ? 'named by the signed config (`vote.learned.weights`)' : 'shipped with engram'
  const {model, problem} = readWeights(file)
  if (model) return ok('vote weights', `the learned validator reads ${file}, ${whose}: featuriser ${model.features}, ${2 ** model.bits} weights`)
  return {
    check: 'vote weights',
    status: 'fail',
    detail: `the learned validator cannot read ${file}, ${whose}, so it abstains on every write: ${problem}`,
    fix: named
      ? 'name a weights file this engram reads in .engram/config.yml (`vote.learned.weights`), or remove the line for the shipped one; then `engram config sign`'
      : 'reinstall engram (its package holds models/vote-lr.json)',
  }
}

/** Files of the private folders whose mode lets others in (keys 0600, folders 0700). */
function looseModes(): {path: string; mode: number; want: number}[] {
  const out: {path: string; mode: number; want: number}[] = []
  const look = (path: string, want: number) => {
    try {
      // a link is never followed (a chmod through it could reach any file); engram refuses linked private files anyway
      const st = lstatSync(path)
      if (st.isSymbolicLink()) return
      if ((st.mode & 0o077) !== 0) out.push({path, mode: st.mode & 0o777, want})
    } catch {
      // absent: nothing to tighten
    }
  }
  const keys = privateKeyDir()
  look(keys, 0o700)
  look(join(configDir(), 'private'), 0o700)
  try {
    for (const n of readdirSync(keys)) if (n.endsWith('.key')) look(join(keys, n), 0o600)
  } catch {
    // no key folder
  }
  return out
}

export async function diagnose(store: Store, opts: {fix?: boolean; verify?: boolean} = {}): Promise<Check[]> {
  const checks: Check[] = []
  const fix = opts.fix === true

  const git = spawnSync('git', ['--version'], {encoding: 'utf8'})
  checks.push(git.status === 0 ? ok('git', git.stdout.trim()) : {check: 'git', status: 'fail', detail: 'git is not on PATH', fix: 'install git (engram keeps memory in a git repository)'})

  checks.push(
    store.top === store.root
      ? ok('history', `the store is a git repository of its own (${store.root})`)
      : {
          check: 'history',
          status: 'warn',
          detail: `the store's commits go to the repository at ${store.top}, on whatever branch it has checked out; an agent that can commit there can rewrite the store's history`,
          fix: 'give the store a repository of its own (`engram adopt claude-code` makes a new store that way)',
        },
  )

  const policy = store.policy
  checks.push(
    policy.state === 'unsigned'
      ? {check: 'config', status: 'warn', detail: `.engram/config.yml is not in force: ${policy.problem}; in force: ${policy.source}`, fix: 'review it, then `engram config sign` (shows the digest) and `engram config sign --digest <hex>`'}
      : ok('config', policy.state === 'signed' ? `signed (serial ${policy.serial})` : 'built-in defaults (never signed)'),
  )

  checks.push(weightsCheck(store.config.vote.learned.weights))

  const keys = await listKeys(store)
  const owners = keys.filter((k) => k.role === 'owner' && k.status === 'trusted')
  const local = owners.filter((k) => k.local)
  if (owners.length === 0) checks.push({check: 'keys', status: 'warn', detail: 'no trusted owner key: nothing can be accepted, and nothing curated is served', fix: '`engram keys generate owner`, then `engram keys trust --role owner owner.pub`'})
  else if (local.length === 0) checks.push({check: 'keys', status: 'warn', detail: `no private key of a trusted owner on this machine (trusted: ${owners.map((k) => k.name).join(', ')}): this machine can review but not accept`, fix: 'accept where the owner key is, or trust a key of this machine from there'})
  else checks.push(ok('keys', `owner key ${local.map((k) => k.name).join(', ')} here, trusted`))

  const loose = looseModes()
  if (loose.length === 0) checks.push(ok('key modes', 'private keys 0600, their folders 0700'))
  else {
    let fixed = fix
    if (fix) {
      for (const l of loose) {
        try {
          chmodSync(l.path, l.want)
        } catch {
          fixed = false
        }
      }
    }
    checks.push({
      check: 'key modes',
      status: 'fail',
      detail: loose.map((l) => `${l.path} is ${l.mode.toString(8).padStart(3, '0')}`).join('; '),
      fix: loose.map((l) => `chmod ${l.want.toString(8)} '${l.path}'`).join('; '),
      fixable: true,
      fixed,
    })
  }

  const notPinned = await rootNotPinned(store)
  checks.push(notPinned ? {check: 'trust', status: 'warn', detail: notPinned.message, fix: `check the fingerprint with the owner, then \`${notPinned.command}\``} : ok('trust', 'the store\'s root keys are pinned on this machine'))
  const identity = await storeIdentity(store)
  if (identity.problem) checks.push({check: 'identity', status: 'fail', detail: `${identity.problem} (pin: ${rootPinFile(store)})`, fix: '`engram keys bind` (README "Store identity")'})
  else if (identity.id) checks.push(ok('identity', `bound to ${identity.id}, pinned on this machine in ${rootPinFile(store)}`))

  // a dead process's lock or half-done change: what the next writing command recovers anyway
  const holder = lockHolder(store)
  const journal = existsSync(store.abs('.engram/txn.tmp-journal')) || existsSync(store.abs('.engram/index-sync.tmp-pending'))
  if (!holder && !journal) checks.push(ok('lock', 'no lock held, no interrupted change'))
  else if (holder && !holder.stale) checks.push(ok('lock', `held by process ${holder.pid ?? '?'} on ${holder.host ?? '?'} since ${holder.time ?? '?'} (running)`))
  else {
    let fixed = false
    if (fix) {
      await withStoreLock(store, async () => {}, {timeoutMs: 5000})
      fixed = !existsSync(store.abs('.engram/txn.tmp-journal')) && !lockHolder(store)
    }
    const what = [holder ? `a lock left by process ${holder.pid ?? '?'}, which is gone` : '', journal ? 'an interrupted change (a journal)' : ''].filter(Boolean).join(' and ')
    checks.push({check: 'lock', status: 'warn', detail: `${what}: the next command that writes recovers it`, fix: '`engram doctor --fix` recovers it now', fixable: true, fixed})
  }
  const indexLock = await indexLockPath(store.top)
  if (existsSync(indexLock)) {
    const age = Math.round((Date.now() - statSync(indexLock).mtimeMs) / 1000)
    checks.push({check: 'git index lock', status: 'warn', detail: `${indexLock} exists (${age} s old): another git may be running; engram commits around it and stages at its next command`, fix: age > 600 ? `if no git is running, remove ${indexLock}` : 'wait for the git that holds it'})
  } else checks.push(ok('git index lock', 'none'))

  const {status: indexStatus, rebuild} = await import('../index/index.js')
  const stale = (await indexStatus(store)).filter((s) => s.tree !== null && !s.fresh)
  if (stale.length === 0) checks.push(ok('index', 'every built index is fresh (a scope\'s is built at its first search)'))
  else {
    if (fix) await rebuild(store, {scopes: stale.map((s) => s.scope)})
    checks.push({check: 'index', status: 'warn', detail: `stale: ${stale.map((s) => s.scope).join(', ')} (brought up to date at the next search)`, fix: '`engram index rebuild`', fixable: true, fixed: fix})
  }

  const sock = socketPath(store.root).path
  checks.push(ok('serve', existsSync(sock) ? `a warm search server's socket is at ${sock}` : 'no warm search server (started when a store reaches the size that needs one)'))

  const sync = readSyncState(store)
  if (!sync) checks.push(ok('sync', 'no remote set on this machine (`engram sync --remote <url>` shares this store with other hosts)'))
  else {
    const ahead = sync.last ? (await gitRead(store.top, ['rev-list', '--count', '--end-of-options', `${sync.last.commit}..HEAD`], {allowFail: true})).trim() : ''
    const since = sync.last ? `last synced ${sync.last.at}` : 'never synced yet'
    checks.push(Number(ahead) > 0
      ? {check: 'sync', status: 'warn', detail: `${sync.url} (${sync.branch}), ${since}; ${ahead} commit(s) here not on the remote yet`, fix: '`engram sync`'}
      : ok('sync', `${sync.url} (${sync.branch}), ${since}${ahead === '0' ? ', nothing here the remote lacks' : ''}`))
  }

  const st = await storeStatus(store)
  checks.push(
    st.broken > 0
      ? {check: 'queue', status: 'warn', detail: `${st.pending} pending, ${st.quarantined} quarantined, ${st.broken} unreadable`, fix: '`engram review list` and `engram quarantine list` name the unreadable ones'}
      : ok('queue', `${st.pending} pending, ${st.quarantined} quarantined`),
  )
  checks.push(
    st.escalations.length > 0
      ? {check: 'sessions', status: 'warn', detail: `${st.sessions} sessions (${st.tainted_sessions} tainted); escalated: ${st.escalations.map((e) => `${e.session === '-' ? e.agent : e.session}`).join(', ')}`, fix: '`engram status` shows why; review their writes'}
      : ok('sessions', `${st.sessions} sessions (${st.tainted_sessions} tainted)`),
  )

  if (opts.verify !== false) {
    const report = await verifyStore(store, await loadKeyring(store), {})
    checks.push(report.problems.length === 0 ? ok('verify', `${report.checked} curated file(s) verify`) : {check: 'verify', status: 'fail', detail: `${report.problems.length} problem(s): ${report.problems.slice(0, 3).map((p) => `${p.kind} ${p.path}`).join('; ')}${report.problems.length > 3 ? '; …' : ''}`, fix: '`engram verify` names each; files with problems are not served'})
  }
  return checks
}
