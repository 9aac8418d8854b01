import type pg from 'pg'
import type { FindQuery, FoundBook } from '../../books/find.ts'
import { counting, findStatement, foundBooks, planning, type FoundRow, type Statement } from '../sql/find.ts'
import type { BookPages, BookReader, JsonPage, ReadOptions } from '../store.ts'
import { readPages, type PageStep } from '../pages.ts'
import { connectWithin, runWithin } from './connections.ts'
import { postgresFind } from './find.ts'

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

/**
 * Reads books on a pool of their own, a share of the instance's connections that finds cannot
 * exceed, so that reads by id and writes always find a connection; its connections stop any
 * statement at the deadline (`statement_timeout`), so a read that runs out of time stops on the
 * server too. A page is one statement, with the count beside it on a second connection; a whole
 * read holds one connection and one REPEATABLE READ snapshot from its first page to its last,
 * through a cursor.
 */
export class PostgresReader implements BookReader {
  readonly #pool: pg.Pool
  readonly #deadlineMs: number

  constructor(pool: pg.Pool, deadlineMs: number) {
    this.#pool = pool
    this.#deadlineMs = deadlineMs
  }

  pages(query: FindQuery, options?: ReadOptions & { json?: false }): Promise<BookPages<FoundBook[]>>
  pages(query: FindQuery, options: ReadOptions & { json: true }): Promise<BookPages<JsonPage>>
  async pages(
    query: FindQuery,
    { whole = false, json = false }: ReadOptions & { json?: boolean } = {},
  ): Promise<BookPages<FoundBook[] | JsonPage>> {
    const shape = (found: FoundBook[]) => (json ? jsonPage(found) : found)
    if (!whole) {
      const { found, total } = await this.#onePage(query)
      return readPages(
        { total },
        { page: shape(found), done: true },
        () => Promise.reject(new Error('A page is all')),
        () => {},
      )
    }
    return this.#whole(query, shape)
  }

  /** Runs one statement on a connection of the pool, the wait for it included, within the deadline. */
  async #run(config: pg.QueryConfig): Promise<pg.QueryResultRow[]> {
    const started = performance.now()
    const client = await connectWithin(this.#pool, this.#deadlineMs)
    let failure: Error | undefined
    try {
      return (await runWithin(client, config, this.#deadlineMs - (performance.now() - started))).rows
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

  async #onePage(query: FindQuery): Promise<{ found: FoundBook[]; total: number | undefined }> {
    const run = (config: pg.QueryConfig) => this.#run(config)
    const page = async () => run(arrays(findStatement(query, postgresFind, await this.#drive(planning(query, postgresFind), run))))
    const count = async () => first(run, await this.#drive(counting(query.filter, postgresFind), run))
    const [rows, total] = await Promise.all([page(), query.count === true ? count() : undefined])
    return { found: foundBooks(rows as unknown as FoundRow[]), total }
  }

  async #whole<P>(query: FindQuery, shape: (found: FoundBook[]) => P): Promise<BookPages<P>> {
    const deadlineMs = this.#deadlineMs
    const client = await connectWithin(this.#pool, deadlineMs)
    const step = (config: pg.QueryConfig) => runWithin(client, config, deadlineMs)
    let failure: Error | undefined
    const fetch = async (): Promise<PageStep<P>> => {
      try {
        const found = foundBooks((await step(arrays({ text: `FETCH ${query.limit} FROM books_read` }))).rows as FoundRow[])
        return { page: shape(found), done: found.length < query.limit }
      } catch (err) {
        failure = err as Error
        throw err
      }
    }
    const end = async () => {
      try {
        if (failure === undefined) await step({ text: 'COMMIT' })
      } catch (err) {
        failure = err as Error
      } finally {
        client.release(failure)
      }
    }
    try {
      await step({ text: 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY' })
      // The first statement takes the snapshot: the books read after it reflect exactly the
      // changes numbered up to this one, as numbers are handed out in commit order.
      const changeSeq = Number((await step({ text: 'SELECT last FROM change_seq' })).rows[0]!.last)
      const rows = async (config: pg.QueryConfig) => (await step(config)).rows
      const total = query.count === true ? await first(rows, await this.#drive(counting(query.filter, postgresFind), rows)) : undefined
      const plan = await this.#drive(planning(query, postgresFind, { whole: true }), rows)
      const { text, values } = findStatement(query, postgresFind, { whole: true, ...plan })
      await step({ text: `DECLARE books_read NO SCROLL CURSOR FOR ${text}`, values })
      return readPages({ total, changeSeq }, await fetch(), fetch, end)
    } catch (err) {
      failure = err as Error
      await end()
      throw err
    }
  }
}
