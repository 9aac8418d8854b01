import { isIP } from 'node:net'

export interface LoginLimiterOptions {
  /** Failed logins allowed within one window; the next attempt is refused. */
  maxFailures?: number
  windowMs?: number
  /** Addresses remembered at once; the least recently failing is forgotten first. */
  maxAddresses?: number
  now?: () => number
}

export const LOGIN_MAX_FAILURES = 10
export const LOGIN_WINDOW_MS = 15 * 60 * 1000
const MAX_ADDRESSES = 10_000

/** The groups of an IPv6 address, with `::` expanded and an embedded IPv4 tail counted as two. */
function ipv6Groups(address: string): string[] {
  const [head = '', tail] = address.split('::')
  const groups = (part: string) =>
    part === '' ? [] : part.split(':').flatMap((group) => (group.includes('.') ? ['0', '0'] : [group]))
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
  const prefix = ipv6Groups(plain.toLowerCase()).slice(0, 4).map((group) => parseInt(group, 16).toString(16))
  return `${prefix.join(':')}::/64`
}

/**
 * Counts failed logins per client address in a sliding window: once `maxFailures` fall
 * within `windowMs`, the address is refused until the oldest of them leaves the window.
 * Memory stays bounded: at most `maxAddresses` addresses with `maxFailures` times each.
 */
export class LoginLimiter {
  readonly #maxFailures: number
  readonly #windowMs: number
  readonly #maxAddresses: number
  readonly #now: () => number
  /** Failure times per key, oldest first; Map order is least recently failing first. */
  readonly #failures = new Map<string, number[]>()

  constructor({ maxFailures = LOGIN_MAX_FAILURES, windowMs = LOGIN_WINDOW_MS, maxAddresses = MAX_ADDRESSES, now = Date.now }: LoginLimiterOptions = {}) {
    this.#maxFailures = maxFailures
    this.#windowMs = windowMs
    this.#maxAddresses = maxAddresses
    this.#now = now
  }

  /** Addresses currently remembered. */
  get size(): number {
    return this.#failures.size
  }

  /** Whole seconds until `address` may try again; 0 when it may now. */
  retryAfterSeconds(address: string): number {
    const key = clientKey(address)
    const times = this.#recent(key)
    if (times.length < this.#maxFailures) return 0
    return Math.max(1, Math.ceil((times[0]! + this.#windowMs - this.#now()) / 1000))
  }

  recordFailure(address: string): void {
    const key = clientKey(address)
    const times = this.#recent(key)
    times.push(this.#now())
    if (times.length > this.#maxFailures) times.shift()
    this.#failures.delete(key)
    this.#failures.set(key, times)
    if (this.#failures.size > this.#maxAddresses) {
      this.#failures.delete(this.#failures.keys().next().value!)
    }
  }

  /** The failures of `key` still inside the window; forgets the key when there are none. */
  #recent(key: string): number[] {
    const times = this.#failures.get(key)
    if (times === undefined) return []
    const since = this.#now() - this.#windowMs
    while (times.length > 0 && times[0]! <= since) times.shift()
    if (times.length === 0) this.#failures.delete(key)
    return times
  }
}
