import type { DatabaseSync } from 'node:sqlite'
import type { FindQuery, Position } from '../../books/find.ts'
import { walksIds, type FoundRow, type IdRange } from '../sql/find.ts'
import { SqliteFinder } from './find.ts'

/** A read asked of a reader: the query, whether all its pages are wanted, and in which form. */
export interface ReadRequest {
  query: FindQuery
  whole: boolean
  json: boolean
  /** Only how many books match: the count of a page, run beside the page on another thread. */
  countOnly?: boolean
  /** Into how many parts a page that ranks many matches may be split, each read on a thread of its own (see ranksMany). */
  parts?: number
}

/** A page as a reader gives it: rows, or the JSON text of the books' array with where it ends. */
export type PageAnswer = { rows: FoundRow[] } | { json: string; size: number; last: Position | undefined }

/**
 * What one step of a read gives: a page, whether it was the last, the count when asked for, and,
 * for the first step of a whole read, the newest change that its snapshot holds.
 */
export interface StepAnswer {
  page: PageAnswer
  done: boolean
  total?: number
  changeSeq?: number
  /** Instead of the page, which was not read: the ranges of ids to read it in, one part each. */
  parts?: IdRange[]
}

/** The step ran out of its time, or its read was ended: the statement was stopped from inside, and the read is over. */
export class ReadDeadlineError extends Error {
  constructor() {
    super('The read took longer than it may')
    this.name = 'ReadDeadlineError'
  }
}

/**
 * A read whose pages come one step at a time: from one statement walked through every page, or a
 * page at a time, each a statement of its own starting after the last book of the one before.
 */
interface OpenRead {
  db: DatabaseSync
  finder: SqliteFinder
  rows: Iterator<FoundRow> | { after: Position | undefined }
  request: ReadRequest
}

/** The connections a reader reads from. */
export interface ReaderConnections {
  /** Where reads of one page run, one after another. */
  pages: DatabaseSync
  /** A connection of its own for a whole read, whose snapshot it holds between steps. */
  open(): DatabaseSync
  /** Ends what `open` gave, once its read is over. */
  release(db: DatabaseSync): void
  /** False when every read must share `pages`, as an in-memory database's must: then no snapshot is held. */
  snapshots: boolean
}

/** The JSON text of the books of `rows`, with exactly their four members. */
function booksJson(rows: FoundRow[]): string {
  return JSON.stringify(rows.map(([id, title, author, year]) => ({ id, title, author, year })))
}

/**
 * Whether each page of a whole read of `query` may be a statement of its own, starting after the
 * last book of the page before, for what reading that page costs: with no filter but `afterId`
 * and an order of keys, each page walks the index of its order on from where the last one ended.
 * node:sqlite hands over a statement's rows faster all at once than one at a time, which costs a
 * list of a hundred books a third more. Matches of a filter, or a ranking by relevance, would be
 * found or ranked again for each page: those reads walk one statement through every page.
 */
function pagedByKeys({ filter, order }: FindQuery): boolean {
  return !order.relevance && Object.entries(filter).every(([name, value]) => name === 'afterId' || value === undefined)
}

export function pageOf(rows: FoundRow[], json: boolean): PageAnswer {
  if (!json) return { rows }
  const last = rows.at(-1)
  return { json: booksJson(rows), size: rows.length, last: last?.slice(4) }
}

/**
 * Runs reads of books, a step at a time, each within the time it is given: in a worker thread of
 * the store's readers, or in the main thread for an in-memory database. A read of one page runs
 * as one statement; a whole read holds one read transaction, on a connection of its own, from its
 * first page to its last, so that every page comes from one snapshot of the catalogue.
 */
export class ReaderCore {
  readonly #connections: ReaderConnections
  readonly #finder: SqliteFinder
  /** Each connection's finder, with the statements it prepared: a connection serves read after read. */
  readonly #finders = new WeakMap<DatabaseSync, SqliteFinder>()
  readonly #open = new Map<number, OpenRead>()
  readonly #stopped: (id: number) => boolean
  /** When the step under way must end, on this thread's clock, and the read it is a step of. */
  #deadline = Infinity
  #reading = 0

  /** `stopped`: whether read `id`, whose step is under way, was ended meanwhile by its client. */
  constructor(connections: ReaderConnections, { stopped = () => false }: { stopped?: (id: number) => boolean } = {}) {
    this.#connections = connections
    this.#stopped = stopped
    this.#finder = this.#finderOf(connections.pages)
  }

  /**
   * The finder of `db`, made at its first read: with it, the function that the find SQL's guard
   * calls (see find.ts), which fails the statement once the step's time is up, or its read ended.
   */
  #finderOf(db: DatabaseSync): SqliteFinder {
    let finder = this.#finders.get(db)
    if (finder === undefined) {
      db.function('book_in_time', { deterministic: false, directOnly: true }, () => {
        if (performance.now() > this.#deadline || this.#stopped(this.#reading)) throw new ReadDeadlineError()
        return 1
      })
      finder = new SqliteFinder(db)
      this.#finders.set(db, finder)
    }
    return finder
  }

  /** Starts read `id`: its first page, and the count when the query asks for it. */
  start(id: number, request: ReadRequest, budgetMs: number): StepAnswer {
    return this.#within(id, budgetMs, () => {
      const { query, whole } = request
      if (request.countOnly === true) return { page: pageOf([], request.json), done: true, total: this.#finder.count(query.filter) }
      if (!whole) return this.#onePage(request)
      const shared = !this.#connections.snapshots
      const db = shared ? this.#connections.pages : this.#connections.open()
      let finder = this.#finder
      let opened = false
      try {
        if (!shared) {
          finder = this.#finderOf(db)
          db.exec('BEGIN')
        }
        // The first read of the transaction: SQLite takes its snapshot there, so the books read
        // after it reflect exactly the changes up to this one. Without a snapshot (an in-memory
        // database), later pages may also reflect some changes after it.
        const changeSeq = finder.newestChange()
        const total = query.count === true ? finder.count(query.filter) : undefined
        // Without a snapshot, a statement left open would see the writes made between its steps.
        const byKeys = shared || pagedByKeys(query)
        this.#open.set(id, { db, finder, rows: byKeys ? { after: query.after } : finder.rows(query, query.limit), request })
        opened = true
        return { ...this.#next(id), changeSeq, ...(total === undefined ? {} : { total }) }
      } catch (err) {
        if (opened) this.close(id)
        else if (!shared) this.#connections.release(db)
        throw err
      }
    })
  }

  /** The next page of read `id`. */
  next(id: number, budgetMs: number): StepAnswer {
    return this.#within(id, budgetMs, () => {
      try {
        return this.#next(id)
      } catch (err) {
        this.close(id)
        throw err
      }
    })
  }

  /** Ends read `id`, whether or not all its pages were read. */
  close(id: number): void {
    const read = this.#open.get(id)
    if (read === undefined) return
    this.#open.delete(id)
    if ('next' in read.rows) read.rows.return?.()
    if (read.db === this.#connections.pages) return
    try {
      if (read.db.isTransaction) read.db.exec('COMMIT')
    } finally {
      this.#connections.release(read.db)
    }
  }

  #onePage({ query, json, parts = 1 }: ReadRequest): StepAnswer {
    const db = this.#connections.pages
    // The page and its count from one snapshot, when both are asked for.
    const both = query.count === true && this.#connections.snapshots
    if (both) db.exec('BEGIN')
    try {
      const read = this.#finder.pageOrParts(query, parts)
      if ('parts' in read) return { page: pageOf([], json), done: true, parts: read.parts }
      const total = query.count === true ? this.#finder.count(query.filter) : undefined
      return { page: pageOf(read.rows, json), done: true, ...(total === undefined ? {} : { total }) }
    } finally {
      if (both && db.isTransaction) db.exec('COMMIT')
    }
  }

  #next(id: number): StepAnswer {
    const read = this.#open.get(id)
    if (read === undefined) throw new Error(`No read ${id} is open`)
    const size = read.request.query.limit
    let rows: FoundRow[] = []
    let done = false
    if ('next' in read.rows) {
      while (rows.length < size) {
        const next = read.rows.next()
        if (next.done === true) {
          done = true
          break
        }
        rows.push(next.value)
      }
    } else if (read.request.json && walksIds(read.request.query)) {
      const query = { ...read.request.query, after: read.rows.after, limit: size }
      const page = read.finder.idsJson(query)
      // A full page is the last when no book comes after it.
      done = page.size < size || read.finder.page({ ...query, after: page.last, limit: 1 }).length === 0
      read.rows.after = page.last
      if (done) this.close(id)
      return { page, done }
    } else {
      // One book more than the page: whether it exists says whether another page does.
      rows = read.finder.page({ ...read.request.query, after: read.rows.after, limit: size + 1 })
      done = rows.length <= size
      if (!done) rows.length = size
      read.rows.after = rows.at(-1)?.slice(4)
    }
    if (done) this.close(id)
    return { page: pageOf(rows, read.request.json), done }
  }

  #within<T>(id: number, budgetMs: number, step: () => T): T {
    this.#deadline = performance.now() + budgetMs
    this.#reading = id
    try {
      return step()
    } finally {
      this.#deadline = Infinity
      this.#reading = 0
    }
  }
}
