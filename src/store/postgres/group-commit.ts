import { StoreUnavailableError } from '../store.ts'

/** One kind of write, and how a run of them goes to the engine as one statement. */
export interface BatchedWrite<I, O> {
  /**
   * The outcomes of `inputs`, in their order, from one statement. With `sendBy` (a time of
   * `performance.now()`), a statement that cannot be sent by then must not be sent at all, and
   * fails as unavailable.
   */
  run(inputs: I[], sendBy?: number): Promise<O[]>
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
  /** When it is answered as unavailable, if it has not been answered before. */
  expiresAt?: number
  expired?: boolean
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
 *
 * With `deadlineMs`, a write not answered within it fails as unavailable, and one not sent by
 * then is never sent: its request is answered 503, and a write answered so must not happen
 * later, once the store is back. (One already sent may have been applied, as with any request
 * whose answer the network lost.)
 */
export class GroupCommit {
  readonly #concurrency: number
  readonly #deadlineMs: number | undefined
  #pending: Pending[] = []
  #underWay = 0
  #scheduled = false

  constructor({ concurrency = 1, deadlineMs }: { concurrency?: number; deadlineMs?: number } = {}) {
    this.#concurrency = concurrency
    this.#deadlineMs = deadlineMs
  }

  add<I, O>(write: BatchedWrite<I, O>, input: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      const pending: Pending = {
        write: write,
        input,
        resolve: resolve as (value: unknown) => void,
        reject,
      }
      if (this.#deadlineMs !== undefined) this.#expire(pending, this.#deadlineMs)
      this.#pending.push(pending)
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

  #expire(pending: Pending, ms: number): void {
    const { resolve, reject } = pending
    pending.expiresAt = performance.now() + ms
    const timer = setTimeout(() => {
      pending.expired = true
      reject(new StoreUnavailableError(new Error(`No answer within ${ms} ms`)))
    }, ms)
    pending.resolve = (value) => {
      clearTimeout(timer)
      resolve(value)
    }
    pending.reject = (err) => {
      clearTimeout(timer)
      reject(err)
    }
  }

  #start(): void {
    this.#pending = this.#pending.filter((pending) => !pending.expired)
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

async function settle(all: Pending[]): Promise<void> {
  // The runs of a batch go one after another: those that expired meanwhile are left out.
  const run = all.filter((pending) => !pending.expired)
  if (run.length === 0) return
  const { write } = run[0]!
  const sendBy = Math.min(...run.map((pending) => pending.expiresAt ?? Infinity))
  let outcomes: unknown[]
  try {
    outcomes = await write.run(
      run.map((pending) => pending.input),
      Number.isFinite(sendBy) ? sendBy : undefined,
    )
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
