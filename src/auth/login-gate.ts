import { InvalidCredentials, TooManyAttempts } from './errors.ts'
import { clientKey, type LoginLimiter } from './login-limiter.ts'

/** A check of a client's count made before its attempt was read, for `decide` to go on from. */
export interface Precheck {
  /** How many failures this gate had recorded, of any client, when the count was read. */
  failuresRecordedBefore: number
}

export interface LoginGate {
  /** Refuses a limited client with 429, before its body is read. */
  precheck(address: string): Promise<Precheck>
  /** Settles when the attempt may have its token; fails with 429, 401, or the store's failure. */
  decide(address: string, matches: () => boolean, precheck?: Precheck): Promise<void>
}

interface Attempt {
  address: string
  precheck: Precheck | undefined
  /** True when the attempt carries the right credentials. */
  matches: () => boolean
  resolve: () => void
  reject: (err: unknown) => void
}

/**
 * Decides login attempts against the limit. Within this process a client's attempts take turns
 * from the check of its count to its recorded failure, so concurrent guesses cannot all pass a
 * check made before any was counted; every attempt takes its turn, right pair or not, so the
 * wait tells nothing about it.
 *
 * The attempts waiting together share one read of the count, up to the first wrong one: it is
 * counted before it is answered (a client learns nothing from an uncounted guess, and a store
 * that cannot count it answers 503), and the attempts after it wait for a read that sees it.
 * The first of them goes on from its precheck when this process recorded no failure since that
 * read. So a right pair costs the store nothing of its own, and each failure is still checked
 * against a count read after the failure before it, as when every attempt read the count itself.
 */
export function createLoginGate(limiter: LoginLimiter): LoginGate {
  const queues = new Map<string, Attempt[]>()
  let failuresRecorded = 0

  async function drain(key: string, queue: Attempt[]): Promise<void> {
    while (queue.length > 0) {
      const { address, precheck } = queue[0]!
      let retryAfter = 0
      try {
        if (precheck?.failuresRecordedBefore !== failuresRecorded) retryAfter = await limiter.retryAfterSeconds(address)
      } catch (err) {
        for (const attempt of queue.splice(0)) attempt.reject(err)
        break
      }
      while (queue.length > 0) {
        const attempt = queue.shift()!
        if (retryAfter > 0) attempt.reject(new TooManyAttempts(retryAfter))
        else if (attempt.matches()) attempt.resolve()
        else {
          failuresRecorded++
          try {
            await limiter.recordFailure(attempt.address)
            attempt.reject(new InvalidCredentials())
          } catch (err) {
            attempt.reject(err)
          }
          break
        }
      }
    }
    // Only keys with attempts under way are kept.
    queues.delete(key)
  }

  return {
    async precheck(address) {
      const precheck = { failuresRecordedBefore: failuresRecorded }
      const retryAfter = await limiter.retryAfterSeconds(address)
      if (retryAfter > 0) throw new TooManyAttempts(retryAfter)
      return precheck
    },

    decide: (address, matches, precheck) =>
      new Promise<void>((resolve, reject) => {
        const key = clientKey(address)
        const attempt = { address, precheck, matches, resolve, reject }
        const queue = queues.get(key)
        if (queue !== undefined) {
          queue.push(attempt)
          return
        }
        const fresh = [attempt]
        queues.set(key, fresh)
        void drain(key, fresh)
      }),
  }
}
