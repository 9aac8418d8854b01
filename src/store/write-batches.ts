import { StoreUnavailableError } from './store.ts'

/** One kind of write, and how a run of them goes to the engine as one statement. */
export interface BatchedWrite<I, O> {
  /** The outcomes of `inputs`, in their order, from one statement. */
  run(inputs: I[]): Promise<O[]>
  /**
   * What an input writes to, when two writes to one thing cannot share a statement: a statement
   * applies its rows at once, and the second must see the first.
   */
  target?(input: I): unknown
}

interface Pending {
  write: BatchedWrite<unknown, unknown>
  input: unknown
  resolve: (value: unknown) => void
  reject: (err: unknown) => void
}

/**
 * The writes that requests ask for go to the engine in batches: each run of writes of one kind,
 * in the order they were asked for, is one statement, so one round trip and one commit.
 * Against a server, the round trip and the commit (a WAL flush) cost far more than a row.
 *
 * At most `concurrency` batches are under way at once: the writes asked for meanwhile wait and
 * go together in the next, so the busier the service, the more each commit carries (group
 * commit). None is answered before its statement committed. A write that shares a target with
 * one before it in the batch waits for the next statement, so each sees the writes asked for
 * before it, as one at a time. Batches under way together hold writes that were all asked for
 * before any of them was answered, which the engine may apply in either order, as it would
 * separate requests.
 *
 * When a statement fails for a reason other than an unavailable store (one row breaking a
 * constraint), its writes are tried one by one, so each fails or succeeds on its own.
 */
export class WriteBatches {
  readonly #concurrency: number
  #pending: Pending[] = []
  #underWay = 0
  #scheduled = false

  constructor({ concurrency = 1 }: { concurrency?: number } = {}) {
    this.#concurrency = concurrency
  }

  add<I, O>(write: BatchedWrite<I, O>, input: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.#pending.push({ write: write as BatchedWrite<unknown, unknown>, input, resolve: resolve as (value: unknown) => void, reject })
      if (!this.#scheduled && this.#underWay < this.#concurrency) {
        this.#scheduled = true
        // setImmediate, not a microtask: it runs after every request that this turn's I/O delivered.
        setImmediate(() => {
          this.#scheduled = false
          this.#start()
        })
      }
    })
  }

  #start(): void {
    if (this.#pending.length === 0 || this.#underWay >= this.#concurrency) return
    const batch = this.#pending
    this.#pending = []
    this.#underWay++
    void (async () => {
      try {
        for (const run of runs(batch)) await settle(run)
      } finally {
        this.#underWay--
        this.#start()
      }
    })()
  }
}

/** Splits `batch` into runs of one kind, each with distinct targets, keeping their order. */
function runs(batch: Pending[]): Pending[][] {
  const result: Pending[][] = []
  let current: Pending[] = []
  let targets = new Set<unknown>()
  for (const pending of batch) {
    const target = pending.write.target?.(pending.input)
    const clash = current.length > 0 && (current[0]!.write !== pending.write || (target !== undefined && targets.has(target)))
    if (clash) {
      result.push(current)
      current = []
      targets = new Set()
    }
    current.push(pending)
    if (target !== undefined) targets.add(target)
  }
  if (current.length > 0) result.push(current)
  return result
}

async function settle(run: Pending[]): Promise<void> {
  const { write } = run[0]!
  let outcomes: unknown[]
  try {
    outcomes = await write.run(run.map((pending) => pending.input))
  } catch (err) {
    if (run.length === 1 || err instanceof StoreUnavailableError) {
      for (const pending of run) pending.reject(err)
      return
    }
    for (const pending of run) await settle([pending])
    return
  }
  run.forEach((pending, i) => pending.resolve(outcomes[i]))
}
