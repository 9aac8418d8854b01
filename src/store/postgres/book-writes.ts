import type { QueryResultRow } from 'pg'
import { searchKeys } from '../../books/folding.ts'
import type { UpdateResult } from '../store.ts'
import type { BookChanges, NewBook, StoredBook } from '../../books/book.ts'
import type { BatchedWrite } from './group-commit.ts'

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

const COLUMNS = 'id, title, author, year, revision'

/**
 * Inserts the arrays of `bookColumns`, one statement for any number of books. Ordinality keeps the
 * rows in the order given, so their identities rise in that order.
 */
export const INSERT_BOOK_COLUMNS = `INSERT INTO books (title, author, year, title_folded, author_folded, title_words, author_words)
  SELECT title, author, year, title_folded, author_folded, title_words, author_words
  FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[], $6::text[], $7::text[])
    WITH ORDINALITY AS u(title, author, year, title_folded, author_folded, title_words, author_words, n)
  ORDER BY n`

/** The books as the arrays `INSERT_BOOK_COLUMNS` takes: each member, then each search key. */
export function bookColumns(books: readonly NewBook[]): [string[], string[], number[], string[], string[], string[], string[]] {
  const keys = books.map(searchKeys)
  return [
    books.map((book) => book.title),
    books.map((book) => book.author),
    books.map((book) => book.year),
    keys.map((key) => key.titleFolded),
    keys.map((key) => key.authorFolded),
    keys.map((key) => key.titleWords),
    keys.map((key) => key.authorWords),
  ]
}

const INSERT: Statement = { name: 'books_insert_batch', text: `${INSERT_BOOK_COLUMNS} RETURNING ${COLUMNS}` }

// Each row is locked in id order before any is changed (the count is a one-time filter that
// runs first), so statements from several processes cannot deadlock on each other's rows. A
// book counts as present when it could be locked: a book deleted meanwhile is missing.
// The accepted revisions of each row travel as the text of an array.
const UPDATE: Statement = {
  name: 'books_update_batch',
  text: `WITH input AS (
    SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::int[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[])
      AS u(id, title, author, year, expected, title_folded, author_folded, title_words, author_words)
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
    RETURNING b.id, b.title, b.author, b.year, b.revision
  )
  SELECT input.id, updated.title, updated.author, updated.year, updated.revision,
    input.id IN (SELECT id FROM locked) AS present
  FROM input LEFT JOIN updated USING (id)`,
}

// Locked in id order first, as the update is.
const DELETE: Statement = {
  name: 'books_delete_batch',
  text: `WITH locked AS MATERIALIZED (SELECT id FROM books WHERE id = ANY ($1::bigint[]) ORDER BY id FOR UPDATE)
  DELETE FROM books WHERE id = ANY ($1::bigint[]) AND (SELECT count(*) FROM locked) >= 0
  RETURNING id`,
}

interface UpdatedRow extends Omit<StoredBook, 'title' | 'author' | 'year' | 'revision'> {
  title: string | null
  author: string | null
  year: number | null
  revision: number | null
  present: boolean
}

/**
 * Creates, updates and deletes of books, each run of them one statement: the rows of a run go
 * as arrays, unnested by the server. GroupCommit keeps two writes to one book out of one
 * statement, so each row of an update or a delete names a different book.
 */
export function batchedBookWrites(query: Query) {
  const create: BatchedWrite<NewBook, StoredBook> = {
    async run(books, sendBy) {
      const { rows } = await query<StoredBook>(INSERT, bookColumns(books), sendBy)
      // Identities rise in the order the rows went in, whatever order they come back in.
      return rows.sort((a, b) => a.id - b.id)
    },
  }

  const update: BatchedWrite<Update, UpdateResult> = {
    async run(updates, sendBy) {
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
          updates.map((u) => (u.expectedRevisions === undefined ? null : `{${u.expectedRevisions.join(',')}}`)),
          titles.map((k) => k?.titleFolded ?? null),
          authors.map((k) => k?.authorFolded ?? null),
          titles.map((k) => k?.titleWords ?? null),
          authors.map((k) => k?.authorWords ?? null),
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
    target: (u) => u.id,
  }

  const remove: BatchedWrite<number, boolean> = {
    async run(ids, sendBy) {
      const { rows } = await query<{ id: number }>(DELETE, [ids], sendBy)
      const deleted = new Set(rows.map((row) => row.id))
      return ids.map((id) => deleted.has(id))
    },
    target: (id) => id,
  }

  return { create, update, remove }
}
