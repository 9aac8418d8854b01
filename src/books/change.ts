import type { Book } from './book.ts'

/** What happened to a book, in the words the history uses. */
export const CHANGE_KINDS = ['created', 'updated', 'deleted', 'restored', 'purged'] as const
export type ChangeKind = (typeof CHANGE_KINDS)[number]

/** One change to one book, as the catalogue recorded it in the transaction that made it. */
export interface Change {
  /** Its place in the catalogue's history: every later commit has a greater one. */
  seq: number
  bookId: number
  kind: ChangeKind
  /** Who made it: a username, `key:<name>`, or `system:<job>` for the service's own. */
  actor: string
  /** Milliseconds since the epoch. */
  at: number
  /** The book's values after the change; for `deleted`, as it was; for `purged`, none. */
  book: Book | null
}

/** A deleted book, waiting in the trash to be restored or purged. */
export interface TrashedBook extends Book {
  /** Milliseconds since the epoch. */
  deletedAt: number
  deletedBy: string
  /** The seq of its `deleted` change, which orders the trash. */
  deletedSeq: number
}
