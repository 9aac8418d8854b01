import { FairQueue } from '../fair-queue.ts'
import { StoreUnavailableError } from '../store.ts'

interface Waiting {
  resolve: (end: () => void) => void
  reject: (err: Error) => void
  timer: NodeJS.Timeout
  settled: boolean
}

/**
 * Turns at the finds' connections: at most `slots` reads at once, those that wait taken from each
 * client in turn, so that one client's many finds do not hold up another's. The pool alone would
 * serve them in the order they came. A read that has no turn within its deadline fails as
 * unavailable.
 */
export class FindTurns {
  #free: number
  readonly #waiting = new FairQueue<Waiting>()

  constructor(slots: number) {
    this.#free = slots
  }

  /** A turn for `client` within `ms`: the function it gives ends the turn, once however often called. */
  take(client: string, ms: number): Promise<() => void> {
    if (this.#free > 0) {
      this.#free--
      return Promise.resolve(this.#turn())
    }
    return new Promise((resolve, reject) => {
      const waiting: Waiting = {
        resolve,
        reject,
        settled: false,
        timer: setTimeout(
          () => {
            waiting.settled = true
            reject(new StoreUnavailableError(new Error(`No turn for a find within ${ms} ms`)))
          },
          Math.max(0, ms),
        ),
      }
      this.#waiting.push(client, waiting)
    })
  }

  #turn(): () => void {
    let ended = false
    return () => {
      if (ended) return
      ended = true
      for (let next = this.#waiting.shift(); next !== undefined; next = this.#waiting.shift()) {
        if (next.settled) continue
        next.settled = true
        clearTimeout(next.timer)
        next.resolve(this.#turn())
        return
      }
      this.#free++
    }
  }
}
