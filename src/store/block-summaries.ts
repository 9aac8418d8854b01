/** How long the summaries wait, once every block is summarised, before they look again. */
const INTERVAL_MS = 1000

export interface SummarySteps {
  /** Summarises one block, and answers whether it found one. */
  step(): Promise<boolean>
  /** Puts the blocks of the books deleted since the last look back on the list. */
  noteDeletions(): Promise<void>
}

/**
 * Keeps the summaries of the blocks of books (migrations 023 and 028) up to date: a look notes
 * the deletions since the last, then a step summarises one block waiting for it, and steps follow
 * each other, each in a turn of its own, until none is left; then the next look comes after
 * INTERVAL_MS. Deletions are noted once a look, not between steps: a stream of deletions in one
 * block would otherwise have it summarised again and again. Finds are exact whatever the
 * summaries' state: a block waiting for its summary is read whole.
 */
export class BlockSummaries {
  readonly #steps: SummarySteps
  readonly #timer: NodeJS.Timeout
  #running: Promise<void> | undefined
  #stopped = false

  constructor(steps: SummarySteps) {
    this.#steps = steps
    this.#timer = setInterval(() => this.#start(), INTERVAL_MS).unref()
    this.#start()
  }

  #start(): void {
    if (this.#running !== undefined || this.#stopped) return
    this.#running = this.#run().finally(() => (this.#running = undefined))
  }

  async #run(): Promise<void> {
    // A failed look or step is tried again at the next look: its deletions are still unseen, its
    // block still waiting.
    await this.#steps.noteDeletions().catch(() => {})
    while (!this.#stopped && (await this.#steps.step().catch(() => false))) await new Promise((resolve) => setImmediate(resolve))
  }

  /** Takes no further step, once the one under way has ended. */
  async stop(): Promise<void> {
    this.#stopped = true
    clearInterval(this.#timer)
    await this.#running
  }
}
