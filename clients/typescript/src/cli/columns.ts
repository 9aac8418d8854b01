/** The columns of each list the command prints. */
import type { Book, Change, Key, TrashedBook, User } from '../index.ts'
import type { Column } from './output.ts'

export const BOOK_COLUMNS: Column<Book>[] = [
  { title: 'ID', value: (book) => book.id, right: true },
  { title: 'TITLE', value: (book) => book.title, share: 3 },
  { title: 'AUTHOR', value: (book) => book.author, share: 2 },
  { title: 'YEAR', value: (book) => book.year, right: true },
]

export const CHANGE_COLUMNS: Column<Change>[] = [
  { title: 'SEQ', value: (change) => change.seq, right: true },
  { title: 'AT', value: (change) => change.at, time: true },
  { title: 'KIND', value: (change) => change.kind },
  { title: 'ACTOR', value: (change) => change.actor, share: 1 },
  { title: 'TITLE', value: (change) => change.book?.title ?? null, share: 3 },
  { title: 'AUTHOR', value: (change) => change.book?.author ?? null, share: 2 },
  { title: 'YEAR', value: (change) => change.book?.year ?? null, right: true },
]

export const TRASH_COLUMNS: Column<TrashedBook>[] = [
  ...(BOOK_COLUMNS as Column<TrashedBook>[]),
  { title: 'DELETED AT', value: (book) => book.deleted_at, time: true },
  { title: 'DELETED BY', value: (book) => book.deleted_by, share: 1 },
]

export const USER_COLUMNS: Column<User>[] = [
  { title: 'USERNAME', value: (user) => user.username },
  { title: 'ROLE', value: (user) => user.role },
  { title: 'CREATED', value: (user) => user.created, time: true },
]

export const KEY_COLUMNS: Column<Key>[] = [
  { title: 'ID', value: (key) => key.id, right: true },
  { title: 'NAME', value: (key) => key.name, share: 1 },
  { title: 'ROLE', value: (key) => key.role },
  { title: 'OWNER', value: (key) => key.owner },
  { title: 'CREATED', value: (key) => key.created, time: true },
  { title: 'EXPIRES', value: (key) => key.expires, time: true, none: 'never' },
  { title: 'LAST USED', value: (key) => key.last_used, time: true, none: 'never' },
]
