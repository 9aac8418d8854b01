import type { QueryResultRow } from 'pg'
import { searchKeys } from '../../books/folding.ts'
import type { DeleteResult, UpdateResult } from '../store.ts'
import type { ChangeKind } from '../../books/change.ts'
import type { BookChanges, NewBook, StoredBook } from '../../books/book.ts'
import { BLOCK_BITS, unseenDeletion } from '../sql/block-grams.ts'
import { arrayLiteral } from './array-literals.ts'
import type { BatchedWrite } from './group-commit.ts'
import { lexemesOf, wordsOf } from './lexemes.ts'

/** A statement each connection prepares once, by name, and then only binds and executes. */
interface Statement {
  name: string
  text: string
}

/** Runs a statement; with `sendBy`, not at all unless it can be sent by then (see BatchedWrite). */
export type Query = <R extends QueryResultRow>(statement: Statement, values: unknown[], sendBy?: number) => Promise<{ rows: R[] }>

export interface Update {
  id: number
  changes: BookChanges
  expectedRevisions: readonly number[] | undefined
}

export interface Removal {
  id: number
  expectedRevisions: readonly number[] | undefined
}

const COLUMNS = 'id, title, author, year, revision'
const KEYS = 'title_folded, author_folded, title_words, author_words'

/**
 * Inserts the arrays of `bookColumns`, one statement for any number of books. Ordinality keeps the
 * rows in the order given, so their identities rise in that order.
 */
export const INSERT_BOOK_COLUMNS = `INSERT INTO books (title, author, year, title_folded, author_folded, title_words, author_words, words)
  SELECT title, author, year, title_folded, author_folded, title_words, author_words, ${wordsOf('lexemes')}
  FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[])
    WITH ORDINALITY AS u(title, author, year, title_folded, author_folded, title_words, author_words, lexemes, n)
  ORDER BY n`

/** The books as the arrays `INSERT_BOOK_COLUMNS` takes: each member, then each search key, then the lexemes. */
export function bookColumns(books: readonly NewBook[]): [string[], string[], number[], string[], string[], string[], string[], string[]] {
  const keys = books.map(searchKeys)
  return [
    books.map((book) => book.title),
    books.map((book) => book.author),
    books.map((book) => book.year),
    keys.map((key) => key.titleFolded),
    keys.map((key) => key.authorFolded),
    keys.map((key) => key.titleWords),
    keys.map((key) => key.authorWords),
    keys.map((key) => lexemesOf(key.titleWords, key.authorWords)),
  ]
}

/**
 * The CTEs that number and record one change for each row of `source` (columns `id`, `n`, `actor`,
 * and the book's `title`, `author`, `year`, `revision`), `at` being the parameter `$at`.
 *
 * The numbers come from `change_seq` as the statement's last step: the counter's update waits for
 * `source`, whose rows it counts, and its row lock is held until the statement commits. A
 * statement that takes numbers after this one therefore gets them only once this one has
 * committed and become visible, so numbers are handed out in commit order, and a reader who has
 * seen a change has seen every change with a smaller number. `logged` answers each row's seq.
 */
function recordChanges(source: string, kind: ChangeKind, at: string): string {
  return `counter AS (
    UPDATE change_seq SET last = last + (SELECT count(*) FROM ${source})
    WHERE id = 1 AND EXISTS (SELECT FROM ${source})
    RETURNING last - (SELECT count(*) FROM ${source}) AS base
  ), logged AS (
    INSERT INTO book_changes (seq, book_id, kind, actor, at, title, author, year, revision)
    SELECT counter.base + row_number() OVER (ORDER BY s.n), s.id, '${kind}', s.actor, ${at}::bigint, s.title, s.author, s.year, s.revision
    FROM ${source} s, counter
    RETURNING seq, book_id
  )`
}

const INSERT: Statement = {
  name: 'books_insert_batch',
  text: `WITH input AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[])
      WITH ORDINALITY AS u(title, author, year, title_folded, author_folded, title_words, author_words, lexemes, actor, n)
  ), inserted AS (
    INSERT INTO books (title, author, year, title_folded, author_folded, title_words, author_words, words)
    SELECT title, author, year, title_folded, author_folded, title_words, author_words, ${wordsOf('lexemes')} FROM input ORDER BY n
    RETURNING ${COLUMNS}
  ), created AS (
    -- Identities rise in the order the rows went in: the nth smallest is the nth input.
    SELECT i.*, input.actor FROM (SELECT *, row_number() OVER (ORDER BY id) AS n FROM inserted) i JOIN input USING (n)
  ), ${recordChanges('created', 'created', '$10')}
  SELECT ${COLUMNS} FROM created`,
}

// Each row is locked in id order before any is changed (the count is a one-time filter that
// runs first), so statements from several processes cannot deadlock on each other's rows. A
// book counts as present when it could be locked: a book deleted meanwhile is missing.
// The accepted revisions of each row travel as the text of an array.
const UPDATE: Statement = {
  name: 'books_update_batch',
  text: `WITH input AS (
    SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::int[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[])
      WITH ORDINALITY AS u(id, title, author, year, expected, title_folded, author_folded, title_words, author_words, actor, n)
  ), locked AS MATERIALIZED (
    SELECT id FROM books WHERE id IN (SELECT id FROM input) ORDER BY id FOR UPDATE
  ), updated AS (
    UPDATE books b
    SET title = coalesce(u.title, b.title), author = coalesce(u.author, b.author), year = coalesce(u.year, b.year),
        title_folded = coalesce(u.title_folded, b.title_folded), author_folded = coalesce(u.author_folded, b.author_folded),
        title_words = coalesce(u.title_words, b.title_words), author_words = coalesce(u.author_words, b.author_words),
        revision = b.revision + 1
    FROM input u
    WHERE b.id = u.id AND (SELECT count(*) FROM locked) >= 0
      AND (u.expected IS NULL OR b.revision = ANY (u.expected::bigint[]))
    RETURNING b.id, b.title, b.author, b.year, b.revision, u.actor, u.n
  ), ${recordChanges('updated', 'updated', '$11')}
  SELECT input.id, updated.title, updated.author, updated.year, updated.revision,
    input.id IN (SELECT id FROM locked) AS present
  FROM input LEFT JOIN updated USING (id)`,
}

// Locked in id order first, as the update is. The whole row goes to the trash, search keys
// included, so that a restore puts it back as it was.
const DELETE: Statement = {
  name: 'books_delete_batch',
  text: `WITH input AS (
    SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[]) WITH ORDINALITY AS u(id, expected, actor, n)
  ), locked AS MATERIALIZED (
    SELECT id FROM books WHERE id IN (SELECT id FROM input) ORDER BY id FOR UPDATE
  ), deleted AS (
    DELETE FROM books b USING input u
    WHERE b.id = u.id AND (SELECT count(*) FROM locked) >= 0
      AND (u.expected IS NULL OR b.revision = ANY (u.expected::bigint[]))
    RETURNING b.id, b.title, b.author, b.year, b.revision, b.title_folded, b.author_folded, b.title_words, b.author_words, u.actor, u.n
  ), ${recordChanges('deleted', 'deleted', '$4')}, trashed AS (
    INSERT INTO trashed_books (${COLUMNS}, ${KEYS}, deleted_at, deleted_by, deleted_seq)
    SELECT d.id, d.title, d.author, d.year, d.revision, d.title_folded, d.author_folded, d.title_words, d.author_words, $4::bigint, d.actor, l.seq
    FROM deleted d JOIN logged l ON l.book_id = d.id
  )
  SELECT input.id, deleted.id IS NOT NULL AS deleted, input.id IN (SELECT id FROM locked) AS present
  FROM input LEFT JOIN deleted USING (id)`,
}

// The trash's rows are locked in id order first, as the books' are by an update: a restore and
// a purge of one book wait for each other, and the second finds it gone.
/** The books asked for, each with its actor, and their rows in the trash locked. */
const TRASH_LOCKED = `WITH input AS (
    SELECT * FROM unnest($1::bigint[], $2::text[]) WITH ORDINALITY AS u(id, actor, n)
  ), locked AS MATERIALIZED (
    SELECT id FROM trashed_books WHERE id IN (SELECT id FROM input) ORDER BY id FOR UPDATE
  ),`

const RESTORE: Statement = {
  name: 'books_restore_batch',
  text: `${TRASH_LOCKED} restored AS (
    DELETE FROM trashed_books t USING input u
    WHERE t.id = u.id AND (SELECT count(*) FROM locked) >= 0
    RETURNING t.id, t.title, t.author, t.year, t.revision + 1 AS revision,
      t.title_folded, t.author_folded, t.title_words, t.author_words, u.actor, u.n
  ), reinserted AS (
    INSERT INTO books (${COLUMNS}, ${KEYS}) OVERRIDING SYSTEM VALUE
    SELECT ${COLUMNS}, ${KEYS} FROM restored
  ), ${recordChanges('restored', 'restored', '$3')}
  SELECT ${COLUMNS} FROM restored`,
}

// The purge's own change is recorded in the statement that deletes the others: the deletion
// sees the rows as they were when the statement began, so the new one stays. The summaries find
// deletions in the trash (migration 028): a book purged before they saw it deleted puts its block
// back on their list itself.
const PURGE: Statement = {
  name: 'books_purge_batch',
  text: `${TRASH_LOCKED} purged AS (
    DELETE FROM trashed_books t USING input u
    WHERE t.id = u.id AND (SELECT count(*) FROM locked) >= 0
    RETURNING t.id, u.actor, u.n, NULL::text AS title, NULL::text AS author, NULL::int AS year, NULL::bigint AS revision, t.deleted_seq
  ), forgotten AS (
    DELETE FROM book_changes WHERE book_id IN (SELECT id FROM purged)
  ), unseen AS (
    INSERT INTO blocks_to_summarise
    SELECT DISTINCT id >> ${BLOCK_BITS} FROM purged WHERE ${unseenDeletion('deleted_seq')}
    ON CONFLICT DO NOTHING
  ), ${recordChanges('purged', 'purged', '$3')}
  SELECT id FROM purged`,
}

/**
 * Takes the numbers of `$1` changes at once, for a transaction that records its changes just
 * before it commits (an import's), and holds them, as recordChanges does, until it commits.
 */
export const TAKE_SEQ: Statement = {
  name: 'change_seq_take',
  text: 'UPDATE change_seq SET last = last + $1 WHERE id = 1 RETURNING last - $1 AS base',
}

/**
 * Records the `created` changes of the books `$4` just inserted, numbered from `$1` on, in the
 * order given. The books are read back from the table rather than sent again: an import's
 * transaction then keeps only their ids until it seals them, not every title and author.
 */
export const RECORD_CREATED: Statement = {
  name: 'book_changes_record_created',
  text: `INSERT INTO book_changes (seq, book_id, kind, actor, at, title, author, year, revision)
  SELECT $1 + u.n, b.id, 'created', $2, $3, b.title, b.author, b.year, b.revision
  FROM unnest($4::bigint[]) WITH ORDINALITY AS u(id, n) JOIN books b ON b.id = u.id`,
}

interface UpdatedRow extends Omit<StoredBook, 'title' | 'author' | 'year' | 'revision'> {
  title: string | null
  author: string | null
  year: number | null
  revision: number | null
  present: boolean
}

/** A write of a book by someone, as a batch carries it. */
interface ByActor<T> {
  actor: string
  input: T
}

/** The accepted revisions of a row as the statements take them: the text of an array, or null for any. */
function revisionsOf(expected: readonly number[] | undefined): string | null {
  return expected === undefined ? null : arrayLiteral(expected)
}

/**
 * Creates, updates, deletes, restores and purges of books, each run of them one statement that
 * also records their changes: the rows of a run go as arrays, unnested by the server.
 * GroupCommit keeps two writes to one book out of one statement, so each row of an update, a
 * delete, a restore or a purge names a different book.
 */
export function batchedBookWrites(query: Query) {
  const create: BatchedWrite<ByActor<NewBook>, StoredBook> = {
    async run(writes, sendBy) {
      const books = writes.map((write) => write.input)
      const { rows } = await query<StoredBook>(INSERT, [...bookColumns(books), writes.map((write) => write.actor), Date.now()], sendBy)
      // Identities rise in the order the rows went in, whatever order they come back in.
      return rows.sort((a, b) => a.id - b.id)
    },
  }

  const update: BatchedWrite<ByActor<Update>, UpdateResult> = {
    async run(writes, sendBy) {
      const updates = writes.map((write) => write.input)
      // Only the members given change, and with them only their own search columns.
      const titles = updates.map(({ changes: { title } }) => (title === undefined ? undefined : searchKeys({ title, author: '' })))
      const authors = updates.map(({ changes: { author } }) => (author === undefined ? undefined : searchKeys({ title: '', author })))
      const { rows } = await query<UpdatedRow>(
        UPDATE,
        [
          updates.map((u) => u.id),
          updates.map((u) => u.changes.title ?? null),
          updates.map((u) => u.changes.author ?? null),
          updates.map((u) => u.changes.year ?? null),
          updates.map((u) => revisionsOf(u.expectedRevisions)),
          titles.map((k) => k?.titleFolded ?? null),
          authors.map((k) => k?.authorFolded ?? null),
          titles.map((k) => k?.titleWords ?? null),
          authors.map((k) => k?.authorWords ?? null),
          writes.map((write) => write.actor),
          Date.now(),
        ],
        sendBy,
      )
      const byId = new Map(rows.map((row) => [row.id, row]))
      return updates.map(({ id }): UpdateResult => {
        const row = byId.get(id)
        if (row?.revision == null) return { outcome: row?.present ? 'stale' : 'missing' }
        return { outcome: 'updated', book: { id, title: row.title!, author: row.author!, year: row.year!, revision: row.revision } }
      })
    },
    target: (write) => write.input.id,
  }

  const remove: BatchedWrite<ByActor<Removal>, DeleteResult> = {
    async run(writes, sendBy) {
      const { rows } = await query<{ id: number; deleted: boolean; present: boolean }>(
        DELETE,
        [
          writes.map((write) => write.input.id),
          writes.map((write) => revisionsOf(write.input.expectedRevisions)),
          writes.map((write) => write.actor),
          Date.now(),
        ],
        sendBy,
      )
      const byId = new Map(rows.map((row) => [row.id, row]))
      return writes.map(({ input: { id } }): DeleteResult => {
        const row = byId.get(id)
        if (row?.deleted) return 'deleted'
        return row?.present ? 'stale' : 'missing'
      })
    },
    target: (write) => write.input.id,
  }

  const restore: BatchedWrite<ByActor<number>, StoredBook | undefined> = {
    async run(writes, sendBy) {
      const { rows } = await query<StoredBook>(
        RESTORE,
        [writes.map((write) => write.input), writes.map((write) => write.actor), Date.now()],
        sendBy,
      )
      const byId = new Map(rows.map((row) => [row.id, row]))
      return writes.map((write) => byId.get(write.input))
    },
    target: (write) => write.input,
  }

  const purge: BatchedWrite<ByActor<number>, boolean> = {
    async run(writes, sendBy) {
      const { rows } = await query<{ id: number }>(
        PURGE,
        [writes.map((write) => write.input), writes.map((write) => write.actor), Date.now()],
        sendBy,
      )
      const purged = new Set(rows.map((row) => row.id))
      return writes.map((write) => purged.has(write.input))
    },
    target: (write) => write.input,
  }

  return { create, update, remove, restore, purge }
}
