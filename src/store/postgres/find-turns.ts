import { FairQueue } from '../fair-queue.ts'
import { StoreUnavailableError } from '../store.ts'

interface Waiting {
  resolve: (end: () => void) => void
  reject: (err: Error) => void
  timer: NodeJS.Timeout
  settled: boolean
  whole: boolean
  at: number
}

/**
 * Turns at the finds' connections: at most `slots` reads at once, those that wait taken from each
 * client in turn, so that one client's many finds do not hold up another's. The pool alone would
 * serve them in the order they came. A whole read holds its turn until its last page has gone,
 * however slowly its client reads: whole reads together hold all turns but one, kept for pages
 * (when there is more than one). A read that has no turn within its deadline fails as unavailable.
 */
export class FindTurns {
  #free: number
  #wholeFree: number
  readonly #pages = new FairQueue<Waiting>()
  readonly #wholes = new FairQueue<Waiting>()

  constructor(slots: number) {
    this.#free = slots
    this.#wholeFree = Math.max(1, slots - 1)
  }

  /** A turn for `client` within `ms`: the function it gives ends the turn, once however often called. */
  take(client: string, ms: number, { whole = false }: { whole?: boolean } = {}): Promise<() => void> {
    if (this.#free > 0 && (!whole || this.#wholeFree > 0)) return Promise.resolve(this.#grant(whole))
    return new Promise((resolve, reject) => {
      const waiting: Waiting = {
        resolve,
        reject,
        settled: false,
        whole,
        at: performance.now(),
        timer: setTimeout(
          () => {
            waiting.settled = true
            reject(new StoreUnavailableError(new Error(`No turn for a find within ${ms} ms`)))
          },
          Math.max(0, ms),
        ),
      }
      ;(whole ? this.#wholes : this.#pages).push(client, waiting)
    })
  }

  #grant(whole: boolean): () => void {
    this.#free--
    if (whole) this.#wholeFree--
    let ended = false
    return () => {
      if (ended) return
      ended = true
      this.#free++
      if (whole) this.#wholeFree++
      this.#next()
    }
  }

  /** Gives the free turns to those waiting: of the next page and the next whole read, the one that came first. */
  #next(): void {
    while (this.#free > 0) {
      const page = head(this.#pages)
      const whole = this.#wholeFree > 0 ? head(this.#wholes) : undefined
      const next = page === undefined || (whole !== undefined && whole.at < page.at) ? whole : page
      if (next === undefined) return
      ;(next.whole ? this.#wholes : this.#pages).shift()
      next.settled = true
      clearTimeout(next.timer)
      next.resolve(this.#grant(next.whole))
    }
  }
}

/** The next of `queue` that still waits, those given up before it dropped. */
function head(queue: FairQueue<Waiting>): Waiting | undefined {
  for (let item = queue.peek(); item !== undefined; item = queue.peek()) {
    if (!item.settled) return item
    queue.shift()
  }
  return undefined
}
