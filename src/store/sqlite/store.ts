import { availableParallelism } from 'node:os'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { DatabaseSync, type StatementSync } from 'node:sqlite'
import { fold, indexWords, searchKeys } from '../../books/folding.ts'
import { keyClaimOf, type KeyRow } from '../sql/idempotency-rows.ts'
import { loadMigrations } from '../migrations.ts'
import { createPrivateDatabaseFile } from './private-files.ts'
import { classifySqliteError } from './errors.ts'
import { NEWEST_CHANGE, NEWEST_SEQ } from './find.ts'
import { ReaderCore } from './reader-core.ts'
import { inProcessReader, workerReaders, type Reader } from './readers.ts'
import { SqliteSearchIndex } from './search-index.ts'
import { UpkeepThread } from './upkeep.ts'
import { setUpWritingConnection } from './writing-connection.ts'
import { SqliteBlockSummary } from './block-summaries.ts'
import { BlockSummaries } from '../block-summaries.ts'
import {
  RANKING_DEADLINE_MS,
  SEARCH_DEADLINE_MS,
  type AccountRepository,
  type BookReader,
  type BookRepository,
  type ChangeRepository,
  type DeleteResult,
  type IdempotencyKeyRepository,
  type KeyClaim,
  type LoginFailureRepository,
  type Repositories,
  type Store,
  type TrashRepository,
  type UpdateResult,
} from '../store.ts'
import type { ChangeKind } from '../../books/change.ts'
import { CHANGE_COLUMNS, changeOf, TRASH_COLUMNS, trashedBookOf, type ChangeRow, type TrashRow } from '../sql/change-rows.ts'
import type { StoredBook } from '../../books/book.ts'
import { usernameKey } from '../../accounts/account.ts'
import { KEY_COLUMNS, keyOf, USER_COLUMNS, userOf, type ApiKeyRow, type UserRow } from '../sql/account-rows.ts'
import { BLOCK_BITS, unseenDeletion } from '../sql/block-grams.ts'
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
  /** Threads that read books for finds, lists and exports; one per core by default. */
  readers?: number
  /** How long one step of a read may take, its wait for a turn included; 2 s by default (docs/api.md). */
  readDeadlineMs?: number
  /** How long the step of a whole read by relevance that ranks every match after its first page may take; 10 s by default. */
  rankingDeadlineMs?: number
}

/** Runs a synchronous statement as the store's promise, with its failure classified. */
function settle<T>(statement: () => T): Promise<T> {
  try {
    return Promise.resolve(statement())
  } catch (err) {
    return Promise.reject(classifySqliteError(err))
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
const KEYS = 'title_folded, author_folded, title_words, author_words'

/**
 * The seq of the change recorded `n`th from now, from 1: AUTOINCREMENT gives each new change one
 * more than the greatest ever given, and one writer writes at a time. A book's row names its
 * newest change (migration 026) in the statement that writes the row, before the change is recorded.
 */
const comingChange = (n: string) => `${NEWEST_SEQ} + ${n}`

/** Changes of one book a history read passes over in one turn, about 2 ms of them. */
const PASSED_OVER_A_TURN = 4096

/** The changes of one book, from the seq ?1, each followed by the one before it (migration 026). */
const CHAIN = `WITH RECURSIVE chain (seq) AS (
    SELECT ?1 UNION ALL SELECT prev FROM book_changes JOIN chain USING (seq) WHERE prev IS NOT NULL
  )`

/**
 * How a repository runs its statements: each batched into its turn's transaction, reads on the
 * reader connection and writes on the writer's; or all inside one of the caller's transactions, on
 * the writer's connection, so that its reads see its own writes.
 */
interface Executor {
  /** A statement that only reads. */
  read<T>(statement: (sql: Statements) => T): Promise<T>
  /** A statement that writes. */
  write<T>(statement: (sql: Statements) => T): Promise<T>
}

/**
 * Rows as arrays: node:sqlite builds an object row through the V8 API, property by property, and
 * an array and an object literal made from it cost a read by id 240 bytes less.
 */
function arrays(statement: StatementSync): StatementSync {
  statement.setReturnArrays(true)
  return statement
}

function prepareStatements(db: DatabaseSync) {
  return {
    // No RETURNING: SQLite gathers returned rows in a table of their own first, a large share of
    // the insert's cost (docs/performance.md), and the new book is known without it.
    // ?8: which of the changes recorded next is this book's (see comingChange).
    insert: db.prepare(`INSERT INTO books (title, author, year, title_folded, author_folded, title_words, author_words, last_change)
      VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ${comingChange('?8')})`),
    select: arrays(db.prepare(`SELECT ${COLUMNS} FROM books WHERE id = ?`)),
    exists: db.prepare('SELECT 1 FROM books WHERE id = ?'),
    // An update's change goes first, with the values the book is about to take, naming the book's
    // newest change as the one before it; then the update names this one (?9, its seq) as the newest.
    recordUpdate: db.prepare(`INSERT INTO book_changes (book_id, kind, actor, at, title, author, year, revision, prev)
      SELECT id, 'updated', ?6, ?7, coalesce(?1, title), coalesce(?2, author), coalesce(?3, year), revision + 1, last_change
      FROM books WHERE id = ?4 AND (?5 IS NULL OR revision IN (SELECT value FROM json_each(?5)))`),
    update: db.prepare(`UPDATE books
      SET title = coalesce(?1, title), author = coalesce(?2, author), year = coalesce(?3, year),
          title_folded = coalesce(?5, title_folded), author_folded = coalesce(?6, author_folded),
          title_words = coalesce(?7, title_words), author_words = coalesce(?8, author_words),
          revision = revision + 1, last_change = ?9
      WHERE id = ?4
      RETURNING ${COLUMNS}`),
    // A deletion's change goes first, naming the book's newest change as the one before it; then
    // the whole row goes to the trash, so that a restored book comes back with its search keys.
    recordDeletion: db.prepare(`INSERT INTO book_changes (book_id, kind, actor, at, title, author, year, revision, prev)
      SELECT id, 'deleted', ?3, ?4, title, author, year, revision, last_change
      FROM books WHERE id = ?1 AND (?2 IS NULL OR revision IN (SELECT value FROM json_each(?2)))`),
    trash: db.prepare(`INSERT INTO trashed_books (${COLUMNS}, ${KEYS}, deleted_at, deleted_by, deleted_seq)
      SELECT ${COLUMNS}, ${KEYS}, ?2, ?3, ?4 FROM books WHERE id = ?1`),
    // An indexed book leaves the search indexes with a later step (migration 025).
    delete: db.prepare('DELETE FROM books WHERE id = ? RETURNING indexed'),
    untrash: db.prepare(`DELETE FROM trashed_books WHERE id = ? RETURNING ${COLUMNS}, ${KEYS}, deleted_seq`),
    // Back into the tail (`indexed` NULL): the search indexes take it in with the books stored after it.
    reinsert: db.prepare(`INSERT INTO books (${COLUMNS}, ${KEYS}, last_change) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ${comingChange('1')})`),
    purge: db.prepare('DELETE FROM trashed_books WHERE id = ? RETURNING deleted_seq'),
    // The summaries find deletions in the trash (migration 028): a book purged before they saw it
    // deleted puts its block back on their list itself.
    unseenPurge: db.prepare(`INSERT OR IGNORE INTO blocks_to_summarise
      SELECT ?1 >> ${BLOCK_BITS} WHERE ${unseenDeletion('?2')}`),
    // The book's whole chain of changes, from its newest.
    forget: db.prepare(`DELETE FROM book_changes WHERE seq IN (${CHAIN} SELECT seq FROM chain)`),
    // No RETURNING, as for books: the seq is the new row's id.
    record: db.prepare(`INSERT INTO book_changes (book_id, kind, actor, at, title, author, year, revision, prev)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    // The books of one insert have the ids between its first and last, and no others: AUTOINCREMENT
    // gives each the one after the greatest ever given, and only one writer inserts at a time.
    recordCreated: db.prepare(`INSERT INTO book_changes (book_id, kind, actor, at, title, author, year, revision)
      SELECT id, 'created', ?3, ?4, title, author, year, revision FROM books WHERE id BETWEEN ?1 AND ?2 ORDER BY id`),
    // Newest first: a chain is walked one change at a time, and stops at the page's last.
    changesOfBook: db.prepare(`${CHAIN} SELECT ${CHANGE_COLUMNS} FROM chain CROSS JOIN book_changes USING (seq) WHERE seq < ?2 LIMIT ?3`),
    // No row for a book never stored or purged; a null seq for one stored before the history, unchanged since.
    newestOfBook: db.prepare(
      'SELECT last_change AS seq FROM books WHERE id = ?1 UNION ALL SELECT deleted_seq FROM trashed_books WHERE id = ?1',
    ),
    changeLink: db.prepare('SELECT book_id, prev FROM book_changes WHERE seq = ?'),
    // From the seq ?1, at most ?3 steps down the chain, stopping at the first seq below ?2: where
    // the walk got to, and in how many steps (none when ?1 is no longer in the log).
    passOver: db.prepare(`WITH RECURSIVE chain (seq, steps) AS (
        SELECT ?1, 0
        UNION ALL SELECT prev, steps + 1 FROM book_changes JOIN chain USING (seq) WHERE chain.seq >= ?2 AND steps < ?3
      )
      SELECT seq, steps FROM chain ORDER BY steps DESC LIMIT 1`),
    change: db.prepare(`SELECT ${CHANGE_COLUMNS} FROM book_changes WHERE seq = ?`),
    changesAfter: db.prepare(`SELECT ${CHANGE_COLUMNS} FROM book_changes WHERE seq > ? ORDER BY seq LIMIT ?`),
    newestChange: db.prepare(NEWEST_CHANGE),
    trashPage: db.prepare(`SELECT ${TRASH_COLUMNS} FROM trashed_books WHERE deleted_seq < ? ORDER BY deleted_seq DESC LIMIT ?`),
    // Deletions' times follow their seqs but for the clocks of several instances: a book waits at
    // most that difference behind one deleted before it.
    expired: db.prepare(`SELECT id FROM (SELECT id, deleted_at, deleted_seq FROM trashed_books ORDER BY deleted_seq LIMIT ?2)
      WHERE deleted_at <= ?1 ORDER BY deleted_seq`),
    bumpAccounts: db.prepare('UPDATE accounts_version SET version = version + 1 RETURNING version'),
    accountsVersion: db.prepare('SELECT version FROM accounts_version'),
    allUsers: db.prepare(`SELECT ${USER_COLUMNS} FROM users ORDER BY username_key`),
    allKeys: db.prepare(`SELECT ${KEY_COLUMNS} FROM api_keys ORDER BY id`),
    insertUser: db.prepare(`INSERT INTO users (username_key, ${USER_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`),
    updateUser: db.prepare(`UPDATE users SET role = coalesce(?2, role), password_hash = coalesce(?3, password_hash), stamp = ?4
      WHERE username_key = ?1 RETURNING ${USER_COLUMNS}`),
    deleteUser: db.prepare('DELETE FROM users WHERE username_key = ?'),
    deleteKeysOf: db.prepare('DELETE FROM api_keys WHERE owner_key = ?'),
    insertKey: db.prepare(`INSERT INTO api_keys (name, role, owner, owner_key, hash, created, expires) VALUES (?, ?, ?, ?, ?, ?, ?)
      RETURNING ${KEY_COLUMNS}`),
    deleteKey: db.prepare('DELETE FROM api_keys WHERE id = ?'),
    touchKey: db.prepare('UPDATE api_keys SET last_used = max(coalesce(last_used, 0), ?2) WHERE id = ?1'),
    insertLoginFailure: db.prepare('INSERT INTO login_failures (client_key, failed_at) VALUES (?, ?)'),
    deleteExpiredLoginFailures: db.prepare('DELETE FROM login_failures WHERE failed_at <= ?'),
    recentLoginFailures: db.prepare(`SELECT failed_at FROM login_failures
      WHERE client_key = ? AND failed_at > ? ORDER BY failed_at DESC LIMIT ?`),
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
    // The books below an id stored with any of the folded titles, authors and years of a JSON
    // array of [title, author, year]: the indexed ones through the title index, one look-up per
    // entry; the tail, which no index holds, read once against all the entries, only up to that
    // id, so that an import's own books, all in the tail, are not read at each look-up.
    sameAs: db.prepare(`WITH wanted (title_folded, author_folded, year) AS MATERIALIZED (
        SELECT value ->> 0, value ->> 1, value ->> 2 FROM json_each(:wanted)
      )
      SELECT b.id, b.title_folded, b.author_folded, b.year FROM wanted AS w CROSS JOIN books AS b INDEXED BY books_by_title
      WHERE b.indexed = 1 AND b.title_folded = w.title_folded AND b.author_folded = w.author_folded AND b.year = w.year
        AND b.id < :below
      UNION ALL
      SELECT id, title_folded, author_folded, year FROM books INDEXED BY books_tail
      WHERE indexed IS NULL AND id < :below
        AND (title_folded, author_folded, year) IN (SELECT title_folded, author_folded, year FROM wanted)`),
    ping: db.prepare('SELECT 1'),
    begin: db.prepare('BEGIN IMMEDIATE'),
    commit: db.prepare('COMMIT'),
  }
}

type Statements = ReturnType<typeof prepareStatements>

/** A row of `books` whole, as the trash keeps it. */
interface BookRow extends StoredBook {
  title_folded: string
  author_folded: string
  title_words: string
  author_words: string
}

/** A stored book that an import's row may repeat, by the keys it is compared by. */
interface SameBookRow {
  id: number
  title_folded: string
  author_folded: string
  year: number
}

/** The folded title, folded author and year as one string; NUL is in no stored text. */
const sameKey = (title: string, author: string, year: number) => `${title}\u0000${author}\u0000${year}`
/**
 * Rows of a duplicate look-up read at once: 25 rows whose titles have 290 namesakes each, as a
 * generated catalogue of a million books has, take about 11 ms (docs/performance-log.md).
 */
const SAME_AS_ROWS = 25

/**
 * Records a change of `book` (none for a purge) after the book's change `prev` (null for its
 * first), and answers its seq.
 */
function record(
  sql: Statements,
  kind: ChangeKind,
  actor: string,
  at: number,
  bookId: number,
  prev: number | null,
  book?: StoredBook,
): number {
  const { lastInsertRowid } = sql.record.run(
    bookId,
    kind,
    actor,
    at,
    book?.title ?? null,
    book?.author ?? null,
    book?.year ?? null,
    book?.revision ?? null,
    prev,
  )
  return Number(lastInsertRowid)
}

function storedBookOf({ id, title, author, year, revision }: StoredBook): StoredBook {
  return { id, title, author, year, revision }
}

/** A row of COLUMNS, as an array. */
type ColumnsRow = [id: number, title: string, author: string, year: number, revision: number]

function storedBookOfColumns(row: ColumnsRow | undefined): StoredBook | undefined {
  return row && { id: row[0], title: row[1], author: row[2], year: row[3], revision: row[4] }
}

function bookRepository(run: Executor, searchIndex: SqliteSearchIndex): BookRepository {
  return {
    create: (actor, book) => {
      const keys = searchKeys(book)
      return run.write((sql) => {
        const { lastInsertRowid } = sql.insert.run(
          book.title,
          book.author,
          book.year,
          keys.titleFolded,
          keys.authorFolded,
          keys.titleWords,
          keys.authorWords,
          1,
        )
        const created = { id: Number(lastInsertRowid), title: book.title, author: book.author, year: book.year, revision: 1 }
        record(sql, 'created', actor, Date.now(), created.id, null, created)
        searchIndex.stored(1)
        searchIndex.stepIfDue()
        return created
      })
    },
    createMany: (actor, books) => {
      const keys = books.map(searchKeys)
      return run.write((sql) => {
        // A statement run per book: cheaper than one statement over the batch as JSON, which
        // SQLite parses again for each member it takes from a book.
        const ids = books.map((book, i) => {
          const { titleFolded, authorFolded, titleWords, authorWords } = keys[i]!
          return Number(
            sql.insert.run(book.title, book.author, book.year, titleFolded, authorFolded, titleWords, authorWords, i + 1).lastInsertRowid,
          )
        })
        if (ids.length > 0) sql.recordCreated.run(ids[0]!, ids.at(-1)!, actor, Date.now())
        // Many at once: the tail is indexed after the transaction, a step at a time (see catchUp).
        searchIndex.stored(ids.length)
        return ids
      })
    },
    // Each call runs at once on the thread that answers every request: more books would hold them longer.
    importRows: 100,
    get: (id) => run.read((sql) => storedBookOfColumns(sql.select.get(id) as unknown as ColumnsRow | undefined)),
    sameAs: async (books, below = Number.MAX_SAFE_INTEGER) => {
      const wanted = books.map((book) => [fold(book.title), fold(book.author), book.year] as const)
      const found = new Map<string, number>()
      // A few rows at a time, with other requests let through between: each row reads every
      // stored book of its title, and a common title may have a thousand namesakes.
      for (let start = 0; start < wanted.length; start += SAME_AS_ROWS) {
        if (start > 0) await nextTurn()
        const part = JSON.stringify(wanted.slice(start, start + SAME_AS_ROWS))
        await run.read((sql) => {
          for (const row of sql.sameAs.all({ wanted: part, below }) as unknown as SameBookRow[]) {
            const key = sameKey(row.title_folded, row.author_folded, row.year)
            found.set(key, Math.min(row.id, found.get(key) ?? row.id))
          }
        })
      }
      return wanted.map(([title, author, year]) => found.get(sameKey(title, author, year)))
    },
    update: (actor, id, changes, expectedRevisions) => {
      const title = changes.title === undefined ? undefined : searchKeys({ title: changes.title, author: '' })
      const author = changes.author === undefined ? undefined : searchKeys({ title: '', author: changes.author })
      return run.write((sql): UpdateResult => {
        const { title: newTitle = null, author: newAuthor = null, year = null } = changes
        const recorded = sql.recordUpdate.run(newTitle, newAuthor, year, id, revisionsOf(expectedRevisions), actor, Date.now())
        if (recorded.changes === 0) return { outcome: sql.exists.get(id) ? 'stale' : 'missing' }
        const book = sql.update.get(
          newTitle,
          newAuthor,
          year,
          id,
          title?.titleFolded ?? null,
          author?.authorFolded ?? null,
          title?.titleWords ?? null,
          author?.authorWords ?? null,
          recorded.lastInsertRowid,
        ) as unknown as StoredBook
        return { outcome: 'updated', book }
      })
    },
    delete: (actor, id, expectedRevisions) =>
      run.write((sql): DeleteResult => {
        const at = Date.now()
        const recorded = sql.recordDeletion.run(id, revisionsOf(expectedRevisions), actor, at)
        if (recorded.changes === 0) return sql.exists.get(id) ? 'stale' : 'missing'
        sql.trash.run(id, at, actor, recorded.lastInsertRowid)
        const { indexed } = sql.delete.get(id) as { indexed: number | null }
        if (indexed === 1) {
          searchIndex.deleted()
          searchIndex.stepIfDue()
        }
        return 'deleted'
      }),
    restore: (actor, id) =>
      run.write((sql) => {
        const row = sql.untrash.get(id) as (BookRow & { deleted_seq: number }) | undefined
        if (!row) return undefined
        const book = { ...storedBookOf(row), revision: row.revision + 1 }
        sql.reinsert.run(
          id,
          book.title,
          book.author,
          book.year,
          book.revision,
          row.title_folded,
          row.author_folded,
          row.title_words,
          row.author_words,
        )
        record(sql, 'restored', actor, Date.now(), id, row.deleted_seq, book)
        searchIndex.stored(1)
        searchIndex.stepIfDue()
        return book
      }),
    purge: (actor, id) =>
      run.write((sql) => {
        const trashed = sql.purge.get(id) as { deleted_seq: number } | undefined
        if (!trashed) return false
        sql.forget.run(trashed.deleted_seq)
        sql.unseenPurge.run(id, trashed.deleted_seq)
        record(sql, 'purged', actor, Date.now(), id, null)
        return true
      }),
  }
}

/** The revisions an update or a delete accepts, as the statements take them: null for any. */
function revisionsOf(expected: readonly number[] | undefined): string | null {
  return expected === undefined ? null : JSON.stringify(expected)
}

function changeRepository(run: Executor): ChangeRepository {
  return {
    ofBook: async (bookId, before, limit) => {
      let from = await run.read((sql) => {
        const newest = sql.newestOfBook.get(bookId) as { seq: number | null } | undefined
        if (newest === undefined) return undefined
        // After a change of this book, its chain goes on from there.
        const link = before === undefined ? undefined : (sql.changeLink.get(before) as { book_id: number; prev: number | null } | undefined)
        return link?.book_id === bookId ? link.prev : newest.seq
      })
      if (from === undefined) return undefined
      // After any other seq, the walk from the newest passes over the changes at and after it, a
      // bounded run of them a turn: a history of a million changes would otherwise hold every
      // other request for half a second.
      while (from !== null && before !== undefined && from >= before) {
        await nextTurn()
        const at: number = from
        const reached = await run.read((sql) => sql.passOver.get(at, before, PASSED_OVER_A_TURN) as { seq: number | null; steps: number })
        // Its changes left the log meanwhile: the book was purged.
        if (reached.steps === 0) return undefined
        from = reached.seq
      }
      if (from === null) return []
      const start: number = from
      return run.read((sql) =>
        (sql.changesOfBook.all(start, before ?? Number.MAX_SAFE_INTEGER, limit) as unknown as ChangeRow[]).map(changeOf),
      )
    },
    get: (seq) =>
      run.read((sql) => {
        const row = sql.change.get(seq) as ChangeRow | undefined
        return row && changeOf(row)
      }),
    // One writer at a time numbers the changes as it commits them, so a reader sees them in order.
    after: (after, limit) => run.read((sql) => (sql.changesAfter.all(after, limit) as unknown as ChangeRow[]).map(changeOf)),
    latest: () => run.read((sql) => (sql.newestChange.get() as { seq: number }).seq),
  }
}

function trashRepository(run: Executor): TrashRepository {
  return {
    list: (before, limit) =>
      run.read((sql) => (sql.trashPage.all(before ?? Number.MAX_SAFE_INTEGER, limit) as unknown as TrashRow[]).map(trashedBookOf)),
    expired: (upTo, limit) => run.read((sql) => sql.expired.all(upTo, limit).map((row) => row.id as number)),
  }
}

function accountRepository(run: Executor): AccountRepository {
  /** Moves the version, in the write that changes the accounts; answers the new one. */
  const bump = (sql: Statements) => (sql.bumpAccounts.get() as { version: number }).version
  return {
    current: () => run.read((sql) => (sql.accountsVersion.get() as { version: number }).version),
    snapshot: () =>
      run.read((sql) => {
        // The version first: the rows read after it are at least as new.
        const { version } = sql.accountsVersion.get() as { version: number }
        const users = (sql.allUsers.all() as unknown as UserRow[]).map(userOf)
        const keys = (sql.allKeys.all() as unknown as ApiKeyRow[]).map(keyOf)
        return { version, users, keys }
      }),
    createUser: (user) =>
      run.write((sql) => {
        const stamp = bump(sql)
        const key = usernameKey(user.username)
        if (sql.insertUser.run(key, user.username, user.role, user.passwordHash, user.created, stamp).changes === 0) return undefined
        sql.deleteKeysOf.run(key)
        return { ...user, stamp }
      }),
    updateUser: (username, { role, passwordHash }) =>
      run.write((sql) => {
        const row = sql.updateUser.get(usernameKey(username), role ?? null, passwordHash ?? null, bump(sql)) as UserRow | undefined
        return row && userOf(row)
      }),
    deleteUser: (username) =>
      run.write((sql) => {
        bump(sql)
        const key = usernameKey(username)
        sql.deleteKeysOf.run(key)
        return sql.deleteUser.run(key).changes === 1
      }),
    createKey: (key) =>
      run.write((sql) => {
        bump(sql)
        return keyOf(
          sql.insertKey.get(
            key.name,
            key.role,
            key.owner,
            usernameKey(key.owner),
            key.hash,
            key.created,
            key.expires,
          ) as unknown as ApiKeyRow,
        )
      }),
    deleteKey: (id) =>
      run.write((sql) => {
        bump(sql)
        return sql.deleteKey.run(id).changes === 1
      }),
    touchKeys: (uses) =>
      run.write((sql) => {
        for (const [id, at] of uses) sql.touchKey.run(id, at)
      }),
  }
}

function loginFailureRepository(run: Executor): LoginFailureRepository {
  return {
    record: (key, at, expiredUpTo) =>
      run.write((sql) => {
        sql.insertLoginFailure.run(key, at)
        sql.deleteExpiredLoginFailures.run(expiredUpTo)
      }),
    recent: (key, since, limit) => run.read((sql) => sql.recentLoginFailures.all(key, since, limit).map((row) => row.failed_at as number)),
  }
}

function idempotencyKeyRepository(run: Executor): IdempotencyKeyRepository {
  return {
    claim: (scope, key, at, lockedUntil, expiredUpTo) =>
      run.write((sql): KeyClaim => {
        sql.purgeKeys.run(expiredUpTo)
        if (sql.claimKey.get(scope, key, at, lockedUntil, expiredUpTo)) return { state: 'claimed' }
        const row = sql.selectKey.get(scope, key) as KeyRow | undefined
        return keyClaimOf(row)
      }),
    complete: (scope, key, fingerprint, answer) =>
      run.write((sql) => {
        const { changes } = sql.completeKey.run(fingerprint, answer.status, JSON.stringify(answer.headers), answer.body, scope, key)
        if (changes !== 1) throw new Error('The idempotency key is no longer held by this request')
      }),
    release: (scope, key) =>
      run.write((sql) => {
        sql.releaseKey.run(scope, key)
      }),
  }
}

function repositories(run: Executor, searchIndex: SqliteSearchIndex): Repositories {
  return {
    books: bookRepository(run, searchIndex),
    changes: changeRepository(run),
    trash: trashRepository(run),
    accounts: accountRepository(run),
    loginFailures: loginFailureRepository(run),
    idempotencyKeys: idempotencyKeyRepository(run),
  }
}

/**
 * Runs each statement at once, on the connection a transaction holds, until the transaction
 * has settled; after that the statements would run outside it, so they fail instead.
 */
function transactionExecutor(sql: Statements): Executor & { end(): void } {
  let open = true
  const now = <T>(statement: (sql: Statements) => T): Promise<T> => {
    if (!open) return Promise.reject(new Error('The transaction has ended'))
    return settle(() => statement(sql))
  }
  return {
    read: now,
    write: now,
    end: () => {
      open = false
    },
  }
}

/** How many threads read books, at most: more would only wait for the cores. */
const MOST_READERS = 4

/**
 * The store in one SQLite file, on one connection: operations asked for in one turn commit
 * together (see CommitPerTurn), and a transaction holds the connection until it settles.
 */
export class SqliteStore implements Store {
  readonly books: BookRepository
  readonly changes: ChangeRepository
  readonly trash: TrashRepository
  readonly accounts: AccountRepository
  readonly loginFailures: LoginFailureRepository
  readonly idempotencyKeys: IdempotencyKeyRepository
  readonly reader: BookReader
  readonly storesWhileReading = false
  readonly #db: DatabaseSync
  /** Where lookups by id and probes read, on a connection of their own: a transaction holding the writer's never holds them. */
  readonly #lookups: DatabaseSync
  readonly #sql: Statements
  readonly #searchIndex: SqliteSearchIndex
  /** Where the catch-up after an import and the block summaries run; none for an in-memory database, which exists on one connection. */
  readonly #upkeep: UpkeepThread | undefined
  #closing = false
  /** The pages of log past which a commit copies it into the database file: SQLite's default. */
  readonly #logPages: number
  readonly #writes: CommitPerTurn
  readonly #reads: CommitPerTurn
  readonly #readers: Reader
  readonly #summaries: BlockSummaries

  constructor({
    path,
    busyTimeoutMs = 4000,
    synchronous = 'normal',
    searchIndexBatch,
    readers = defaultReaders(),
    readDeadlineMs = SEARCH_DEADLINE_MS,
    rankingDeadlineMs = RANKING_DEADLINE_MS,
  }: SqliteOptions) {
    const inMemory = path === ':memory:'
    if (!inMemory) createPrivateDatabaseFile(path)
    const db = new DatabaseSync(path)
    this.#db = db
    const level = synchronous === 'full' ? 'FULL' : 'NORMAL'
    let searchIndex: SqliteSearchIndex
    try {
      db.exec(`PRAGMA busy_timeout = ${Math.trunc(busyTimeoutMs)}`)
      db.exec('PRAGMA journal_mode = WAL')
      setUpWritingConnection(db, level)
      registerFolding(db)
      migrate(db)
      searchIndex = new SqliteSearchIndex(db, searchIndexBatch)
      searchIndex.indexAll()
      this.#logPages = db.prepare('PRAGMA wal_autocheckpoint').get()!.wal_autocheckpoint as number
    } catch (err) {
      db.close()
      throw classifySqliteError(err)
    }
    this.#searchIndex = searchIndex
    this.#sql = prepareStatements(db)
    this.#writes = new CommitPerTurn(db, classifySqliteError)
    // An in-memory database exists on its one connection only: everything reads there.
    this.#lookups = inMemory ? db : new DatabaseSync(path, { readOnly: true, timeout: busyTimeoutMs })
    const lookupSql = inMemory ? this.#sql : prepareStatements(this.#lookups)
    this.#reads = inMemory ? this.#writes : new CommitPerTurn(this.#lookups, classifySqliteError)
    this.#upkeep = inMemory ? undefined : new UpkeepThread({ path, busyTimeoutMs, synchronous: level })
    // The catch-up waits for the write turn, so it steps after the turn of the write that asks commits.
    if (this.#upkeep) searchIndex.elsewhere = () => this.#catchUp()
    this.#readers = inMemory
      ? inProcessReader(new ReaderCore({ pages: db, open: () => db, release: () => {}, snapshots: false }), readDeadlineMs, (step) =>
          this.#writes.direct(step),
        )
      : workerReaders(
          { path, busyTimeoutMs },
          readers,
          { deadlineMs: readDeadlineMs, rankingDeadlineMs },
          {
            core: new ReaderCore({ pages: this.#lookups, open: () => this.#lookups, release: () => {}, snapshots: false }),
            // A whole read's first step reads the newest change, then the books, from one snapshot.
            outside: (step) => this.#reads.read(step, { together: true }),
          },
        )
    this.reader = this.#readers
    const batched: Executor = {
      read: (statement) => this.#reads.read(() => statement(lookupSql)),
      write: (statement) => this.#writes.write(() => statement(this.#sql)),
    }
    const { books, changes, trash, accounts, loginFailures, idempotencyKeys } = repositories(batched, searchIndex)
    this.books = books
    this.changes = changes
    this.trash = trash
    this.accounts = accounts
    this.loginFailures = loginFailures
    this.idempotencyKeys = idempotencyKeys
    const summary = new SqliteBlockSummary(db)
    const upkeep = this.#upkeep
    this.#summaries = new BlockSummaries({
      step: async () =>
        (await this.#writes.direct(() => summary.waiting())) &&
        (upkeep ? this.#writes.hold(() => upkeep.summarise()) : this.#writes.write(() => summary.step())),
      noteDeletions: async () => {
        if (!(await this.#writes.direct(() => summary.deletionsUnseen()))) return
        await (upkeep ? this.#writes.hold(() => upkeep.noteDeletions()) : this.#writes.write(() => summary.noteDeletions()))
      },
    })
  }

  transaction<T>(work: (repositories: Repositories) => Promise<T>): Promise<T> {
    return this.#writes.hold(async () => {
      const db = this.#db
      try {
        // IMMEDIATE takes the write lock first, so a busy database fails here, before any work.
        this.#sql.begin.run()
      } catch (err) {
        throw classifySqliteError(err)
      }
      const run = transactionExecutor(this.#sql)
      try {
        const result = await work(repositories(run, this.#searchIndex))
        run.end()
        this.#commit()
        this.#catchUp()
        return result
      } catch (err) {
        run.end()
        try {
          if (db.isTransaction) db.exec('ROLLBACK')
          this.#searchIndex.recount()
        } catch {
          // Nothing was committed, and the next BEGIN finds out whether the store recovered.
        }
        throw classifySqliteError(err)
      }
    })
  }

  /**
   * Commits the transaction open. One that leaves a catch-up to the upkeep thread leaves it the
   * copies of the log into the database file too, until the catch-up ends: after an import of
   * 100,000 books into a million, the first copy held this thread for a fifth of a second.
   */
  #commit(): void {
    const handOver = this.#upkeep !== undefined && this.#searchIndex.due
    if (handOver) this.#copyLog(false)
    try {
      this.#sql.commit.run()
    } catch (err) {
      if (handOver && !this.#searchIndex.catchingUp) this.#copyLog(true)
      throw err
    }
  }

  /** Whether this thread's commits copy the log into the database file once it passes SQLite's mark. */
  #copyLog(here: boolean): void {
    if (this.#db.isOpen) this.#db.exec(`PRAGMA wal_autocheckpoint = ${here ? this.#logPages : 0}`)
  }

  /**
   * Indexes the tail that a transaction (an import's books) or single writes left long, and takes
   * the books they deleted out of the indexes, a step at a time, each step a write turn of its
   * own, so that requests are answered between the steps: on the upkeep thread, with the write
   * turn lent to it, or here, between this thread's writes.
   */
  #catchUp(): void {
    const index = this.#searchIndex
    if (this.#closing || index.catchingUp || !index.due) return
    index.catchingUp = true
    const upkeep = this.#upkeep
    const step = upkeep ? this.#writes.hold(() => upkeep.index()).then((done) => index.took(done)) : this.#writes.write(() => index.step())
    void step
      .catch(() => 0)
      .then((stepped) => {
        index.catchingUp = false
        if (stepped > 0 && index.due) {
          setImmediate(() => this.#catchUp())
        } else if (upkeep) {
          this.#copyLog(true)
        }
      })
  }

  /** The synchronous level in force: 1 is NORMAL, 2 is FULL. */
  synchronousLevel(): number {
    return this.#db.prepare('PRAGMA synchronous').get()!.synchronous as number
  }

  ping(): Promise<void> {
    return this.#reads.direct(() => {
      this.#lookups.prepare('SELECT 1').get()
    })
  }

  async close(): Promise<void> {
    this.#closing = true
    await this.#summaries.stop()
    await this.#readers.end()
    await this.#writes.released()
    await this.#upkeep?.end()
    if (!this.#db.isOpen) return
    this.#writes.flush()
    if (this.#reads !== this.#writes) this.#reads.flush()
    if (this.#lookups !== this.#db) this.#lookups.close()
    this.#db.close()
  }
}

/** One reader thread per core, within bounds. */
function defaultReaders(): number {
  return Math.min(MOST_READERS, Math.max(1, availableParallelism()))
}
