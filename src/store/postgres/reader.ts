import type pg from 'pg'
import { totalOrder, type FindQuery, type FoundBook } from '../../books/find.ts'
import {
  boundedByPage,
  counting,
  findStatement,
  foundBooks,
  planning,
  QUICK_FIRST_PAGE,
  ranksMany,
  type FoundRow,
  type Statement,
} from '../sql/find.ts'
import { RANKING_DEADLINE_MS, readEnded, type BookPages, type BookReader, type JsonPage, type ReadOptions } from '../store.ts'
import { readPages, type PageStep } from '../pages.ts'
import { connectWithin, runWithin } from './connections.ts'
import type { FindTurns } from './find-turns.ts'
import { denseStatement, postgresFind } from './find.ts'

/** For this transaction, a statement runs in the connection's own process only. */
const SINGLE_PROCESS = 'SET LOCAL max_parallel_workers_per_gather = 0'

/** For this transaction, a find reads the whole table rather than the pages that an index names. */
const WHOLE_TABLE = 'SET LOCAL enable_bitmapscan = off'

/** Rows as arrays, which pg's typings leave out of QueryConfig. */
const arrays = (config: pg.QueryConfig): pg.QueryConfig => ({ ...config, rowMode: 'array' }) as pg.QueryConfig

/** The first value of the first row of a statement, as a number: PostgreSQL counts in bigint, which arrive as text. */
async function first(run: (config: pg.QueryConfig) => Promise<pg.QueryResultRow[]>, statement: Statement): Promise<number> {
  const [row] = await run(statement)
  return Number(Object.values(row!)[0])
}

/** The JSON text of `found`'s books, with exactly their four members. */
function jsonPage(found: FoundBook[]): JsonPage {
  return { json: JSON.stringify(found.map(({ book }) => book)), size: found.length, last: found.at(-1)?.position }
}

/** The names of the statements prepared on every connection that ran them, by their text: a few shapes. */
const prepared = new Map<string, string>()

/** A name under which each connection prepares `text` once, so that PostgreSQL plans it once too. */
function preparedName(text: string): string {
  let name = prepared.get(text)
  if (name === undefined) {
    name = `books_json_page_${prepared.size}`
    prepared.set(text, name)
  }
  return name
}

/** Connections for reads, how long a read may take on them, waiting for one included, and the turns reads take at them. */
export interface Lane {
  pool: pg.Pool
  deadlineMs: number
  turns?: FindTurns
}

/** A read whose first page is its last. */
function onePage<P>(read: { total: number | undefined; changeSeq?: number }, page: P): BookPages<P> {
  return readPages(
    read,
    { page, done: true },
    () => Promise.reject(new Error('A page is all')),
    () => {},
  )
}

/**
 * Reads books on a pool of their own, a share of the instance's connections that finds cannot
 * exceed, so that reads by id and writes always find a connection; its connections stop any
 * statement at the deadline (`statement_timeout`), so a read that runs out of time stops on the
 * server too. A page is one statement, with the count beside it on a second connection; a whole
 * read holds one connection and one REPEATABLE READ snapshot from its first page to its last,
 * through a cursor. A read that costs no more than a page (boundedByPage) runs on the connections
 * of reads by id instead, and a whole one is one statement when its first page is its last.
 */
export class PostgresReader implements BookReader {
  readonly #finds: Required<Lane>
  readonly #bounded: Lane

  /** `bounded`: where the reads that cost no more than a page (boundedByPage) run, as reads by id do. */
  constructor(finds: Required<Lane>, bounded: Lane) {
    this.#finds = finds
    this.#bounded = bounded
  }

  pages(query: FindQuery, options?: ReadOptions & { json?: false }): Promise<BookPages<FoundBook[]>>
  pages(query: FindQuery, options: ReadOptions & { json: true }): Promise<BookPages<JsonPage>>
  async pages(
    query: FindQuery,
    { whole = false, json = false, client = '', signal }: ReadOptions & { json?: boolean } = {},
  ): Promise<BookPages<FoundBook[] | JsonPage>> {
    const shape = (found: FoundBook[]) => (json ? jsonPage(found) : found)
    if (!whole) {
      const { found, total } = await this.#onePage(query, boundedByPage(query) ? this.#bounded : this.#finds, client, signal)
      return onePage({ total }, shape(found))
    }
    if (json && boundedByPage(query)) {
      const first = { ...query, limit: Math.min(query.limit, QUICK_FIRST_PAGE) }
      const { page, changeSeq } = await this.#jsonPageWithChange(first)
      if (page.size <= first.limit) return onePage({ total: undefined, changeSeq }, page)
    }
    return this.#whole(query, shape, client, signal)
  }

  /**
   * The JSON of the page of `query` and one book more, built by the server, with the newest change
   * it reflects, from one statement's snapshot: one round trip where a whole read takes five, and
   * every book when the catalogue holds none after the page. Only for an order by id (boundedByPage).
   */
  async #jsonPageWithChange(query: FindQuery): Promise<{ page: JsonPage; changeSeq: number }> {
    const { text, values } = findStatement({ ...query, limit: query.limit + 1 }, postgresFind)
    const descending = !query.order.relevance && totalOrder(query.order.keys)[0]!.descending
    // row_to_json writes each book compactly, its members in column order, as JSON.stringify does.
    // Aggregates give one row also when no book matches; the change is read in the same snapshot.
    const statement = `SELECT (SELECT last FROM change_seq),
        '[' || coalesce(string_agg(row_to_json(book)::text, ',' ORDER BY book.id${descending ? ' DESC' : ''}), '') || ']',
        count(*), ${descending ? 'min' : 'max'}(book.id)
      FROM (SELECT id, title, author, year FROM (${text}) AS page) AS book`
    const { pool, deadlineMs } = this.#bounded
    const [row] = await this.#run(arrays({ name: preparedName(statement), text: statement, values }), pool, performance.now() + deadlineMs)
    const [last, json, size, lastId] = row as unknown as [string, string, string, string | null]
    return { page: { json, size: Number(size), last: lastId === null ? undefined : [Number(lastId)] }, changeSeq: Number(last) }
  }

  /**
   * Runs one statement on a connection of `pool`, the wait for it included, by `deadline` (of
   * performance.now()); with `settings`, in a transaction of its own that makes them first (see
   * #onePage).
   */
  async #run(config: pg.QueryConfig, pool: pg.Pool, deadline: number, settings: string[] = []): Promise<pg.QueryResultRow[]> {
    const client = await connectWithin(pool, deadline - performance.now())
    let failure: Error | undefined
    try {
      if (settings.length === 0) return (await runWithin(client, config, deadline - performance.now())).rows
      await runWithin(client, { text: 'BEGIN' }, deadline - performance.now())
      for (const setting of settings) await runWithin(client, { text: setting }, deadline - performance.now())
      const { rows } = await runWithin(client, config, deadline - performance.now())
      await runWithin(client, { text: 'COMMIT' }, deadline - performance.now())
      return rows
    } catch (err) {
      failure = err as Error
      throw err
    } finally {
      client.release(failure)
    }
  }

  /** Runs the statements of a planning or counting in turn, by `run`, and gives what it ends with. */
  async #drive<T>(steps: Generator<Statement, T, number>, run: (config: pg.QueryConfig) => Promise<pg.QueryResultRow[]>): Promise<T> {
    let step = steps.next()
    while (step.done !== true) step = steps.next(await first(run, step.value))
    return step.value
  }

  /**
   * The page of `query` and its count beside it, every statement of both and their waits for a turn
   * within the lane's deadline. Each takes a turn of its own, as each holds a connection at a time:
   * a find that has its turn then never waits for a connection behind another's count.
   */
  async #onePage(
    query: FindQuery,
    lane: Lane,
    client: string,
    signal: AbortSignal | undefined,
  ): Promise<{ found: FoundBook[]; total: number | undefined }> {
    const deadline = performance.now() + lane.deadlineMs
    const inTurn = async <T>(work: () => Promise<T>): Promise<T> => {
      const endTurn = lane.turns === undefined ? () => {} : await lane.turns.take(client, deadline - performance.now())
      try {
        return await work()
      } finally {
        endTurn()
      }
    }
    // A statement under way runs on; a find whose client has gone sends no more.
    const run = (config: pg.QueryConfig, settings?: string[]) =>
      signal?.aborted === true ? Promise.reject(readEnded()) : this.#run(config, lane.pool, deadline, settings)
    const count = (alone: boolean) => async () =>
      first((config) => run(config, alone ? [SINGLE_PROCESS] : []), await this.#drive(counting(query.filter, postgresFind), run))
    if (!query.order.relevance) {
      const page = async () => run(arrays(findStatement(query, postgresFind, await this.#drive(planning(query, postgresFind), run))))
      const [rows, total] = await Promise.all([inTurn(page), query.count === true ? inTurn(count(false)) : undefined])
      return { found: foundBooks(rows as unknown as FoundRow[]), total }
    }
    // A page by relevance that ranks many matches (ranksMany) reads most pages of the table.
    const planned = async () => {
      const plan = await this.#drive(planning(query, postgresFind), run)
      return { plan, many: await this.#drive(ranksMany(query, postgresFind, plan), run) }
    }
    if (query.count !== true) {
      // Alone, it reads the whole table when its matches are dense in it: each page of it once, in
      // order, and through a ring of a few buffers of its own rather than through all of them,
      // which the index's way empties of every other find's pages.
      const page = async () => {
        const { plan, many } = await planned()
        const dense = many && (await first(run, denseStatement(query.filter.words ?? []))) === 1
        return run(arrays(findStatement(query, postgresFind, plan)), dense ? [WHOLE_TABLE] : [])
      }
      return { found: foundBooks((await inTurn(page)) as unknown as FoundRow[]), total: undefined }
    }
    // Beside its count, which reads the same pages: at once, one reads each page from the kernel
    // and the other finds it in the shared buffers; each then runs in its connection's process
    // alone, as with parallel workers too six processes shared two cores and both took longer
    // (docs/performance-log.md). The count waits for the page's planning, which says which it is.
    const { promise: countHow, resolve: countAs } = Promise.withResolvers<{ alone: boolean } | undefined>()
    const page = async () => {
      try {
        const { plan, many } = await planned()
        countAs({ alone: many })
        return await run(arrays(findStatement(query, postgresFind, plan)), many ? [SINGLE_PROCESS] : [])
      } finally {
        // Failed before it was planned: the find fails, and its count is never sent.
        countAs(undefined)
      }
    }
    // Its turn is taken with the page's, as for any count, so that the two start together. It comes
    // after the page's: the page never waits behind a count that waits for it.
    const counted = async () => {
      const how = await countHow
      return how === undefined ? undefined : count(how.alone)()
    }
    const paged = inTurn(page)
    // A page that had no turn was never planned, nor is its count sent.
    paged.catch(() => countAs(undefined))
    const [rows, total] = await Promise.all([paged, inTurn(counted)])
    return { found: foundBooks(rows as unknown as FoundRow[]), total }
  }

  /**
   * Every book of `query`, through a cursor: its first page, the turn and every statement before it
   * included, within the lane's deadline, each page after it within a deadline of its own.
   */
  async #whole<P>(
    query: FindQuery,
    shape: (found: FoundBook[]) => P,
    asking: string,
    signal: AbortSignal | undefined,
  ): Promise<BookPages<P>> {
    const { pool, deadlineMs, turns } = this.#finds
    const openBy = performance.now() + deadlineMs
    const endTurn = await turns.take(asking, deadlineMs, { whole: true })
    // Its client gone while it waited for its turn: it takes no connection.
    if (signal?.aborted === true) {
      endTurn()
      throw readEnded()
    }
    let client: pg.PoolClient
    try {
      client = await connectWithin(pool, openBy - performance.now())
    } catch (err) {
      endTurn()
      throw err
    }
    const step = (config: pg.QueryConfig, ms: number) => runWithin(client, config, ms)
    const opening = (config: pg.QueryConfig) => step(config, openBy - performance.now())
    let failure: Error | undefined
    // Whether the cursor's first FETCH ranks every match after the first page before it gives a book.
    let ranking = false
    let fetching = false
    const fetch = async (ms = ranking ? RANKING_DEADLINE_MS : deadlineMs): Promise<PageStep<P>> => {
      fetching = true
      try {
        if (ranking) await step({ text: `SET LOCAL statement_timeout = ${ms}` }, deadlineMs)
        const found = foundBooks((await step(arrays({ text: `FETCH ${query.limit} FROM books_read` }), ms)).rows as FoundRow[])
        if (ranking) await step({ text: `SET LOCAL statement_timeout = ${deadlineMs}` }, deadlineMs)
        ranking = false
        return { page: shape(found), done: found.length < query.limit }
      } catch (err) {
        failure = err as Error
        throw err
      } finally {
        fetching = false
      }
    }
    const end = async () => {
      // A read ended while a statement runs, its client gone, closes the connection rather than
      // wait for the statement: the server then stops it (client_connection_check_interval).
      if (fetching) failure ??= new Error('A whole read was ended while it read')
      try {
        if (failure === undefined) await step({ text: 'COMMIT' }, deadlineMs)
      } catch (err) {
        failure = err as Error
      } finally {
        client.release(failure)
        endTurn()
      }
    }
    try {
      await opening({ text: 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY' })
      // The first statement takes the snapshot: the books read after it reflect exactly the
      // changes numbered up to this one, as numbers are handed out in commit order.
      const changeSeq = Number((await opening({ text: 'SELECT last FROM change_seq' })).rows[0]!.last)
      const rows = async (config: pg.QueryConfig) => (await opening(config)).rows
      const total = query.count === true ? await first(rows, await this.#drive(counting(query.filter, postgresFind), rows)) : undefined
      // By relevance, the first page is read as a page is, and the cursor reads the books after
      // it: a walk through the top tier finds a common word's first page in milliseconds (see
      // planning), and otherwise the server keeps the best of the matches as it ranks them, where
      // the whole order sorts every match, on disk beyond `work_mem`, before its first book.
      let firstRows: FoundRow[] | undefined
      if (query.order.relevance) {
        const pagePlan = await this.#drive(planning(query, postgresFind), rows)
        firstRows = (await opening(arrays(findStatement(query, postgresFind, pagePlan)))).rows as FoundRow[]
        if (firstRows.length < query.limit)
          return readPages({ total, changeSeq }, { page: shape(foundBooks(firstRows)), done: true }, fetch, end)
      }
      const rest = firstRows === undefined ? query : { ...query, after: firstRows.at(-1)!.slice(4) }
      const plan = await this.#drive(planning(rest, postgresFind, { whole: true }), rows)
      const { text, values } = findStatement(rest, postgresFind, { whole: true, ...plan })
      await opening({ text: `DECLARE books_read NO SCROLL CURSOR FOR ${text}`, values })
      ranking = firstRows !== undefined
      const firstPage =
        firstRows === undefined ? await fetch(openBy - performance.now()) : { page: shape(foundBooks(firstRows)), done: false }
      return readPages({ total, changeSeq }, firstPage, fetch, end)
    } catch (err) {
      failure = err as Error
      await end()
      throw err
    }
  }
}
