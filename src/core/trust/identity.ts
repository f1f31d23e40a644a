/**
 * A store's identity: a random id made by `engram init` (`.engram/store-id`, committed so
 * that a clone can learn it) and pinned on each machine beside the store's root keys
 * (keys.ts rootPinFile). Config signatures and scope manifests bind the pinned id, so a
 * config or manifest signed for one store is not in force in another store of the same
 * owner key (STANDARD R13, R21; README "Store identity").
 *
 * The file in the store is only where the id travels to a new clone: `keys trust --root`
 * and `keys bind` pin it, and from then on only the pin decides. An agent that edits the
 * file changes nothing on a machine that has pinned the id (`status` and `verify` say so).
 */
import {randomBytes} from 'node:crypto'

import {blobBytes} from '../git/git.js'
import type {Store} from '../store/store.js'

export const STORE_ID_FILE = '.engram/store-id'

const ID = /^[0-9a-f]{32}$/

export function isStoreId(value: unknown): value is string {
  return typeof value === 'string' && ID.test(value)
}

export function newStoreId(): string {
  return randomBytes(16).toString('hex')
}

export function storeIdText(id: string): string {
  return `${id}\n`
}

function parseStoreId(text: string | undefined): string | undefined {
  const id = text?.trim()
  return isStoreId(id) ? id : undefined
}

/** The id `.engram/store-id` in the work tree names, when it names one. */
export function workTreeStoreId(store: Store): string | undefined {
  return parseStoreId(store.readText(STORE_ID_FILE))
}

/** The id `.engram/store-id` names in HEAD's tree, when it names one. */
export async function committedStoreId(store: Store): Promise<string | undefined> {
  try {
    return parseStoreId((await blobBytes(store.top, `HEAD:${store.gitPath(STORE_ID_FILE)}`)).toString('utf8'))
  } catch {
    return undefined
  }
}

/**
 * Why a signed record (`what`: "config.sig", "the manifest") is not bound to this store:
 * it names another identity, or none where this machine has pinned one. A store with no
 * identity pinned (pinned before stores had one) takes only records that name none, as
 * it did: one that names an identity is another store's, or this store's bound on another
 * machine, and counts here once `keys bind` pins it (README "Store identity").
 */
export function storeBindingProblem(what: string, signedFor: string | undefined, pinned: string | undefined): string | undefined {
  if (signedFor === pinned) return undefined
  if (pinned === undefined) return `${what} was signed for store ${signedFor}, and this machine has pinned no identity for this store (\`engram keys bind\` says how to bind it)`
  if (signedFor === undefined) return `${what} names no store identity (it was signed before this store had one, or for another store); this store is ${pinned}`
  return `${what} was signed for store ${signedFor}, not this one (${pinned})`
}
