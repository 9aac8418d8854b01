import { DatabaseSync } from 'node:sqlite'
import type { FindQuery, FoundBooks } from '../../books/find-query.ts'
import { fold, indexWords, searchKeys } from '../../books/folding.ts'
import { keyClaimOf, type KeyRow } from '../sql/idempotency-rows.ts'
import { loadMigrations } from '../migrations.ts'
import { createPrivateDatabaseFile } from './private-files.ts'
import { sqliteFinder } from './find.ts'
import { SqliteSearchIndex } from './search-index.ts'
import {
  StoreUnavailableError,
  type BookRepository,
  type IdempotencyKeyRepository,
  type KeyClaim,
  type LoginFailureRepository,
  type Repositories,
  type Store,
  type UpdateResult,
} from '../store.ts'
import type { Book, StoredBook } from '../../books/book.ts'
import { CommitPerTurn } from './commit-per-turn.ts'

export interface SqliteOptions {
  /** A file path, or `:memory:`. */
  path: string
  /** How long a write waits for another process's lock before the request answers 503. */
  busyTimeoutMs?: number
  /**
   * With WAL, `normal` syncs at checkpoints only: a commit answered is in the OS and survives
   * a crash of the process, but a power loss may take the newest commits. `full` syncs the
   * log at every commit, so commits also survive a power loss, at the cost of one fsync each.
   */
  synchronous?: 'normal' | 'full' | undefined
  /** How many new books wait outside the search indexes before they go in together (see SqliteSearchIndex). */
  searchIndexBatch?: number
}

// Primary result codes (the low byte of an extended code) that mean "try again later".
const SQLITE_BUSY = 5
const SQLITE_LOCKED = 6
const SQLITE_IOERR = 10
const SQLITE_FULL = 13
const SQLITE_CANTOPEN = 14
const TRANSIENT = new Set([SQLITE_BUSY, SQLITE_LOCKED, SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN])

function classify(err: unknown): unknown {
  const code = (err as { errcode?: unknown }).errcode
  return typeof code === 'number' && TRANSIENT.has(code & 0xff) ? new StoreUnavailableError(err) : err
}

/** Runs a synchronous statement as the store's promise, with its failure classified. */
function settle<T>(statement: () => T): Promise<T> {
  try {
    return Promise.resolve(statement())
  } catch (err) {
    return Promise.reject(classify(err))
  }
}

/** The path of a `sqlite:PATH` URL. */
export function sqlitePath(url: string): string {
  return url.slice('sqlite:'.length)
}

/**
 * The service's folding, callable from SQL: the migration that adds the search columns fills
 * them for the books already stored with these.
 */
function registerFolding(db: DatabaseSync): void {
  const text = (value: unknown) => (typeof value === 'string' ? value : '')
  db.function('book_fold', { deterministic: true }, (value) => fold(text(value)))
  db.function('book_words', { deterministic: true }, (value) => indexWords(fold(text(value))).join(' '))
}

function migrate(db: DatabaseSync): void {
  // IMMEDIATE takes the write lock first, so processes starting together migrate one at a time.
  db.exec('BEGIN IMMEDIATE')
  try {
    db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version    INTEGER PRIMARY KEY,
      name       TEXT NOT NULL,
      applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
    )`)
    const applied = new Set(
      db
        .prepare('SELECT version FROM schema_migrations')
        .all()
        .map((row) => row.version as number),
    )
    const record = db.prepare('INSERT INTO schema_migrations (version, name) VALUES (?, ?)')
    for (const migration of loadMigrations('sqlite')) {
      if (applied.has(migration.version)) continue
      // Nothing SQLite needs runs outside a transaction, and starting processes rely on this one.
      if (!migration.transaction) throw new Error(`SQLite migrations run in a transaction: ${migration.version}_${migration.name}`)
      db.exec(migration.sql)
      record.run(migration.version, migration.name)
    }
    db.exec('COMMIT')
  } catch (err) {
    db.exec('ROLLBACK')
    throw err
  }
}

const COLUMNS = 'id, title, author, year, revision'

/** How a repository runs its statements: batched into the turn's transaction, or inside one of the caller's. */
interface Executor {
  /** A statement that only reads. */
  read<T>(statement: () => T): Promise<T>
  /** A statement that writes. */
  write<T>(statement: () => T): Promise<T>
  /** A read that runs on its own, outside the turn's batch. */
  direct<T>(statement: () => T): Promise<T>
}

function prepareStatements(db: DatabaseSync) {
  return {
    // No RETURNING: SQLite gathers returned rows in a table of their own first, which cost a
    // third of the insert (2.4 µs of 8.6 with the indexes), and the new book is known without it.
    insert: db.prepare(`INSERT INTO books (title, author, year, title_folded, author_folded, title_words, author_words)
      VALUES (?, ?, ?, ?, ?, ?, ?)`),
    select: db.prepare(`SELECT ${COLUMNS} FROM books WHERE id = ?`),
    exists: db.prepare('SELECT 1 FROM books WHERE id = ?'),
    page: db.prepare('SELECT id, title, author, year FROM books WHERE id > ? ORDER BY id LIMIT ?'),
    // The subquery cannot be flattened (it has a LIMIT), so the aggregate sees its rows in id order.
    pageJson: db.prepare(`SELECT
        json_group_array(json_object('id', id, 'title', title, 'author', author, 'year', year)) AS json,
        count(*) AS count, max(id) AS lastId
      FROM (SELECT id, title, author, year FROM books WHERE id > ? ORDER BY id LIMIT ?)`),
    update: db.prepare(`UPDATE books
      SET title = coalesce(?1, title), author = coalesce(?2, author), year = coalesce(?3, year),
          title_folded = coalesce(?6, title_folded), author_folded = coalesce(?7, author_folded),
          title_words = coalesce(?8, title_words), author_words = coalesce(?9, author_words),
          revision = revision + 1
      WHERE id = ?4 AND (?5 IS NULL OR revision IN (SELECT value FROM json_each(?5)))
      RETURNING ${COLUMNS}`),
    delete: db.prepare('DELETE FROM books WHERE id = ?'),
    insertLoginFailure: db.prepare('INSERT INTO login_failures (client_key, failed_at) VALUES (?, ?)'),
    deleteExpiredLoginFailures: db.prepare('DELETE FROM login_failures WHERE failed_at <= ?'),
    recentLoginFailures: db.prepare(`SELECT failed_at FROM login_failures
      WHERE client_key = ? AND failed_at > ? ORDER BY failed_at DESC LIMIT ?`),
    // One statement for a whole batch: the books arrive as one JSON array, whatever its length.
    insertMany: db.prepare(`INSERT INTO books (title, author, year, title_folded, author_folded, title_words, author_words)
      SELECT value ->> 'title', value ->> 'author', value ->> 'year',
        value ->> 'titleFolded', value ->> 'authorFolded', value ->> 'titleWords', value ->> 'authorWords'
      FROM json_each(?) ORDER BY key
      RETURNING id`),
    claimKey: db.prepare(`INSERT INTO idempotency_keys (scope, key, created_at, locked_until) VALUES (?1, ?2, ?3, ?4)
      ON CONFLICT (scope, key) DO UPDATE
        SET created_at = excluded.created_at, locked_until = excluded.locked_until,
            fingerprint = NULL, status = NULL, headers = NULL, body = NULL
        WHERE (idempotency_keys.status IS NULL AND idempotency_keys.locked_until <= ?3) OR idempotency_keys.created_at <= ?5
      RETURNING 1 AS claimed`),
    selectKey: db.prepare('SELECT fingerprint, status, headers, body FROM idempotency_keys WHERE scope = ? AND key = ?'),
    // A few at a time, so that no claim pays for a day's backlog at once.
    purgeKeys: db.prepare(`DELETE FROM idempotency_keys WHERE rowid IN
      (SELECT rowid FROM idempotency_keys WHERE created_at <= ? LIMIT 100)`),
    completeKey: db.prepare(`UPDATE idempotency_keys SET fingerprint = ?, status = ?, headers = ?, body = ?
      WHERE scope = ? AND key = ? AND status IS NULL`),
    releaseKey: db.prepare('DELETE FROM idempotency_keys WHERE scope = ? AND key = ? AND status IS NULL'),
    ping: db.prepare('SELECT 1'),
    begin: db.prepare('BEGIN IMMEDIATE'),
    commit: db.prepare('COMMIT'),
  }
}

type Statements = ReturnType<typeof prepareStatements>

/** The store's prepared statements, the finder that prepares its own by shape of query, and the search indexes' upkeep. */
interface Queries {
  sql: Statements
  find: (query: FindQuery) => FoundBooks
  searchIndex: SqliteSearchIndex
}

function bookRepository({ sql, find, searchIndex }: Queries, run: Executor): BookRepository {
  return {
    create: (book) => {
      const keys = searchKeys(book)
      return run.write(() => {
        const { lastInsertRowid } = sql.insert.run(
          book.title,
          book.author,
          book.year,
          keys.titleFolded,
          keys.authorFolded,
          keys.titleWords,
          keys.authorWords,
        )
        const id = Number(lastInsertRowid)
        searchIndex.stored(id)
        return { id, title: book.title, author: book.author, year: book.year, revision: 1 }
      })
    },
    createMany: (books) => {
      const rows = JSON.stringify(books.map((book) => ({ title: book.title, author: book.author, year: book.year, ...searchKeys(book) })))
      return run.write(() => {
        const ids = sql.insertMany.all(rows) as { id: number }[]
        // Ids ascend in insertion order, which follows the array; RETURNING promises no order.
        const sorted = ids.map((row) => row.id).sort((a, b) => a - b)
        if (sorted.length > 0) searchIndex.stored(sorted.at(-1)!, true)
        return sorted
      })
    },
    get: (id) => run.read(() => sql.select.get(id) as StoredBook | undefined),
    list: (after, limit) => run.direct(() => sql.page.all(after, limit) as unknown as Book[]),
    listJson: (after, limit) =>
      run.direct(() => {
        const row = sql.pageJson.get(after, limit) as { json: string; count: number; lastId: number | null }
        return { json: row.json, count: row.count, lastId: row.lastId ?? undefined }
      }),
    find: (query) => run.direct(() => find(query)),
    update: (id, changes, expectedRevisions) => {
      const title = changes.title === undefined ? undefined : searchKeys({ title: changes.title, author: '' })
      const author = changes.author === undefined ? undefined : searchKeys({ title: '', author: changes.author })
      return run.write((): UpdateResult => {
        const book = sql.update.get(
          changes.title ?? null,
          changes.author ?? null,
          changes.year ?? null,
          id,
          expectedRevisions === undefined ? null : JSON.stringify(expectedRevisions),
          title?.titleFolded ?? null,
          author?.authorFolded ?? null,
          title?.titleWords ?? null,
          author?.authorWords ?? null,
        ) as StoredBook | undefined
        if (book) return { outcome: 'updated', book }
        return { outcome: sql.exists.get(id) ? 'stale' : 'missing' }
      })
    },
    delete: (id) => run.write(() => sql.delete.run(id).changes > 0),
  }
}

function loginFailureRepository({ sql }: Queries, run: Executor): LoginFailureRepository {
  return {
    record: (key, at, expiredUpTo) =>
      run.write(() => {
        sql.insertLoginFailure.run(key, at)
        sql.deleteExpiredLoginFailures.run(expiredUpTo)
      }),
    recent: (key, since, limit) => run.read(() => sql.recentLoginFailures.all(key, since, limit).map((row) => row.failed_at as number)),
  }
}

function idempotencyKeyRepository({ sql }: Queries, run: Executor): IdempotencyKeyRepository {
  return {
    claim: (scope, key, at, lockedUntil, expiredUpTo) =>
      run.write((): KeyClaim => {
        sql.purgeKeys.run(expiredUpTo)
        if (sql.claimKey.get(scope, key, at, lockedUntil, expiredUpTo)) return { state: 'claimed' }
        const row = sql.selectKey.get(scope, key) as KeyRow | undefined
        return keyClaimOf(row)
      }),
    complete: (scope, key, fingerprint, answer) =>
      run.write(() => {
        const { changes } = sql.completeKey.run(fingerprint, answer.status, JSON.stringify(answer.headers), answer.body, scope, key)
        if (changes !== 1) throw new Error('The idempotency key is no longer held by this request')
      }),
    release: (scope, key) =>
      run.write(() => {
        sql.releaseKey.run(scope, key)
      }),
  }
}

function repositories(queries: Queries, run: Executor): Repositories {
  return {
    books: bookRepository(queries, run),
    loginFailures: loginFailureRepository(queries, run),
    idempotencyKeys: idempotencyKeyRepository(queries, run),
  }
}

/**
 * Runs each statement at once, on the connection a transaction holds, until the transaction
 * has settled; after that the statements would run outside it, so they fail instead.
 */
function transactionExecutor(): Executor & { end(): void } {
  let open = true
  const now = <T>(statement: () => T): Promise<T> => {
    if (!open) return Promise.reject(new Error('The transaction has ended'))
    return settle(statement)
  }
  return {
    read: now,
    write: now,
    direct: now,
    end: () => {
      open = false
    },
  }
}

/**
 * The store in one SQLite file, on one connection: operations asked for in one turn commit
 * together (see CommitPerTurn), and a transaction holds the connection until it settles.
 */
export class SqliteStore implements Store {
  readonly books: BookRepository
  readonly loginFailures: LoginFailureRepository
  readonly idempotencyKeys: IdempotencyKeyRepository
  readonly #db: DatabaseSync
  readonly #queries: Queries
  readonly #turn: CommitPerTurn

  constructor({ path, busyTimeoutMs = 4000, synchronous = 'normal', searchIndexBatch }: SqliteOptions) {
    if (path !== ':memory:') createPrivateDatabaseFile(path)
    const db = new DatabaseSync(path)
    this.#db = db
    let searchIndex: SqliteSearchIndex
    try {
      db.exec(`PRAGMA busy_timeout = ${Math.trunc(busyTimeoutMs)}`)
      db.exec('PRAGMA journal_mode = WAL')
      db.exec(`PRAGMA synchronous = ${synchronous === 'full' ? 'FULL' : 'NORMAL'}`)
      registerFolding(db)
      migrate(db)
      searchIndex = new SqliteSearchIndex(db, searchIndexBatch)
      searchIndex.indexAll()
    } catch (err) {
      db.close()
      throw classify(err)
    }
    this.#queries = { sql: prepareStatements(db), find: sqliteFinder(db), searchIndex }
    const turn = new CommitPerTurn(db, classify)
    this.#turn = turn
    const batched: Executor = {
      read: (statement) => turn.read(statement),
      write: (statement) => turn.write(statement),
      direct: (statement) => turn.direct(statement),
    }
    const { books, loginFailures, idempotencyKeys } = repositories(this.#queries, batched)
    this.books = books
    this.loginFailures = loginFailures
    this.idempotencyKeys = idempotencyKeys
  }

  transaction<T>(work: (repositories: Repositories) => Promise<T>): Promise<T> {
    return this.#turn.hold(async () => {
      const db = this.#db
      try {
        // IMMEDIATE takes the write lock first, so a busy database fails here, before any work.
        this.#queries.sql.begin.run()
      } catch (err) {
        throw classify(err)
      }
      const run = transactionExecutor()
      try {
        const result = await work(repositories(this.#queries, run))
        run.end()
        this.#queries.searchIndex.settle()
        this.#queries.sql.commit.run()
        return result
      } catch (err) {
        run.end()
        try {
          if (db.isTransaction) db.exec('ROLLBACK')
        } catch {
          // Nothing was committed, and the next BEGIN finds out whether the store recovered.
        }
        throw classify(err)
      }
    })
  }

  /** The synchronous level in force: 1 is NORMAL, 2 is FULL. */
  synchronousLevel(): number {
    return this.#db.prepare('PRAGMA synchronous').get()!.synchronous as number
  }

  ping(): Promise<void> {
    return this.#turn.direct(() => {
      this.#queries.sql.ping.get()
    })
  }

  async close(): Promise<void> {
    await this.#turn.released()
    if (!this.#db.isOpen) return
    this.#turn.flush()
    this.#db.close()
  }
}
