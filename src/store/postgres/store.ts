import pg, { type QueryResultRow } from 'pg'
import { usernameKey } from '../../accounts/account.ts'
import { KEY_COLUMNS, keyOf, USER_COLUMNS, userOf, type ApiKeyRow, type UserRow } from '../sql/account-rows.ts'
import { lookupsPerTurn } from './lookups-per-turn.ts'
import { keyClaimOf, type KeyRow } from '../sql/idempotency-rows.ts'
import { batchedBookWrites, bookColumns, INSERT_BOOK_COLUMNS, RECORD_CREATED, TAKE_SEQ } from './book-writes.ts'
import { CHANGE_COLUMNS, changeOf, TRASH_COLUMNS, trashedBookOf, type ChangeRow, type TrashRow } from '../sql/change-rows.ts'
import { PostgresReader } from './reader.ts'
import { PostgresChangeSignals } from './change-signals.ts'
import { FindTurns } from './find-turns.ts'
import { connectWithin, heeding, runWithin, withDeadline } from './connections.ts'
import { classifyPostgresError } from './errors.ts'
import { APPLICATION_NAME, migratePostgres } from './migrate.ts'
import {
  SEARCH_DEADLINE_MS,
  type AccountRepository,
  type BookReader,
  type BookRepository,
  type ChangeRepository,
  type ChangeSignals,
  type IdempotencyKeyRepository,
  type LoginFailureRepository,
  type Repositories,
  type Store,
  type TrashRepository,
} from '../store.ts'
import type { NewBook, StoredBook } from '../../books/book.ts'
import { fold } from '../../books/folding.ts'
import { GroupCommit, type BatchedWrite } from './group-commit.ts'
import { noteDeletions, summariseBlock } from './block-summaries.ts'
import { BlockSummaries } from '../block-summaries.ts'

export interface PostgresOptions {
  /** A `postgres://` or `postgresql://` connection string. */
  url: string
  /** Most connections held at once, finds' share included. */
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
const INSERT_MANY: Statement = { name: 'books_insert_many', text: `${INSERT_BOOK_COLUMNS} RETURNING id` }
/**
 * Books an import stores with one INSERT_MANY: each statement costs the server something of its
 * own beside its rows', so fewer of them store an import faster; more than this gained nothing
 * (docs/performance-log.md#postgresql-imports-in-statements-of-500-books-29-november-2026).
 */
const IMPORT_ROWS = 500
// Each entry looked up on its own through the index of the filing titles (migration 019), which
// equal folded titles share: the smallest id stored with it, or null. Left to choose, the planner
// sorted every book to merge them with the entries, or combined the author and year indexes,
// while the books just imported had no statistics yet. The fence (OFFSET 0) keeps the other
// members out of the look-up, which only the filing titles' index can then serve.
const SAME_AS: Statement = {
  name: 'books_same_as',
  text: `SELECT (SELECT min(t.id) FROM (
        SELECT id, title_folded, author_folded, year FROM books
        WHERE book_filing_title(title_folded) = book_filing_title(w.title_folded) OFFSET 0
      ) t
      WHERE t.title_folded = w.title_folded AND t.author_folded = w.author_folded AND t.year = w.year AND t.id < $4) AS id
  FROM unnest($1::text[], $2::text[], $3::int[]) WITH ORDINALITY AS w(title_folded, author_folded, year, n)
  ORDER BY w.n`,
}
// Taken by a transaction before it first looks for duplicates, and held to its end: another import
// that skips duplicates looks only once this one has committed, and so finds the books it stored.
const SAME_AS_LOCK: Statement = {
  name: 'books_same_as_lock',
  text: `SELECT pg_advisory_xact_lock(hashtextextended('book-catalogue duplicates ' || current_schema(), 0))`,
}
// Expired keys go a few at a time with each claim; SKIP LOCKED so that claims never wait on each other's purge.
const CLAIM_KEY: Statement = {
  name: 'idempotency_keys_claim',
  text: `WITH expired AS (
    DELETE FROM idempotency_keys WHERE ctid IN
      (SELECT ctid FROM idempotency_keys WHERE created_at <= $5 AND NOT (scope = $1 AND key = $2)
       LIMIT 100 FOR UPDATE SKIP LOCKED)
  )
  INSERT INTO idempotency_keys AS held (scope, key, created_at, locked_until) VALUES ($1, $2, $3, $4)
  ON CONFLICT (scope, key) DO UPDATE
    SET created_at = excluded.created_at, locked_until = excluded.locked_until,
        fingerprint = NULL, status = NULL, headers = NULL, body = NULL
    WHERE (held.status IS NULL AND held.locked_until <= $3) OR held.created_at <= $5
  RETURNING true AS claimed`,
}
const SELECT_KEY: Statement = {
  name: 'idempotency_keys_select',
  text: 'SELECT fingerprint, status, headers, body FROM idempotency_keys WHERE scope = $1 AND key = $2',
}
const COMPLETE_KEY: Statement = {
  name: 'idempotency_keys_complete',
  text: `UPDATE idempotency_keys SET fingerprint = $3, status = $4, headers = $5, body = $6
  WHERE scope = $1 AND key = $2 AND status IS NULL`,
}
const RELEASE_KEY: Statement = {
  name: 'idempotency_keys_release',
  text: 'DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2 AND status IS NULL',
}
const PING: Statement = { name: 'books_ping', text: 'SELECT 1' }
// One row whatever the book: `known` says whether the id is stored or in the trash, and the
// changes, if any, come after it.
const CHANGES_OF_BOOK: Statement = {
  name: 'book_changes_of_book',
  text: `SELECT known.known, c.* FROM
    (SELECT EXISTS (SELECT FROM books WHERE id = $1) OR EXISTS (SELECT FROM trashed_books WHERE id = $1) AS known) known
    LEFT JOIN LATERAL (
      SELECT ${CHANGE_COLUMNS} FROM book_changes WHERE book_id = $1 AND seq < $2 ORDER BY seq DESC LIMIT $3
    ) c ON known.known`,
}
const CHANGE: Statement = { name: 'book_changes_get', text: `SELECT ${CHANGE_COLUMNS} FROM book_changes WHERE seq = $1` }
const CHANGES_AFTER: Statement = {
  name: 'book_changes_after',
  text: `SELECT ${CHANGE_COLUMNS} FROM book_changes WHERE seq > $1 ORDER BY seq LIMIT $2`,
}
const NEWEST_CHANGE: Statement = { name: 'change_seq_last', text: 'SELECT last FROM change_seq' }
const TRASH_PAGE: Statement = {
  name: 'trashed_books_page',
  text: `SELECT ${TRASH_COLUMNS} FROM trashed_books WHERE deleted_seq < $1 ORDER BY deleted_seq DESC LIMIT $2`,
}
const EXPIRED: Statement = {
  name: 'trashed_books_expired',
  // The oldest deletions by seq, then those of them due: times follow seqs but for the instances' clocks.
  text: `SELECT id FROM (SELECT id, deleted_at, deleted_seq FROM trashed_books ORDER BY deleted_seq LIMIT $2) AS oldest
    WHERE deleted_at <= $1 ORDER BY deleted_seq`,
}

/** Moves the accounts' version in the statement that changes them (see AccountRepository). */
const BUMP = 'WITH v AS (UPDATE accounts_version SET version = version + 1 RETURNING version)'
const ACCOUNTS_VERSION: Statement = { name: 'accounts_version', text: 'SELECT version FROM accounts_version' }
const ALL_USERS: Statement = { name: 'users_all', text: `SELECT ${USER_COLUMNS} FROM users ORDER BY username_key` }
const ALL_KEYS: Statement = { name: 'api_keys_all', text: `SELECT ${KEY_COLUMNS} FROM api_keys ORDER BY id` }
const CREATE_USER: Statement = {
  name: 'users_create',
  text: `${BUMP},
    added AS (INSERT INTO users (username_key, ${USER_COLUMNS}) SELECT $1, $2, $3, $4, $5, v.version FROM v
      ON CONFLICT DO NOTHING RETURNING username_key, stamp),
    left_behind AS (DELETE FROM api_keys WHERE owner_key IN (SELECT username_key FROM added))
    SELECT stamp FROM added`,
}
const UPDATE_USER: Statement = {
  name: 'users_update',
  text: `${BUMP}
    UPDATE users SET role = coalesce($2, role), password_hash = coalesce($3, password_hash), stamp = v.version FROM v
    WHERE username_key = $1 RETURNING ${USER_COLUMNS}`,
}
const DELETE_USER: Statement = {
  name: 'users_delete',
  text: `${BUMP}, keys AS (DELETE FROM api_keys WHERE owner_key = $1) DELETE FROM users WHERE username_key = $1 RETURNING 1`,
}
const CREATE_KEY: Statement = {
  name: 'api_keys_create',
  text: `${BUMP} INSERT INTO api_keys (name, role, owner, owner_key, hash, created, expires)
    SELECT $1, $2, $3, $4, $5, $6, $7 FROM v RETURNING ${KEY_COLUMNS}`,
}
const DELETE_KEY: Statement = { name: 'api_keys_delete', text: `${BUMP} DELETE FROM api_keys WHERE id = $1 RETURNING 1` }
const TOUCH_KEYS: Statement = {
  name: 'api_keys_touch',
  text: `UPDATE api_keys k SET last_used = greatest(coalesce(k.last_used, 0), u.at)
    FROM unnest($1::bigint[], $2::bigint[]) AS u (id, at) WHERE k.id = u.id`,
}

/** The most change rows one statement of an import's seal carries. */
const SEAL_CHUNK = 10_000

/**
 * Runs one statement, on the pool or on the client a transaction holds; one without a name is
 * parsed anew each time (finds, whose text varies with the query).
 */
type Query = <R extends QueryResultRow>(
  statement: Statement | { text: string; rowMode?: 'array' },
  values: unknown[],
  sendBy?: number,
) => Promise<pg.QueryResult<R>>

/** Sends one write of a kind that batchedBookWrites runs, and answers with its outcome. */
type Write = <I, O>(write: BatchedWrite<I, O>, input: I) => Promise<O>

/**
 * A write as a statement of its own, as a transaction sends them: on the client it holds, in
 * the order its work asks, never in a batch that other requests share.
 */
const writeAlone: Write = async (write, input) => (await write.run([input]))[0]!

function bookRepository(
  query: Query,
  get: (id: number) => Promise<StoredBook | undefined>,
  write: Write,
  createMany: (actor: string, books: NewBook[]) => Promise<number[]>,
  beforeSameAs?: () => Promise<unknown>,
): BookRepository {
  const writes = batchedBookWrites(query)
  return {
    create: (actor, book) => write(writes.create, { actor, input: book }),
    createMany,
    importRows: IMPORT_ROWS,
    get,
    async sameAs(books, below = Number.MAX_SAFE_INTEGER) {
      await beforeSameAs?.()
      const { rows } = await query<{ id: number | null }>(SAME_AS, [
        books.map((book) => fold(book.title)),
        books.map((book) => fold(book.author)),
        books.map((book) => book.year),
        below,
      ])
      return rows.map(({ id }) => id ?? undefined)
    },
    update: (actor, id, changes, expectedRevisions) => write(writes.update, { actor, input: { id, changes, expectedRevisions } }),
    delete: (actor, id, expectedRevisions) => write(writes.remove, { actor, input: { id, expectedRevisions } }),
    restore: (actor, id) => write(writes.restore, { actor, input: id }),
    purge: (actor, id) => write(writes.purge, { actor, input: id }),
  }
}

function changeRepository(query: Query): ChangeRepository {
  return {
    async ofBook(bookId, before, limit) {
      const { rows } = await query<ChangeRow & { known: boolean }>(CHANGES_OF_BOOK, [bookId, before ?? Number.MAX_SAFE_INTEGER, limit])
      if (!rows[0]?.known) return undefined
      return rows.filter((row) => row.seq !== null).map(changeOf)
    },
    async get(seq) {
      const { rows } = await query<ChangeRow>(CHANGE, [seq])
      return rows[0] && changeOf(rows[0])
    },
    // Numbers are handed out in commit order (see book-writes.ts): once a change is visible, so
    // is every change with a smaller seq, and a read from the last one seen misses none.
    async after(after, limit) {
      const { rows } = await query<ChangeRow>(CHANGES_AFTER, [after, limit])
      return rows.map(changeOf)
    },
    async latest() {
      return (await query<{ last: number }>(NEWEST_CHANGE, [])).rows[0]!.last
    },
  }
}

function trashRepository(query: Query): TrashRepository {
  return {
    async list(before, limit) {
      const { rows } = await query<TrashRow>(TRASH_PAGE, [before ?? Number.MAX_SAFE_INTEGER, limit])
      return rows.map(trashedBookOf)
    },
    async expired(upTo, limit) {
      const { rows } = await query<{ id: number }>(EXPIRED, [upTo, limit])
      return rows.map((row) => row.id)
    },
  }
}

/** The books an import stored in a transaction, whose changes it records just before it commits. */
interface Staged {
  actor: string
  at: number
  ids: number[]
}

/**
 * Records the changes of the books staged in a transaction, numbered all at once as its last
 * step: the numbers' lock is held from here to the commit, as a batch's is (see recordChanges),
 * and not for the whole import, which would hold every other write for as long.
 */
async function seal(query: Query, staged: Staged[]): Promise<void> {
  const total = staged.reduce((sum, part) => sum + part.ids.length, 0)
  if (total === 0) return
  const { rows } = await query<{ base: number }>(TAKE_SEQ, [total])
  let base = rows[0]!.base
  for (const { actor, at, ids } of staged) {
    for (let start = 0; start < ids.length; start += SEAL_CHUNK) {
      const chunk = ids.slice(start, start + SEAL_CHUNK)
      await query(RECORD_CREATED, [base, actor, at, chunk])
      base += chunk.length
    }
  }
}

function accountRepository(query: Query): AccountRepository {
  const current = async () => (await query<{ version: number }>(ACCOUNTS_VERSION, [])).rows[0]!.version
  return {
    current,
    async snapshot() {
      // The version first: the rows read after it are at least as new.
      const at = await current()
      const [users, keys] = await Promise.all([query<UserRow>(ALL_USERS, []), query<ApiKeyRow>(ALL_KEYS, [])])
      return { version: at, users: users.rows.map(userOf), keys: keys.rows.map(keyOf) }
    },
    async createUser(user) {
      const { username, role, passwordHash, created } = user
      const { rows } = await query<{ stamp: number }>(CREATE_USER, [usernameKey(username), username, role, passwordHash, created])
      return rows[0] && { ...user, stamp: rows[0].stamp }
    },
    async updateUser(username, { role, passwordHash }) {
      const { rows } = await query<UserRow>(UPDATE_USER, [usernameKey(username), role ?? null, passwordHash ?? null])
      return rows[0] && userOf(rows[0])
    },
    async deleteUser(username) {
      return (await query(DELETE_USER, [usernameKey(username)])).rows.length === 1
    },
    async createKey({ name, role, owner, hash, created, expires }) {
      const { rows } = await query<ApiKeyRow>(CREATE_KEY, [name, role, owner, usernameKey(owner), hash, created, expires])
      return keyOf(rows[0]!)
    },
    async deleteKey(id) {
      return (await query(DELETE_KEY, [id])).rows.length === 1
    },
    async touchKeys(uses) {
      await query(TOUCH_KEYS, [[...uses.keys()], [...uses.values()]])
    },
  }
}

function loginFailureRepository(query: Query): LoginFailureRepository {
  return {
    async record(key, at, expiredUpTo) {
      await query(RECORD_LOGIN_FAILURE, [key, at, expiredUpTo])
    },
    async recent(key, since, limit) {
      const { rows } = await query<{ failed_at: number }>(RECENT_LOGIN_FAILURES, [key, since, limit])
      return rows.map((row) => row.failed_at)
    },
  }
}

function idempotencyKeyRepository(query: Query): IdempotencyKeyRepository {
  return {
    async claim(scope, key, at, lockedUntil, expiredUpTo) {
      const claimed = await query(CLAIM_KEY, [scope, key, at, lockedUntil, expiredUpTo])
      if ((claimed.rowCount ?? 0) > 0) return { state: 'claimed' }
      const { rows } = await query<KeyRow>(SELECT_KEY, [scope, key])
      return keyClaimOf(rows[0])
    },
    async complete(scope, key, fingerprint, answer) {
      const { rowCount } = await query(COMPLETE_KEY, [scope, key, fingerprint, answer.status, JSON.stringify(answer.headers), answer.body])
      if (rowCount !== 1) throw new Error('The idempotency key is no longer held by this request')
    },
    async release(scope, key) {
      await query(RELEASE_KEY, [scope, key])
    },
  }
}

/** The store in a PostgreSQL schema, through a pool of connections. */
export class PostgresStore implements Store {
  readonly books: BookRepository
  readonly changes: ChangeRepository
  readonly trash: TrashRepository
  readonly accounts: AccountRepository
  readonly loginFailures: LoginFailureRepository
  readonly idempotencyKeys: IdempotencyKeyRepository
  readonly reader: BookReader
  readonly changeSignals: ChangeSignals
  readonly storesWhileReading = true
  readonly #pool: pg.Pool
  /** Where finds run: a quarter of the connections, so that they can never take every one, nor every core of the server. */
  readonly #findPool: pg.Pool
  readonly #queryTimeoutMs: number
  readonly #writes: GroupCommit
  readonly #summaries: BlockSummaries

  private constructor({ url, poolSize, connectTimeoutMs, queryTimeoutMs }: PostgresOptions) {
    this.#queryTimeoutMs = queryTimeoutMs
    // Two at once: one batch is sent and run while the one before waits for its commit's WAL flush.
    this.#writes = new GroupCommit({ concurrency: 2, deadlineMs: queryTimeoutMs })
    const findShare = Math.max(1, Math.floor(poolSize / 4))
    const pool = (max: number, timeoutMs: number) => {
      const created = new pg.Pool({
        connectionString: url,
        max,
        // A connection once opened is kept, however long it idles. A new one pays more than its
        // start: its server process maps each page of the shared buffers it first touches, and a
        // find that reads the table after a pause took hundreds of milliseconds longer on one
        // (docs/postgresql.md#connections-are-kept).
        min: max,
        // Also how long a statement waits for a free connection: no longer than its deadline, or
        // one whose request was answered 503 could still run once a connection came free.
        connectionTimeoutMillis: Math.min(connectTimeoutMs, timeoutMs),
        // The server gives up too, so a statement abandoned by its client stops holding locks.
        statement_timeout: timeoutMs,
        keepAlive: true,
        application_name: APPLICATION_NAME,
        types,
        // Settings of each new connection, made before the pool lends it out, so that no statement
        // of a request waits in the connection's queue behind them (pg warns of such a queue, and
        // pg 9 refuses it). A setting the server refuses leaves the connection as it was.
        // eslint-disable-next-line @typescript-eslint/no-misused-promises -- pg-pool waits for the promise (typed as void)
        onConnect: async (client) => {
          // Compiling a statement takes tens of milliseconds, which a find of many books reckoned
          // costly pays on each run and never wins back: its costs are the index's, not expressions'.
          await client.query('SET jit = off').catch(() => {})
          // A statement whose connection the service closed stops within a second, rather than at
          // its deadline: a whole read ended by its client is closed so. PostgreSQL 14 and later.
          await client.query('SET client_connection_check_interval = 1000').catch(() => {})
        },
      })
      // An idle connection that breaks (server restart, network cut) is dropped by the pool and
      // reported here; the next operation opens a fresh one, and its failure is what a request sees.
      created.on('error', () => {})
      return created
    }
    // A pool of one connection cannot be split: finds then share it with everything else.
    this.#pool = pool(Math.max(1, poolSize - findShare), queryTimeoutMs)
    this.#findPool = poolSize > 1 ? pool(findShare, SEARCH_DEADLINE_MS) : this.#pool
    this.reader = new PostgresReader(
      { pool: this.#findPool, deadlineMs: SEARCH_DEADLINE_MS, turns: new FindTurns(findShare) },
      { pool: this.#pool, deadlineMs: queryTimeoutMs },
    )
    this.changeSignals = new PostgresChangeSignals({ url, connectTimeoutMs })
    const query = this.#queryOnPool()
    const lookup = lookupsPerTurn(async (ids) => (await query<StoredBook>(SELECT, [ids])).rows)
    // A write in the next batch, failed as unavailable when its answer takes longer than one query may.
    const batched: Write = (write, input) => this.#writes.add(write, input)
    // Many books in one go are a transaction of their own, whose changes are sealed at its end.
    const createMany = (actor: string, books: NewBook[]) => this.transaction((repositories) => repositories.books.createMany(actor, books))
    this.books = bookRepository(query, lookup, batched, createMany)
    this.changes = changeRepository(query)
    this.trash = trashRepository(query)
    this.accounts = accountRepository(query)
    this.loginFailures = loginFailureRepository(query)
    this.idempotencyKeys = idempotencyKeyRepository(query)
    const summaries = async <T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> => {
      const client = await this.#connect()
      let failure: Error | undefined
      try {
        // A step may take as long as one statement may: a stalled server never answers, and the
        // connection, closed on release, would otherwise be held for good.
        return await withDeadline(
          heeding(client, () => work(client)),
          queryTimeoutMs,
        )
      } catch (err) {
        failure = err as Error
        throw err
      } finally {
        client.release(failure)
      }
    }
    this.#summaries = new BlockSummaries({ step: () => summaries(summariseBlock), noteDeletions: () => summaries(noteDeletions) })
  }

  /** Brings the schema up to date, then serves; fails with StoreUnavailableError when unreachable. */
  static async open(options: PostgresOptions): Promise<PostgresStore> {
    try {
      await migratePostgres(options.url, options.connectTimeoutMs)
    } catch (err) {
      throw classifyPostgresError(err)
    }
    return new PostgresStore(options)
  }

  /** Runs `config` on `client` within `ms`, with its failure classified. */
  #run<R extends QueryResultRow>(client: pg.PoolClient, config: pg.QueryConfig, ms = this.#queryTimeoutMs): Promise<pg.QueryResult<R>> {
    return runWithin<R>(client, config, ms)
  }

  /**
   * Runs `config` on a connection checked out of the pool, then gives it back. A connection whose
   * statement failed, or is still unanswered at the deadline, is closed rather than lent out
   * again, as the pool's own query does: a stalled server may never answer on it.
   */
  async #runAndRelease<R extends QueryResultRow>(client: pg.PoolClient, config: pg.QueryConfig, ms: number): Promise<pg.QueryResult<R>> {
    let failure: Error | undefined
    try {
      return await this.#run<R>(client, config, ms)
    } catch (err) {
      failure = err as Error
      throw err
    } finally {
      client.release(failure)
    }
  }

  /** Runs `config` on a connection of the pool, the wait for one included, within the deadline. */
  async #runOnPool<R extends QueryResultRow>(config: pg.QueryConfig): Promise<pg.QueryResult<R>> {
    const started = performance.now()
    const client = await this.#connect()
    return this.#runAndRelease<R>(client, config, Math.max(0, this.#queryTimeoutMs - (performance.now() - started)))
  }

  /** Statements on the pool: each on a connection of its own, or by `sendBy` when a batch asks. */
  #queryOnPool(): Query {
    return (statement, values, sendBy) =>
      sendBy === undefined ? this.#runOnPool({ ...statement, values }) : this.#runBy(sendBy, { ...statement, values })
  }

  /** Runs `config` on a connection of the pool if one is free by `sendBy`; otherwise it is never sent. */
  async #runBy<R extends QueryResultRow>(sendBy: number, config: pg.QueryConfig): Promise<pg.QueryResult<R>> {
    return this.#runAndRelease<R>(await this.#connectBy(sendBy), config, this.#queryTimeoutMs)
  }

  /**
   * A connection of the pool. The pool's connection timeout bounds both the wait for a free
   * connection and opening one, and is no longer than the deadline.
   */
  async #connect(): Promise<pg.PoolClient> {
    try {
      return await this.#pool.connect()
    } catch (err) {
      throw classifyPostgresError(err)
    }
  }

  #connectBy(sendBy: number): Promise<pg.PoolClient> {
    return connectWithin(this.#pool, sendBy - performance.now())
  }

  async transaction<T>(work: (repositories: Repositories) => Promise<T>): Promise<T> {
    const client = await this.#connect()
    let open = true
    // Once the transaction has settled, a statement would run outside it: it fails instead.
    const query: Query = (statement, values) =>
      open ? this.#run(client, { ...statement, values }) : Promise.reject(new Error('The transaction has ended'))
    const get = async (id: number) => {
      const { rows } = await query<StoredBook>(SELECT, [[id]])
      return rows[0]
    }
    const staged: Staged[] = []
    let sameAsLocked: Promise<unknown> | undefined
    // An import's rows are a batch already: one statement of their own, answered with the ids only.
    const createMany = async (actor: string, books: NewBook[]) => {
      const { rows } = await query<{ id: number }>(INSERT_MANY, bookColumns(books))
      const ids = rows.map((row) => row.id).sort((a, b) => a - b)
      staged.push({ actor, at: Date.now(), ids })
      return ids
    }
    let broken: Error | undefined
    try {
      await this.#run(client, { text: 'BEGIN' })
      const result = await work({
        books: bookRepository(query, get, writeAlone, createMany, () => (sameAsLocked ??= query(SAME_AS_LOCK, []))),
        changes: changeRepository(query),
        trash: trashRepository(query),
        accounts: accountRepository(query),
        loginFailures: loginFailureRepository(query),
        idempotencyKeys: idempotencyKeyRepository(query),
      })
      await seal(query, staged)
      open = false
      await this.#run(client, { text: 'COMMIT' })
      return result
    } catch (err) {
      open = false
      try {
        await this.#run(client, { text: 'ROLLBACK' })
      } catch (rollbackFailure) {
        // A connection that cannot roll back is in an unknown state: the pool closes it.
        broken = rollbackFailure as Error
      }
      throw err
    } finally {
      client.release(broken)
    }
  }

  async ping(): Promise<void> {
    await this.#runOnPool({ ...PING, values: [] })
  }

  async close(): Promise<void> {
    await this.#summaries.stop()
    await Promise.all([...new Set([this.#pool, this.#findPool])].map((pool) => (pool.ending ? Promise.resolve() : pool.end())))
  }
}
