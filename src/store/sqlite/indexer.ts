import { Worker } from 'node:worker_threads'
import type { IndexStep } from './search-index.ts'
import type { IndexerData } from './indexer-worker.ts'

/**
 * Steps of the search indexes' catch-up after an import, run on a thread of their own, one at a
 * time: a step of an import's books takes tens of milliseconds at a million books, and on the
 * thread that answers requests those steps held every read for as long as the catch-up lasted
 * (docs/performance.md). The store lends its write turn to each step, so its own writes wait for
 * the step instead of the lock. The thread starts with the first step and ends when told.
 */
export class IndexerThread {
  readonly #data: IndexerData
  #worker: Worker | undefined
  #waiting: { resolve: (step: IndexStep) => void; reject: (err: Error) => void } | undefined

  constructor(data: IndexerData) {
    this.#data = data
  }

  step(): Promise<IndexStep> {
    const worker = (this.#worker ??= this.#start())
    return new Promise((resolve, reject) => {
      this.#waiting = { resolve, reject }
      worker.postMessage('step')
    })
  }

  /** Ends the thread; called between steps. The next step starts another. */
  async end(): Promise<void> {
    const worker = this.#worker
    this.#worker = undefined
    await worker?.terminate()
  }

  #start(): Worker {
    const worker = new Worker(new URL('./indexer-worker.ts', import.meta.url), { workerData: this.#data })
    worker.unref()
    worker.on('message', (step: IndexStep) => {
      if (this.#worker === worker) this.#settle()?.resolve(step)
    })
    // A thread that dies fails its step; the next starts another.
    const died = (err: Error) => {
      if (this.#worker !== worker) return
      this.#worker = undefined
      this.#settle()?.reject(err)
    }
    worker.on('error', died)
    worker.on('exit', () => died(new Error('The search indexes’ thread stopped')))
    return worker
  }

  #settle() {
    const waiting = this.#waiting
    this.#waiting = undefined
    return waiting
  }
}
