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
  /**
   * Settled, by its statement or by its deadline; whatever comes after is ignored. A write not
   * yet sent can only have been answered by its deadline, and is then never sent.
   */
  answered?: boolean
  /** The write asked for after it, while it waits for its deadline. */
  next?: Pending
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
  /**
   * The writes not yet answered, oldest first, for the deadline: they all wait as long, so they
   * expire in the order they came, and one timer, set for the oldest, serves them all.
   */
  #oldest: Pending | undefined
  #newest: Pending | undefined
  #timer: NodeJS.Timeout | undefined

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
      if (this.#deadlineMs !== undefined) this.#watch(pending, this.#deadlineMs)
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

  #watch(pending: Pending, ms: number): void {
    pending.expiresAt = performance.now() + ms
    if (this.#newest === undefined) this.#oldest = pending
    else this.#newest.next = pending
    this.#newest = pending
    this.#timer ??= setTimeout(() => this.#expire(ms), ms)
  }

  /** Fails as unavailable every write unanswered at its deadline, then waits for the next one's. */
  #expire(ms: number): void {
    const now = performance.now()
    this.#timer = undefined
    while (this.#oldest !== undefined && (this.#oldest.answered === true || this.#oldest.expiresAt! <= now)) {
      const pending = this.#oldest
      if (pending.answered !== true) answer(pending, false, new StoreUnavailableError(new Error(`No answer within ${ms} ms`)))
      this.#forgetOldest()
    }
    if (this.#oldest !== undefined) this.#timer = setTimeout(() => this.#expire(ms), this.#oldest.expiresAt! - now)
  }

  /** Lets the answered writes at the front go, and the timer with the last of them. */
  #forgetAnswered(): void {
    while (this.#oldest?.answered === true) this.#forgetOldest()
    if (this.#oldest === undefined) {
      clearTimeout(this.#timer)
      this.#timer = undefined
    }
  }

  #forgetOldest(): void {
    const oldest = this.#oldest!
    this.#oldest = oldest.next
    oldest.next = undefined
    if (this.#oldest === undefined) this.#newest = undefined
  }

  #start(): void {
    this.#pending = this.#pending.filter((pending) => pending.answered !== true)
    if (this.#pending.length === 0 || this.#underWay >= this.#concurrency) return
    const batch = this.#pending
    this.#pending = []
    this.#underWay++
    void (async () => {
      try {
        for (const run of runs(batch)) await settle(run)
      } finally {
        this.#underWay--
        if (this.#deadlineMs !== undefined) this.#forgetAnswered()
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
  const run = all.filter((pending) => pending.answered !== true)
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
      for (const pending of run) answer(pending, false, err)
      return
    }
    for (const pending of run) await settle([pending])
    return
  }
  run.forEach((pending, i) => answer(pending, true, outcomes[i]))
}

function answer(pending: Pending, ok: boolean, outcome: unknown): void {
  pending.answered = true
  if (ok) pending.resolve(outcome)
  else pending.reject(outcome)
}
