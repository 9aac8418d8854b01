import { setImmediate as nextTurn } from 'node:timers/promises'
import { Worker } from 'node:worker_threads'
import type { FindQuery, FoundBook } from '../../books/find.ts'
import { FairQueue } from '../fair-queue.ts'
import { boundedByPage, foundBooks, QUICK_FIRST_PAGE, type IdRange } from '../sql/find.ts'
import { readPages, type PageStep } from '../pages.ts'
import { readEnded, StoreUnavailableError, type BookPages, type BookReader, type JsonPage, type ReadOptions } from '../store.ts'
import { pageOf, ReadDeadlineError, type ReaderCore, type ReadRequest, type StepAnswer } from './reader-core.ts'
import type { ReaderThreadData, WorkerData, WorkerFailure, WorkerMessage } from './reader-worker.ts'

/** Where the steps of reads run: worker threads, or this thread for an in-memory database. */
interface StepRunner {
  /** How many steps it runs at once. */
  readonly threads: number
  /** How long a step may take, waiting for its turn included. */
  readonly deadlineMs: number
  /** Starts read `id`; by `deadline` (on performance.now()'s clock) when given, as for a part of a find already under way. */
  start(id: number, request: ReadRequest, client: string, deadline?: number): Promise<StepAnswer>
  /** The next page of read `id`; `ranking`: the step that ranks every match after a whole read's first page (see pagesOf). */
  next(id: number, client: string, options?: { ranking?: boolean }): Promise<StepAnswer>
  close(id: number): void
  end(): Promise<void>
}

/** How long a step of a read may take, its wait for a turn included; the one that ranks a whole read (see pagesOf), longer. */
export interface Deadlines {
  deadlineMs: number
  rankingDeadlineMs: number
}

function outOfTime(deadlineMs: number): StoreUnavailableError {
  return new StoreUnavailableError(new Error(`A read of books took longer than ${deadlineMs} ms`))
}

function step({ page, done }: StepAnswer): PageStep<FoundBook[] | JsonPage> {
  return { page: 'rows' in page ? foundBooks(page.rows) : page, done }
}

/**
 * The pages of read `id`, whose first step `runner` ran. A whole read by relevance gives its first
 * page as a page is read, by a walk through the top tier when that finds it (see SqliteFinder.rows),
 * and its second step ranks every match left, as one statement: that step has RANKING_DEADLINE_MS.
 */
function pagesOf(
  runner: StepRunner,
  id: number,
  client: string,
  first: StepAnswer,
  { total = first.total, ranks = false }: { total?: number | undefined; ranks?: boolean } = {},
): BookPages<FoundBook[] | JsonPage> {
  let ranking = ranks
  return readPages(
    { total, changeSeq: first.changeSeq },
    step(first),
    async () => {
      const answer = runner.next(id, client, { ranking })
      ranking = false
      return step(await answer)
    },
    () => runner.close(id),
  )
}

/** Books a read on this thread reads at most: a page of up to QUICK_FIRST_PAGE and the one after it. */
const QUICK_ROWS = QUICK_FIRST_PAGE + 1

/**
 * Books that reads on this thread may read in one turn of the event loop, about ten milliseconds:
 * the reads asked for beyond them in that turn go to the readers' threads, so that many lists at
 * once, however many clients ask, hold every other request for no longer.
 */
const QUICK_ROWS_PER_TURN = 8192

/**
 * Reads of books, a page at a time, by a StepRunner: the store's `reader`. A read that costs no
 * more than its first page (boundedByPage), of at most QUICK_ROWS books, is tried first by
 * `quick`, where one is given, and kept when that page is its last.
 */
class Reader implements BookReader {
  readonly #runner: StepRunner
  readonly #quick: StepRunner | undefined
  #nextId = 1
  /** The books that reads on `quick` may read in this turn, at most. */
  #quickRows = 0
  /**
   * What the last whole list of every book tried on `quick` read, taken as what the next one will
   * read: as many books as the catalogue holds, and one more. A catalogue that grew meanwhile makes
   * the lists of one turn read more than they were counted for, QUICK_ROWS each at most.
   */
  #wholeRows = QUICK_ROWS

  constructor(runner: StepRunner, quick?: StepRunner) {
    this.#runner = runner
    this.#quick = quick
  }

  pages(query: FindQuery, options?: ReadOptions & { json?: false }): Promise<BookPages<FoundBook[]>>
  pages(query: FindQuery, options: ReadOptions & { json: true }): Promise<BookPages<JsonPage>>
  async pages(
    query: FindQuery,
    { whole = false, json = false, client = '', signal }: ReadOptions & { json?: boolean } = {},
  ): Promise<BookPages<FoundBook[] | JsonPage>> {
    if (signal?.aborted === true) throw readEnded()
    if (this.#quick !== undefined && boundedByPage(query)) {
      const pages = await this.#quickly(this.#quick, query, { whole, json, client })
      if (pages !== undefined) return pages
    }
    const runner = this.#runner
    const deadline = performance.now() + runner.deadlineMs
    // The reads this one starts: a client that goes ends them, which stops what each is running.
    const begun: number[] = []
    const start = (request: ReadRequest, by?: number) => {
      const id = this.#nextId++
      begun.push(id)
      return { id, answer: runner.start(id, request, client, by) }
    }
    const gone = () => begun.forEach((id) => runner.close(id))
    signal?.addEventListener('abort', gone)
    try {
      // A page's count runs beside it, on another thread when one is free: either may read every book.
      const counted = !whole && query.count === true ? start({ query, whole, json, countOnly: true }).answer : undefined
      const parts = whole ? undefined : runner.threads
      const { id, answer } = start({ query: counted ? { ...query, count: false } : query, whole, json, parts }, deadline)
      const [first, count] = await Promise.all([answer, counted])
      const read = first.parts === undefined ? first : await this.#inParts(query, first.parts, { json, start, deadline })
      return pagesOf(runner, id, client, read, { total: count?.total ?? first.total, ranks: whole && query.order.relevance })
    } finally {
      signal?.removeEventListener('abort', gone)
    }
  }

  /**
   * The page of `query` read in parts, one per range of ids, at once: the best books of each, merged
   * by relevance, the one order that a find splits (see ranksMany).
   */
  async #inParts(
    query: FindQuery,
    ranges: IdRange[],
    {
      json,
      start,
      deadline,
    }: { json: boolean; start: (request: ReadRequest, by: number) => { answer: Promise<StepAnswer> }; deadline: number },
  ): Promise<StepAnswer> {
    const parts = await Promise.all(
      ranges.map(
        (ids) =>
          start({ query: { ...query, filter: { ...query.filter, ...ids }, count: false }, whole: false, json: false }, deadline).answer,
      ),
    )
    const rows = parts.flatMap(({ page }) => ('rows' in page ? page.rows : []))
    // Higher relevance first, then lower id.
    rows.sort((a, b) => (b[4] as number) - (a[4] as number) || (a[5] as number) - (b[5] as number))
    return { page: pageOf(rows.slice(0, query.limit), json), done: true }
  }

  /** The pages of a read bounded by its page, read by `quick` when this turn allows it and its first page is its last. */
  async #quickly(
    quick: StepRunner,
    query: FindQuery,
    { whole, json, client }: { whole: boolean; json: boolean; client: string },
  ): Promise<BookPages<FoundBook[] | JsonPage> | undefined> {
    // A page reads its limit; a whole read its first page and one book more, or, for a list of
    // every book, what the last such list read.
    const firstPage = whole ? { ...query, limit: Math.min(query.limit, QUICK_FIRST_PAGE) } : query
    const everyBook = whole && query.filter.afterId === undefined && query.after === undefined
    const rows = whole ? Math.min(firstPage.limit + 1, everyBook ? this.#wholeRows : QUICK_ROWS) : query.limit
    if (!this.#takeQuickly(rows)) return undefined
    const id = this.#nextId++
    const first = await quick.start(id, { query: firstPage, whole, json }, client)
    if (everyBook) this.#wholeRows = first.done ? ('rows' in first.page ? first.page.rows.length : first.page.size) + 1 : QUICK_ROWS
    if (first.done) return pagesOf(quick, id, client, first)
    quick.close(id)
    return undefined
  }

  /** Whether a read of at most `rows` books may run on this thread in this turn. */
  #takeQuickly(rows: number): boolean {
    if (rows > QUICK_ROWS || this.#quickRows + rows > QUICK_ROWS_PER_TURN) return false
    if (this.#quickRows === 0) setImmediate(() => (this.#quickRows = 0))
    this.#quickRows += rows
    return true
  }

  end(): Promise<void> {
    return this.#runner.end()
  }
}

interface Step {
  readonly message: Exclude<WorkerMessage, { kind: 'close' }>
  readonly deadline: number
  /** How long it was given, for the failure that says it took longer. */
  readonly allowedMs: number
  readonly resolve: (answer: StepAnswer) => void
  readonly reject: (err: unknown) => void
}

/** One worker thread, the reads pinned to it, and the steps waiting for it. */
interface Slot {
  worker: Worker
  queue: FairQueue<Step>
  /** The step the worker is running; its answer is the next message. */
  running: Step | undefined
  /** Gives the running step up once it is past its deadline. */
  timer: NodeJS.Timeout | undefined
  reads: number
  /** Shared with the worker: the read whose running step is to stop (see ReaderThreadData). */
  ended: Int32Array
}

/** How long past its deadline a step may answer before it is given up: the worker stops it from inside first. */
const GIVE_UP_AFTER_MS = 500

/**
 * Reads run in worker threads, each with connections of its own, so that no find, however much of
 * the catalogue it reads, holds the thread that answers every other request. A read is pinned to
 * one worker, since its snapshot lives on that worker's connection; each worker runs one step at
 * a time, taking the steps of waiting clients in turn. A step that cannot finish within the
 * deadline, waiting included, fails as unavailable: the worker stops its statement from inside.
 */
class WorkerRunner implements StepRunner {
  readonly #data: WorkerData
  readonly threads: number
  readonly deadlineMs: number
  readonly #rankingDeadlineMs: number
  readonly #slots: Slot[] = []
  readonly #pinned = new Map<number, Slot>()

  constructor(data: WorkerData, count: number, { deadlineMs, rankingDeadlineMs }: Deadlines) {
    this.#data = data
    this.threads = count
    this.deadlineMs = deadlineMs
    this.#rankingDeadlineMs = rankingDeadlineMs
    // Started now, not on the first read: a thread takes a few hundred milliseconds to start.
    this.#workers()
  }

  start(id: number, request: ReadRequest, client: string, deadline?: number): Promise<StepAnswer> {
    // The worker with the fewest reads pinned to it and steps waiting.
    const slots = this.#workers()
    const slot = slots.reduce((best, slot) => (load(slot) < load(best) ? slot : best))
    this.#pinned.set(id, slot)
    slot.reads++
    return this.#step(slot, client, { kind: 'start', id, request, budgetMs: 0 }, deadline)
  }

  next(id: number, client: string, { ranking = false }: { ranking?: boolean } = {}): Promise<StepAnswer> {
    const slot = this.#pinned.get(id)
    if (slot === undefined) return Promise.reject(new Error(`No read ${id} is open`))
    const allowedMs = ranking ? this.#rankingDeadlineMs : this.deadlineMs
    return this.#step(slot, client, { kind: 'next', id, budgetMs: 0 }, performance.now() + allowedMs, allowedMs)
  }

  close(id: number): void {
    const slot = this.#pinned.get(id)
    if (slot === undefined) return
    this.#unpin(id)
    // A read ended while its step runs, its client gone, stops that step within a thousand books
    // or so, rather than when the step is done or out of time.
    if (slot.running?.message.id === id) Atomics.store(slot.ended, 0, id | 0)
    slot.worker.postMessage({ kind: 'close', id } satisfies WorkerMessage)
  }

  async end(): Promise<void> {
    await Promise.all(this.#slots.splice(0).map((slot) => slot.worker.terminate()))
  }

  #unpin(id: number): void {
    const slot = this.#pinned.get(id)
    if (slot === undefined) return
    this.#pinned.delete(id)
    slot.reads--
  }

  /** The workers, and new ones in place of any that died. */
  #workers(): Slot[] {
    while (this.#slots.length < this.threads) this.#slots.push(this.#spawn())
    return this.#slots
  }

  #spawn(): Slot {
    const ended = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT))
    const worker = new Worker(new URL('./reader-worker.ts', import.meta.url), {
      workerData: { ...this.#data, ended } satisfies ReaderThreadData,
    })
    const slot: Slot = { worker, queue: new FairQueue(), running: undefined, timer: undefined, reads: 0, ended }
    worker.on('message', ({ id, answer, failure }: { id: number; answer?: StepAnswer; failure?: WorkerFailure }) => {
      const step = slot.running
      this.#settle(slot)
      if (step !== undefined && step.message.id === id) {
        // Stopped from inside because its client ended the read (see close), not for its time.
        const ended = failure?.deadline === true && !this.#pinned.has(id)
        if (answer === undefined) step.reject(ended ? readEnded() : this.#error(failure!, step.allowedMs))
        else step.resolve(answer)
        if (answer?.done !== false) this.#unpin(id)
      }
      this.#dispatch(slot)
    })
    // A worker that dies fails what it was running and what waits for it; a new one takes its place.
    worker.on('error', (err) => {
      const index = this.#slots.indexOf(slot)
      if (index !== -1) this.#slots.splice(index, 1)
      for (const [id, pinnedTo] of this.#pinned) if (pinnedTo === slot) this.#pinned.delete(id)
      clearTimeout(slot.timer)
      slot.running?.reject(err)
      for (let step = slot.queue.shift(); step !== undefined; step = slot.queue.shift()) step.reject(err)
    })
    // After the listeners: listening for messages holds the process again, and an idle reader must not.
    worker.unref()
    return slot
  }

  #error(failure: WorkerFailure, allowedMs: number): Error {
    if (failure.deadline) return outOfTime(allowedMs)
    const err = Object.assign(new Error(failure.message), failure.errcode === undefined ? {} : { errcode: failure.errcode })
    return classifyRead(err)
  }

  #step(
    slot: Slot,
    client: string,
    message: Step['message'],
    deadline = performance.now() + this.deadlineMs,
    allowedMs = this.deadlineMs,
  ): Promise<StepAnswer> {
    return new Promise((resolve, reject) => {
      slot.queue.push(client, { message, deadline, allowedMs, resolve, reject })
      this.#dispatch(slot)
    })
  }

  /**
   * Ends the running step's turn once its answer came. Done here, not by wrapping each step's
   * resolve and reject in closures of their own: with those, every page of a long read outlived a
   * young collection of the heap into the old generation, which only a full collection frees
   * (docs/performance.md).
   */
  #settle(slot: Slot): void {
    slot.running = undefined
    clearTimeout(slot.timer)
    slot.timer = undefined
    if (slot.queue.size === 0) slot.worker.unref()
  }

  #dispatch(slot: Slot): void {
    if (slot.running !== undefined) return
    for (let step = slot.queue.shift(); step !== undefined; step = slot.queue.shift()) {
      // Its read ended while it waited: never sent.
      if (!this.#pinned.has(step.message.id)) {
        step.reject(readEnded())
        continue
      }
      const budgetMs = step.deadline - performance.now()
      if (budgetMs <= 0) {
        // Never sent: it would only have run out of time in the worker.
        if (step.message.kind === 'next') this.close(step.message.id)
        else this.#unpin(step.message.id)
        step.reject(outOfTime(step.allowedMs))
        continue
      }
      slot.running = step
      slot.worker.ref()
      slot.timer = setTimeout(() => step.reject(outOfTime(step.allowedMs)), budgetMs + GIVE_UP_AFTER_MS)
      slot.worker.postMessage({ ...step.message, budgetMs } satisfies WorkerMessage)
      return
    }
  }
}

function load(slot: Slot): number {
  return slot.reads + slot.queue.size
}

/** SQLite's transient failures (busy, locked, I/O, full, cannot open) are the store being unavailable for now. */
function classifyRead(err: Error & { errcode?: number }): Error {
  const TRANSIENT = new Set([5, 6, 10, 13, 14])
  return typeof err.errcode === 'number' && TRANSIENT.has(err.errcode & 0xff) ? new StoreUnavailableError(err) : err
}

/**
 * Reads in this thread, for an in-memory database, which no other thread can open: each step runs
 * here, with a turn of the event loop before it, so that a long list lets other requests through
 * between its pages.
 */
class InProcessRunner implements StepRunner {
  readonly threads = 1
  readonly #core: ReaderCore
  readonly deadlineMs: number
  readonly #outside: Outside

  constructor(core: ReaderCore, deadlineMs: number, outside: Outside) {
    this.#core = core
    this.deadlineMs = deadlineMs
    this.#outside = outside
  }

  start(id: number, request: ReadRequest): Promise<StepAnswer> {
    return this.#outside(() => this.#run(() => this.#core.start(id, request, this.deadlineMs)))
  }

  // Every step here, a whole read's ranking too, keeps a page's deadline: it holds this thread.
  async next(id: number): Promise<StepAnswer> {
    await nextTurn()
    return this.#outside(() => this.#run(() => this.#core.next(id, this.deadlineMs)))
  }

  close(id: number): void {
    this.#core.close(id)
  }

  async end(): Promise<void> {}

  #run(step: () => StepAnswer): StepAnswer {
    try {
      return step()
    } catch (err) {
      if (err instanceof ReadDeadlineError) throw outOfTime(this.deadlineMs)
      throw classifyRead(err as Error & { errcode?: number })
    }
  }
}

/**
 * Readers in `count` worker threads, for a database file, and on `quick`, a connection of this
 * thread that reads outside any transaction of the writes, the reads that cost no more than a page:
 * the hop to a thread and back would cost them more than the read itself.
 */
export function workerReaders(
  data: WorkerData,
  count: number,
  deadlines: Deadlines,
  quick: { core: ReaderCore; outside: Outside },
): Reader {
  return new Reader(new WorkerRunner(data, count, deadlines), new InProcessRunner(quick.core, deadlines.deadlineMs, quick.outside))
}

/**
 * Runs a step on a connection of this thread once no transaction of the writes holds it, so that
 * a read never sees writes that have not committed.
 */
type Outside = <T>(step: () => T) => Promise<T>

/** A reader in this thread, on `core`'s connection, for an in-memory database. */
export function inProcessReader(core: ReaderCore, deadlineMs: number, outside: Outside): Reader {
  return new Reader(new InProcessRunner(core, deadlineMs, outside))
}

export type { Reader }
