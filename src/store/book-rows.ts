import { searchKeys } from '../books/folding.ts'
import type { NewBook } from './store.ts'

/**
 * Books on their way into the store in bulk: the UTF-8 bytes of one JSON array with, for each
 * book, its members and its search keys (`title`, `author`, `year`, `titleFolded`,
 * `authorFolded`, `titleWords`, `authorWords`). An import's batches reach the store in this form
 * (see ImportSpool), so that no object of theirs is alive while a statement waits for its
 * answer: on PostgreSQL, the books and keys a batch held through that wait were promoted to V8's
 * old generation, and 100,000 books raised the process's memory by over 100 MiB.
 */
export type BookRowsJson = Buffer

/** The JSON text of `books` as BookRowsJson holds it. */
export function bookRowsJson(books: readonly NewBook[]): string {
  return JSON.stringify(books.map((book) => ({ title: book.title, author: book.author, year: book.year, ...searchKeys(book) })))
}
