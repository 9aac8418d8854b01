import { scryptSync } from 'node:crypto'
import { readlinkSync } from 'node:fs'
import { getPriority, setPriority } from 'node:os'
import { parentPort } from 'node:worker_threads'

/** What the hasher asks of its thread: scrypt's inputs. */
export interface HashRequest {
  password: string
  salt: Uint8Array
  N: number
  r: number
  p: number
  keyBytes: number
  maxmem: number
}

export type HashAnswer = { key: Uint8Array } | { error: string }

/** How far below the event loop's thread hashes run: about a tenth of the core when both want it. */
const BELOW = 10

// Linux gives each thread a priority of its own. Below the event loop's thread, a hash yields the
// core to it at once when a request comes in: at the same priority, such a request waited several
// milliseconds for the scheduler to switch (docs/performance.md). Not the lowest, so that other
// work on the machine cannot starve logins.
try {
  setPriority(Number(readlinkSync('/proc/thread-self').split('/').at(-1)), Math.min(19, getPriority() + BELOW))
} catch {
  // Without /proc/thread-self there is no thread of its own to name: the thread keeps the process's priority.
}

parentPort!.on('message', ({ password, salt, N, r, p, keyBytes, maxmem }: HashRequest) => {
  let answer: HashAnswer
  try {
    answer = { key: scryptSync(password, salt, keyBytes, { N, r, p, maxmem }) }
  } catch (err) {
    answer = { error: (err as Error).message }
  }
  parentPort!.postMessage(answer)
})
