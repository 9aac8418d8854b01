import { Worker } from 'node:worker_threads'
import type { IndexStep } from './search-index.ts'
import type { UpkeepAnswer, UpkeepData, UpkeepJob } from './upkeep-worker.ts'

/** How long the thread waits after a job for the next before it ends: the summaries look again every second. */
const IDLE_MS = 5000

/**
 * The store's own writes in the background, run on a thread of their own, one job at a time: the
 * steps that move new books into the search indexes, and the summaries of blocks of books.
 * At a million books a step of either took tens to hundreds of milliseconds with its commit, and
 * on the thread that answers requests every read waited for it (docs/performance.md). The store
 * lends its write turn to each job, so its own writes wait for the job to commit instead of
 * meeting SQLite's lock, and reads go on meanwhile. The thread starts with a job and ends when
 * none has come for a while.
 */
export class UpkeepThread {
  readonly #data: UpkeepData
  #worker: Worker | undefined
  #waiting: { resolve: (value: unknown) => void; reject: (err: Error) => void } | undefined
  #idle: NodeJS.Timeout | undefined

  constructor(data: UpkeepData) {
    this.#data = data
  }

  /** Moves a step of the search indexes' tail into them. */
  index(): Promise<IndexStep> {
    return this.#run('index') as Promise<IndexStep>
  }

  /** Summarises the oldest block waiting; answers whether there was one. */
  summarise(): Promise<boolean> {
    return this.#run('summarise') as Promise<boolean>
  }

  /** Puts the blocks of the books deleted since the last look back on the summaries' list. */
  noteDeletions(): Promise<void> {
    return this.#run('noteDeletions') as Promise<void>
  }

  /** Ends the thread; called between jobs. The next job starts another. */
  async end(): Promise<void> {
    clearTimeout(this.#idle)
    const worker = this.#worker
    this.#worker = undefined
    await worker?.terminate()
  }

  #run(job: UpkeepJob): Promise<unknown> {
    clearTimeout(this.#idle)
    const worker = (this.#worker ??= this.#start())
    // A job holds the process as any write does: the store's writes may wait for its turn.
    worker.ref()
    return new Promise((resolve, reject) => {
      this.#waiting = { resolve, reject }
      worker.postMessage(job)
    }).finally(() => {
      worker.unref()
      this.#idle = setTimeout(() => void this.end(), IDLE_MS).unref()
    })
  }

  #start(): Worker {
    const worker = new Worker(new URL('./upkeep-worker.ts', import.meta.url), { workerData: this.#data })
    worker.on('message', (answer: UpkeepAnswer) => {
      if (this.#worker !== worker) return
      const waiting = this.#settle()
      if (answer.ok) waiting?.resolve(answer.value)
      else waiting?.reject(new Error(answer.message))
    })
    // A thread that dies fails its job; the next starts another.
    const died = (err: Error) => {
      if (this.#worker !== worker) return
      this.#worker = undefined
      this.#settle()?.reject(err)
    }
    worker.on('error', died)
    worker.on('exit', () => died(new Error('The store’s upkeep thread stopped')))
    // After the listeners: listening for messages holds the process again, and the thread must not.
    worker.unref()
    return worker
  }

  #settle() {
    const waiting = this.#waiting
    this.#waiting = undefined
    return waiting
  }
}
