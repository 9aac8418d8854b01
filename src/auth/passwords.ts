import { randomBytes, timingSafeEqual } from 'node:crypto'
import { Worker } from 'node:worker_threads'
import { Busy } from './errors.ts'
import type { HashAnswer, HashRequest } from './hashing-thread.ts'

/**
 * scrypt's cost: N=2^14 with r=8, p=5 is one of the settings the OWASP password storage cheat
 * sheet gives as equal in strength to N=2^17, r=8, p=1, with a sixteenth of its memory (16 MiB a
 * hash). Each hash carries its own parameters, so a change of cost applies to new hashes and
 * leaves the stored ones checkable.
 */
export const DEFAULT_HASH_COST = 14
/** The costs PASSWORD_HASH_COST may choose: below 10 a hash is cheap to guess; 17 needs 128 MiB a hash. */
export const HASH_COSTS = { min: 10, max: 17 }
const R = 8
const P = 5
const KEY_BYTES = 32
const SALT_BYTES = 16
/** scrypt takes 128 * N * r bytes: room for the highest cost, with the slack it asks for. */
const MAXMEM = 2 * 128 * R * 2 ** HASH_COSTS.max

/** A thread that computes one hash at a time, below the process's priority (hashing-thread.ts). */
class HashingThread {
  readonly #worker = new Worker(new URL('./hashing-thread.ts', import.meta.url))
  #running: { resolve: (key: Buffer) => void; reject: (err: Error) => void } | undefined
  #failure: Error | undefined

  constructor() {
    this.#worker.on('message', (answer: HashAnswer) => {
      const running = this.#running
      this.#running = undefined
      // Held by each hash only: an idle thread keeps no process alive.
      this.#worker.unref()
      if ('key' in answer) running?.resolve(Buffer.from(answer.key))
      else running?.reject(new Error(answer.error))
    })
    const fail = (err: Error) => {
      this.#failure ??= err
      this.#running?.reject(err)
      this.#running = undefined
    }
    this.#worker.on('error', fail)
    this.#worker.on('exit', (code) => fail(new Error(`the hashing thread exited with code ${code}`)))
  }

  get failed(): boolean {
    return this.#failure !== undefined
  }

  derive(request: HashRequest): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      this.#running = { resolve, reject }
      this.#worker.ref()
      this.#worker.postMessage(request)
    })
  }
}

/**
 * Threads not hashing now, kept for the next hash as libuv keeps its pool: one process's hashers
 * share them, so there are never more threads than hashes that ran at once.
 */
const idle: HashingThread[] = []

async function derive(password: string, salt: Buffer, N: number, r: number, p: number): Promise<Buffer> {
  // A thread that died while idle is left behind: the hash goes to a live one, or a new one.
  let thread = idle.pop()
  while (thread?.failed) thread = idle.pop()
  thread ??= new HashingThread()
  try {
    return await thread.derive({ password, salt, N, r, p, keyBytes: KEY_BYTES, maxmem: MAXMEM })
  } finally {
    if (!thread.failed) idle.push(thread)
  }
}

export interface PasswordHasherOptions {
  /** scrypt's N of new hashes is 2 to this power (PASSWORD_HASH_COST). */
  cost?: number
  /** Hashes computed at once, each on a thread of its own. */
  lanes?: number
  /** Hashes waiting for a lane; more are refused with 503, so that memory stays bounded. */
  queue?: number
  /**
   * The longest a new hash may expect to wait for a lane, judged by how long hashes have taken:
   * beyond it a login is refused with 503 at once, rather than answered after its client, or the
   * request timeout, has given up on it.
   */
  maxWaitMs?: number
  /** Hashes that may always wait, however slow hashes are: a handful of people signing in at once is never refused. */
  alwaysQueue?: number
}

/**
 * Hashes and checks passwords off the event loop, a lane at a time: a burst of logins waits its
 * turn, or is refused, instead of taking every core and the memory of as many hashes at once.
 * Each lane's thread runs below the process's priority, so that logins do not delay other requests.
 */
export class PasswordHasher {
  readonly #lanes: number
  readonly #queue: number
  readonly #maxWaitMs: number
  readonly #alwaysQueue: number
  readonly #N: number
  /** A moving average of how long a hash took, in ms; 0 until one has been timed. */
  #meanMs = 0
  #running = 0
  readonly #waiting: (() => void)[] = []
  /** A hash no password matches, checked against when there is no user, so that the refusal takes as long. */
  #decoy: Promise<string> | undefined

  constructor({ cost = DEFAULT_HASH_COST, lanes = 1, queue = 64, maxWaitMs = 15_000, alwaysQueue = 32 }: PasswordHasherOptions = {}) {
    this.#N = 2 ** cost
    this.#lanes = lanes
    this.#queue = queue
    this.#maxWaitMs = maxWaitMs
    this.#alwaysQueue = alwaysQueue
  }

  /** `scrypt$N$r$p$salt$key`, salt and key in base64url: the parameters travel with each hash. */
  hash(password: string): Promise<string> {
    return this.#inLane(async () => {
      const salt = randomBytes(SALT_BYTES)
      const key = await derive(password, salt, this.#N, R, P)
      return ['scrypt', this.#N, R, P, salt.toString('base64url'), key.toString('base64url')].join('$')
    })
  }

  verify(password: string, stored: string): Promise<boolean> {
    const [scheme, N, r, p, salt, key] = stored.split('$')
    if (scheme !== 'scrypt' || key === undefined) return Promise.resolve(false)
    return this.#inLane(async () => {
      const expected = Buffer.from(key, 'base64url')
      const derived = await derive(password, Buffer.from(salt!, 'base64url'), Number(N), Number(r), Number(p))
      return derived.length === expected.length && timingSafeEqual(derived, expected)
    })
  }

  /** Takes as long as `verify`, and is always false. */
  async decoy(password: string): Promise<false> {
    this.#decoy ??= this.hash(randomBytes(16).toString('hex'))
    await this.verify(password, await this.#decoy)
    return false
  }

  async #inLane<T>(work: () => Promise<T>): Promise<T> {
    if (this.#running >= this.#lanes) {
      const waiting = this.#waiting.length
      const tooLong = waiting >= this.#alwaysQueue && ((waiting + 1) * this.#meanMs) / this.#lanes > this.#maxWaitMs
      if (waiting >= this.#queue || tooLong) throw new Busy()
      await new Promise<void>((resolve) => this.#waiting.push(resolve))
    } else this.#running++
    const started = performance.now()
    try {
      return await work()
    } finally {
      const tookMs = performance.now() - started
      this.#meanMs = this.#meanMs === 0 ? tookMs : 0.8 * this.#meanMs + 0.2 * tookMs
      const next = this.#waiting.shift()
      // The lane passes straight to the next in line, or is freed.
      if (next) next()
      else this.#running--
    }
  }
}
