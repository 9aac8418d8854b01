import { setImmediate as nextTurn } from 'node:timers/promises'
import type { Book, BookPageJson, BookRepository } from '../store/store.ts'

/** Books fetched per query while the whole list is written out. */
const LIST_BATCH = 1000

const PREFIX = '{"status":200,"message":"Books retrieved successfully","data":'

/** A page as JSON text, from the store itself when it can serialise, else built here. */
async function pageJson(books: BookRepository, after: number, limit: number): Promise<BookPageJson> {
  if (books.listJson) return books.listJson(after, limit)
  const page: Book[] = await books.list(after, limit)
  // Only the four members of a book, whatever else the engine's rows carry.
  const json = JSON.stringify(page.map(({ id, title, author, year }) => ({ id, title, author, year })))
  return { json, count: page.length, lastId: page.at(-1)?.id }
}

/**
 * Every book after `after` as the whole envelope: one string when the list fits in one
 * batch, otherwise an iterable that fetches and yields a batch at a time, so that memory
 * stays flat however long the list is, and other requests are served between batches.
 */
export async function listAll(books: BookRepository, after: number): Promise<string | AsyncIterable<string>> {
  const first = await pageJson(books, after, LIST_BATCH)
  if (first.count < LIST_BATCH) return `${PREFIX}${first.json}}`
  return (async function* () {
    yield PREFIX + first.json.slice(0, -1)
    let last = first
    while (last.count === LIST_BATCH) {
      // Each page is read synchronously by SQLite: without a turn of the event loop between
      // pages, a long list would hold every other request until it is done.
      await nextTurn()
      last = await pageJson(books, last.lastId!, LIST_BATCH)
      if (last.count > 0) yield `,${last.json.slice(1, -1)}`
    }
    yield ']}'
  })()
}
