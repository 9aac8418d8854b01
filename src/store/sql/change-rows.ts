import type { Change, ChangeKind, TrashedBook } from '../../books/change.ts'

/** The columns of a change as both engines read it. */
export const CHANGE_COLUMNS = 'seq, book_id, kind, actor, at, title, author, year'

/** The columns of a trashed book as both engines read it. */
export const TRASH_COLUMNS = 'id, title, author, year, deleted_at, deleted_by, deleted_seq'

/** A row of CHANGE_COLUMNS. */
export interface ChangeRow {
  seq: number
  book_id: number
  kind: ChangeKind
  actor: string
  at: number
  title: string | null
  author: string | null
  year: number | null
}

/** A row of TRASH_COLUMNS. */
export interface TrashRow {
  id: number
  title: string
  author: string
  year: number
  deleted_at: number
  deleted_by: string
  deleted_seq: number
}

export function changeOf(row: ChangeRow): Change {
  const { seq, book_id: bookId, kind, actor, at, title, author, year } = row
  const book = title === null || author === null || year === null ? null : { id: bookId, title, author, year }
  return { seq, bookId, kind, actor, at, book }
}

export function trashedBookOf(row: TrashRow): TrashedBook {
  const { id, title, author, year, deleted_at: deletedAt, deleted_by: deletedBy, deleted_seq: deletedSeq } = row
  return { id, title, author, year, deletedAt, deletedBy, deletedSeq }
}
