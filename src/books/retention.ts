import { setTimeout as sleep } from 'node:timers/promises'
import type { Principal } from '../auth/principal.ts'
import type { Catalogue } from './catalogue.ts'

/** Who the history names for a purge after the retention time: no username holds a colon. */
export const RETENTION: Principal = { actor: 'system:retention', username: 'system:retention', role: 'admin' }

const DAY_MS = 24 * 60 * 60 * 1000

export interface RetentionOptions {
  /** Days a book stays in the trash before it is purged. */
  days: number
  /** How often to look for books whose time is up. */
  intervalMs?: number
  /** Books purged at once; the store answers other requests between such steps. */
  step?: number
  /** The pause between steps while more books are due. */
  pauseMs?: number
  /** Told when a pass fails; the next pass tries again. */
  onError: (err: unknown) => void
}

/**
 * Purges the books that have been in the trash longer than the retention time, a step of a few
 * at a time with a pause between steps, so that a backlog never holds the store: once when
 * started, then at every interval.
 */
export class TrashRetention {
  readonly #catalogue: Catalogue
  readonly #days: number
  readonly #intervalMs: number
  readonly #step: number
  readonly #pauseMs: number
  readonly #onError: (err: unknown) => void
  readonly #stopping = new AbortController()
  #timer: NodeJS.Timeout | undefined
  #pass: Promise<void> = Promise.resolve()

  constructor(catalogue: Catalogue, { days, intervalMs = 10 * 60 * 1000, step = 100, pauseMs = 100, onError }: RetentionOptions) {
    this.#catalogue = catalogue
    this.#days = days
    this.#intervalMs = intervalMs
    this.#step = step
    this.#pauseMs = pauseMs
    this.#onError = onError
  }

  start(): void {
    const run = () => {
      this.#pass = this.#purgeDue().catch(this.#onError)
      void this.#pass.then(() => {
        if (!this.#stopping.signal.aborted) this.#timer = setTimeout(run, this.#intervalMs).unref()
      })
    }
    run()
  }

  /** Stops, once the step under way has ended. */
  async stop(): Promise<void> {
    this.#stopping.abort()
    clearTimeout(this.#timer)
    await this.#pass
  }

  async #purgeDue(): Promise<void> {
    const signal = this.#stopping.signal
    while (!signal.aborted) {
      const found = await this.#catalogue.purgeExpired(RETENTION, Date.now() - this.#days * DAY_MS, this.#step)
      if (found < this.#step) return
      await sleep(this.#pauseMs, undefined, { signal }).catch(() => {})
    }
  }
}
