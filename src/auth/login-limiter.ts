import { isIP } from 'node:net'
import type { LoginFailureRepository } from '../store/store.ts'

export interface LoginLimiterOptions {
  /** Failed logins allowed within one window; the next attempt is refused. */
  maxFailures?: number
  windowMs?: number
  now?: () => number
}

export const LOGIN_MAX_FAILURES = 10
export const LOGIN_WINDOW_MS = 15 * 60 * 1000

/** The groups of an IPv6 address, with `::` expanded and an embedded IPv4 tail counted as two. */
function ipv6Groups(address: string): string[] {
  const [head = '', tail] = address.split('::')
  const groups = (part: string) => (part === '' ? [] : part.split(':').flatMap((group) => (group.includes('.') ? ['0', '0'] : [group])))
  const left = groups(head)
  const right = tail === undefined ? [] : groups(tail)
  return [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right]
}

/**
 * The key an address is counted under. One IPv6 host usually holds a whole /64, so an
 * attacker could otherwise take a fresh address for every ten guesses.
 */
export function clientKey(address: string): string {
  const plain = address.split('%')[0]!
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(plain)
  if (mapped) return mapped[1]!
  if (isIP(plain) !== 6) return plain
  const prefix = ipv6Groups(plain.toLowerCase())
    .slice(0, 4)
    .map((group) => parseInt(group, 16).toString(16))
  return `${prefix.join(':')}::/64`
}

/** Counts failed logins per client address and says how long an address must wait. */
export interface LoginLimiter {
  /** Whole seconds until `address` may try again; 0 when it may now. */
  retryAfterSeconds(address: string): Promise<number>
  recordFailure(address: string): Promise<void>
}

/**
 * Counts failed logins per client address in a sliding window, in the store, so every process
 * and instance on one database shares the count: once `maxFailures` fall within `windowMs`, the
 * address is refused until the oldest of them leaves the window. Each failure recorded deletes
 * the failures older than the window, so the table holds at most one window's worth.
 */
export class StoreLoginLimiter implements LoginLimiter {
  readonly #failures: LoginFailureRepository
  readonly #maxFailures: number
  readonly #windowMs: number
  readonly #now: () => number
  /** Reads of the count asked for during this turn of the event loop, by client key. */
  #reads = new Map<string, Promise<number[]>>()

  constructor(
    failures: LoginFailureRepository,
    { maxFailures = LOGIN_MAX_FAILURES, windowMs = LOGIN_WINDOW_MS, now = Date.now }: LoginLimiterOptions = {},
  ) {
    this.#failures = failures
    this.#maxFailures = maxFailures
    this.#windowMs = windowMs
    this.#now = now
  }

  async retryAfterSeconds(address: string): Promise<number> {
    const now = this.#now()
    const times = await this.#recentFailures(clientKey(address), now)
    if (times.length < this.#maxFailures) return 0
    // The oldest of the newest `maxFailures`: once it leaves the window, fewer remain in it.
    return Math.max(1, Math.ceil((times.at(-1)! + this.#windowMs - now) / 1000))
  }

  recordFailure(address: string): Promise<void> {
    const now = this.#now()
    const key = clientKey(address)
    // A read already under way may not see this failure: the next check reads again.
    this.#reads.delete(key)
    return this.#failures.record(key, now, now - this.#windowMs)
  }

  /**
   * The checks of one client asked for during one turn share one read: they are concurrent, so
   * one read serves each as well as its own would, and a client's burst of logins costs the
   * store one query instead of one each.
   */
  #recentFailures(key: string, now: number): Promise<number[]> {
    let read = this.#reads.get(key)
    if (read === undefined) {
      if (this.#reads.size === 0) setImmediate(() => this.#reads.clear())
      const started = this.#failures.recent(key, now - this.#windowMs, this.#maxFailures)
      // A failed read is not shared further: the next check tries again.
      started.catch(() => {
        if (this.#reads.get(key) === started) this.#reads.delete(key)
      })
      this.#reads.set(key, started)
      read = started
    }
    return read
  }
}
