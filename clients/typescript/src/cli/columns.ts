/** The columns of each list the command prints. */
import type { Book, Change, Key, TrashedBook, User } from '../index.ts'
import type { Column } from './output.ts'

/** `2026-11-25T10:02:11.512Z` as `2026-11-25 10:02:11`, in UTC, as the service writes it. */
function time(value: string | null): string | null {
  return value === null ? null : value.replace('T', ' ').replace(/\.\d+Z$|Z$/, '')
}

export const BOOK_COLUMNS: Column<Book>[] = [
  { title: 'ID', value: (book) => book.id, right: true },
  { title: 'TITLE', value: (book) => book.title, share: 3 },
  { title: 'AUTHOR', value: (book) => book.author, share: 2 },
  { title: 'YEAR', value: (book) => book.year, right: true },
]

export const CHANGE_COLUMNS: Column<Change>[] = [
  { title: 'SEQ', value: (change) => change.seq, right: true },
  { title: 'AT', value: (change) => time(change.at) },
  { title: 'KIND', value: (change) => change.kind },
  { title: 'ACTOR', value: (change) => change.actor, share: 1 },
  { title: 'TITLE', value: (change) => change.book?.title ?? null, share: 3 },
  { title: 'AUTHOR', value: (change) => change.book?.author ?? null, share: 2 },
  { title: 'YEAR', value: (change) => change.book?.year ?? null, right: true },
]

export const TRASH_COLUMNS: Column<TrashedBook>[] = [
  ...(BOOK_COLUMNS as Column<TrashedBook>[]),
  { title: 'DELETED AT', value: (book) => time(book.deleted_at) },
  { title: 'DELETED BY', value: (book) => book.deleted_by, share: 1 },
]

export const USER_COLUMNS: Column<User>[] = [
  { title: 'USERNAME', value: (user) => user.username },
  { title: 'ROLE', value: (user) => user.role },
  { title: 'CREATED', value: (user) => time(user.created) },
]

export const KEY_COLUMNS: Column<Key>[] = [
  { title: 'ID', value: (key) => key.id, right: true },
  { title: 'NAME', value: (key) => key.name, share: 1 },
  { title: 'ROLE', value: (key) => key.role },
  { title: 'OWNER', value: (key) => key.owner },
  { title: 'CREATED', value: (key) => time(key.created) },
  { title: 'EXPIRES', value: (key) => time(key.expires) ?? 'never' },
  { title: 'LAST USED', value: (key) => time(key.last_used) ?? 'never' },
]
