import pg, { type QueryResultRow } from 'pg'
import { batchedLookup } from './batched-lookup.ts'
import { batchedBookWrites } from './postgres-batched-writes.ts'
import { classifyPostgresError } from './postgres-errors.ts'
import { APPLICATION_NAME, migratePostgres } from './postgres-migrations.ts'
import {
  StoreUnavailableError,
  type Book,
  type BookChanges,
  type BookPageJson,
  type NewBook,
  type Store,
  type StoredBook,
  type UpdateResult,
} from './store.ts'
import { WriteBatches, type BatchedWrite } from './write-batches.ts'

export interface PostgresOptions {
  /** A `postgres://` or `postgresql://` connection string. */
  url: string
  /** Most connections held at once. */
  poolSize: number
  /** Longest wait to open one connection. */
  connectTimeoutMs: number
  /** Longest one operation may take, waiting for a connection included. */
  queryTimeoutMs: number
}

// bigint ids and revisions arrive as text; the identity's ceiling keeps them exact as numbers.
const types = new pg.TypeOverrides()
types.setTypeParser(pg.types.builtins.INT8, Number)

/** A statement each connection prepares once, by name, and then only binds and executes. */
interface Statement {
  name: string
  text: string
}

const COLUMNS = 'id, title, author, year, revision'
const SELECT: Statement = { name: 'books_select', text: `SELECT ${COLUMNS} FROM books WHERE id = ANY ($1::bigint[])` }
const PAGE: Statement = {
  name: 'books_page',
  text: 'SELECT id, title, author, year FROM books WHERE id > $1 ORDER BY id LIMIT $2',
}
// row_to_json writes each book compactly, members in column order; the server builds the text.
const PAGE_JSON: Statement = {
  name: 'books_page_json',
  text: `SELECT '[' || coalesce(string_agg(row_to_json(page)::text, ',' ORDER BY id), '') || ']' AS json,
    count(*)::int AS count, max(id) AS "lastId"
  FROM (SELECT id, title, author, year FROM books WHERE id > $1 ORDER BY id LIMIT $2) page`,
}
// SKIP LOCKED: instances recording failures at once do not wait for each other's purge, and
// whatever one skips, the next purge deletes.
const RECORD_LOGIN_FAILURE: Statement = {
  name: 'login_failures_record',
  text: `WITH expired AS (
    DELETE FROM login_failures WHERE ctid IN
      (SELECT ctid FROM login_failures WHERE failed_at <= $3 FOR UPDATE SKIP LOCKED)
  )
  INSERT INTO login_failures (client_key, failed_at) VALUES ($1, $2)`,
}
const RECENT_LOGIN_FAILURES: Statement = {
  name: 'login_failures_recent',
  text: `SELECT failed_at FROM login_failures WHERE client_key = $1 AND failed_at > $2
  ORDER BY failed_at DESC LIMIT $3`,
}
const PING: Statement = { name: 'books_ping', text: 'SELECT 1' }

/**
 * Settles like `work`, or fails as unavailable after `ms`. The driver's own timeouts apply to
 * each step (waiting for a connection, opening one, the query); this bounds their sum.
 */
function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new StoreUnavailableError(new Error(`No answer within ${ms} ms`))), ms)
  })
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer))
}

export class PostgresBookStore implements Store {
  readonly #pool: pg.Pool
  readonly #queryTimeoutMs: number
  readonly #lookup = batchedLookup(async (ids) => (await this.#query<StoredBook>(SELECT, [ids])).rows)
  // Two at once: one batch is sent and run while the one before waits for its commit's WAL flush.
  readonly #writes = new WriteBatches({ concurrency: 2 })
  readonly #batched = batchedBookWrites((statement, values) => this.#query(statement, values))

  private constructor({ url, poolSize, connectTimeoutMs, queryTimeoutMs }: PostgresOptions) {
    this.#queryTimeoutMs = queryTimeoutMs
    this.#pool = new pg.Pool({
      connectionString: url,
      max: poolSize,
      connectionTimeoutMillis: connectTimeoutMs,
      // A stalled server never answers, so the client stops waiting for it on its own clock.
      query_timeout: queryTimeoutMs,
      // The server gives up too, so a statement abandoned by its client stops holding locks.
      statement_timeout: queryTimeoutMs,
      keepAlive: true,
      application_name: APPLICATION_NAME,
      types,
    })
    // An idle connection that breaks (server restart, network cut) is dropped by the pool and
    // reported here; the next operation opens a fresh one, and its failure is what a request sees.
    this.#pool.on('error', () => {})
  }

  /** Brings the schema up to date, then serves; fails with StoreUnavailableError when unreachable. */
  static async open(options: PostgresOptions): Promise<PostgresBookStore> {
    try {
      await migratePostgres(options.url, options.connectTimeoutMs)
    } catch (err) {
      throw classifyPostgresError(err)
    }
    return new PostgresBookStore(options)
  }

  async #query<R extends QueryResultRow>({ name, text }: Statement, values: unknown[]): Promise<pg.QueryResult<R>> {
    try {
      return await withDeadline(this.#pool.query<R>({ name, text, values }), this.#queryTimeoutMs)
    } catch (err) {
      throw classifyPostgresError(err)
    }
  }

  /** A write in the next batch, failed as unavailable when its answer takes longer than one query may. */
  #batch<I, O>(write: BatchedWrite<I, O>, input: I): Promise<O> {
    return withDeadline(this.#writes.add(write, input), this.#queryTimeoutMs)
  }

  create(book: NewBook): Promise<StoredBook> {
    return this.#batch(this.#batched.create, book)
  }

  get(id: number): Promise<StoredBook | undefined> {
    return this.#lookup(id)
  }

  async list(after: number, limit: number): Promise<Book[]> {
    return (await this.#query<Book>(PAGE, [after, limit])).rows
  }

  async listJson(after: number, limit: number): Promise<BookPageJson> {
    const { rows } = await this.#query<{ json: string; count: number; lastId: number | null }>(PAGE_JSON, [after, limit])
    const { json, count, lastId } = rows[0]!
    return { json, count, lastId: lastId ?? undefined }
  }

  update(id: number, changes: BookChanges, expectedRevisions?: readonly number[]): Promise<UpdateResult> {
    return this.#batch(this.#batched.update, { id, changes, expectedRevisions })
  }

  delete(id: number): Promise<boolean> {
    return this.#batch(this.#batched.remove, id)
  }

  async recordLoginFailure(key: string, at: number, expiredUpTo: number): Promise<void> {
    await this.#query(RECORD_LOGIN_FAILURE, [key, at, expiredUpTo])
  }

  async recentLoginFailures(key: string, since: number, limit: number): Promise<number[]> {
    const { rows } = await this.#query<{ failed_at: number }>(RECENT_LOGIN_FAILURES, [key, since, limit])
    return rows.map((row) => row.failed_at)
  }

  async ping(): Promise<void> {
    await this.#query(PING, [])
  }

  async close(): Promise<void> {
    if (!this.#pool.ending) await this.#pool.end()
  }
}
