import { DatabaseSync, type StatementSync } from 'node:sqlite'
import { loadMigrations } from './migrations.ts'
import { createPrivateDatabaseFile } from './private-files.ts'
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
import { TurnTransaction } from './turn-transaction.ts'

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

export class SqliteBookStore implements Store {
  readonly #db: DatabaseSync
  readonly #insert: StatementSync
  readonly #select: StatementSync
  readonly #exists: StatementSync
  readonly #page: StatementSync
  readonly #pageJson: StatementSync
  readonly #update: StatementSync
  readonly #delete: StatementSync
  readonly #insertLoginFailure: StatementSync
  readonly #deleteExpiredLoginFailures: StatementSync
  readonly #recentLoginFailures: StatementSync
  readonly #ping: StatementSync
  readonly #turn: TurnTransaction

  constructor({ path, busyTimeoutMs = 4000, synchronous = 'normal' }: SqliteOptions) {
    if (path !== ':memory:') createPrivateDatabaseFile(path)
    const db = new DatabaseSync(path)
    this.#db = db
    try {
      db.exec(`PRAGMA busy_timeout = ${Math.trunc(busyTimeoutMs)}`)
      db.exec('PRAGMA journal_mode = WAL')
      db.exec(`PRAGMA synchronous = ${synchronous === 'full' ? 'FULL' : 'NORMAL'}`)
      migrate(db)
    } catch (err) {
      db.close()
      throw classify(err)
    }
    this.#insert = db.prepare(`INSERT INTO books (title, author, year) VALUES (?, ?, ?) RETURNING ${COLUMNS}`)
    this.#select = db.prepare(`SELECT ${COLUMNS} FROM books WHERE id = ?`)
    this.#exists = db.prepare('SELECT 1 FROM books WHERE id = ?')
    this.#page = db.prepare('SELECT id, title, author, year FROM books WHERE id > ? ORDER BY id LIMIT ?')
    // The subquery cannot be flattened (it has a LIMIT), so the aggregate sees its rows in id order.
    this.#pageJson = db.prepare(`SELECT
        json_group_array(json_object('id', id, 'title', title, 'author', author, 'year', year)) AS json,
        count(*) AS count, max(id) AS lastId
      FROM (SELECT id, title, author, year FROM books WHERE id > ? ORDER BY id LIMIT ?)`)
    this.#update = db.prepare(`UPDATE books
      SET title = coalesce(?1, title), author = coalesce(?2, author), year = coalesce(?3, year),
          revision = revision + 1
      WHERE id = ?4 AND (?5 IS NULL OR revision IN (SELECT value FROM json_each(?5)))
      RETURNING ${COLUMNS}`)
    this.#delete = db.prepare('DELETE FROM books WHERE id = ?')
    this.#insertLoginFailure = db.prepare('INSERT INTO login_failures (client_key, failed_at) VALUES (?, ?)')
    this.#deleteExpiredLoginFailures = db.prepare('DELETE FROM login_failures WHERE failed_at <= ?')
    this.#recentLoginFailures = db.prepare(`SELECT failed_at FROM login_failures
      WHERE client_key = ? AND failed_at > ? ORDER BY failed_at DESC LIMIT ?`)
    this.#ping = db.prepare('SELECT 1')
    this.#turn = new TurnTransaction(db, classify)
  }

  create(book: NewBook): Promise<StoredBook> {
    return this.#turn.write(() => this.#insert.get(book.title, book.author, book.year) as unknown as StoredBook)
  }

  get(id: number): Promise<StoredBook | undefined> {
    return this.#turn.read(() => this.#select.get(id) as StoredBook | undefined)
  }

  list(after: number, limit: number): Promise<Book[]> {
    return settle(() => this.#page.all(after, limit) as unknown as Book[])
  }

  listJson(after: number, limit: number): Promise<BookPageJson> {
    return settle(() => {
      const row = this.#pageJson.get(after, limit) as { json: string; count: number; lastId: number | null }
      return { json: row.json, count: row.count, lastId: row.lastId ?? undefined }
    })
  }

  update(id: number, changes: BookChanges, expectedRevisions?: readonly number[]): Promise<UpdateResult> {
    return this.#turn.write((): UpdateResult => {
      const book = this.#update.get(
        changes.title ?? null,
        changes.author ?? null,
        changes.year ?? null,
        id,
        expectedRevisions === undefined ? null : JSON.stringify(expectedRevisions),
      ) as StoredBook | undefined
      if (book) return { outcome: 'updated', book }
      return { outcome: this.#exists.get(id) ? 'stale' : 'missing' }
    })
  }

  delete(id: number): Promise<boolean> {
    return this.#turn.write(() => this.#delete.run(id).changes > 0)
  }

  recordLoginFailure(key: string, at: number, expiredUpTo: number): Promise<void> {
    return this.#turn.write(() => {
      this.#insertLoginFailure.run(key, at)
      this.#deleteExpiredLoginFailures.run(expiredUpTo)
    })
  }

  recentLoginFailures(key: string, since: number, limit: number): Promise<number[]> {
    return this.#turn.read(() => this.#recentLoginFailures.all(key, since, limit).map((row) => row.failed_at as number))
  }

  /** The synchronous level in force: 1 is NORMAL, 2 is FULL. */
  synchronousLevel(): number {
    return this.#db.prepare('PRAGMA synchronous').get()!.synchronous as number
  }

  ping(): Promise<void> {
    return settle(() => {
      this.#ping.get()
    })
  }

  async close(): Promise<void> {
    if (!this.#db.isOpen) return
    this.#turn.flush()
    this.#db.close()
  }
}
