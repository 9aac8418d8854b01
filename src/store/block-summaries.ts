/** How long the summaries wait, once every block is summarised, before they look again. */
const INTERVAL_MS = 1000

/**
 * Keeps the summaries of the blocks of books (migration 023) up to date: a step summarises one
 * block waiting for it, and steps follow each other, each in a turn of its own, until none is
 * left; then the next look comes after INTERVAL_MS. Finds are exact whatever the summaries'
 * state: a block waiting for its summary is read whole.
 */
export class BlockSummaries {
  readonly #step: () => Promise<boolean>
  readonly #timer: NodeJS.Timeout
  #running: Promise<void> | undefined
  #stopped = false

  /** `step` summarises one block, and answers whether it found one. */
  constructor(step: () => Promise<boolean>) {
    this.#step = step
    this.#timer = setInterval(() => this.#start(), INTERVAL_MS).unref()
    this.#start()
  }

  #start(): void {
    if (this.#running !== undefined || this.#stopped) return
    this.#running = this.#run().finally(() => (this.#running = undefined))
  }

  async #run(): Promise<void> {
    // A failed step is tried again at the next look: its block is still waiting.
    while (!this.#stopped && (await this.#step().catch(() => false))) await new Promise((resolve) => setImmediate(resolve))
  }

  /** Takes no further step, once the one under way has ended. */
  async stop(): Promise<void> {
    this.#stopped = true
    clearInterval(this.#timer)
    await this.#running
  }
}
