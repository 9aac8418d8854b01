import { Readable } from 'node:stream'
import { setImmediate as nextTurn } from 'node:timers/promises'
import type { FastifyReply } from 'fastify'
import type { Cursors } from '../books/cursor.ts'
import { positionShape, type FindQuery, type FoundBook, type Position } from '../books/find-query.ts'
import { canonicalQuery, findQueryOf, findsBooks, parseBookQuery, type BookQuery, type RawBookQuery } from '../books/query.ts'
import { envelope } from '../http/envelope.ts'
import { HttpError } from '../http/http-error.ts'
import type { BookPageJson, BookRepository } from '../store/store.ts'
import type { Book } from '../books/book.ts'

/** Books fetched per query while the whole list is written out. */
const LIST_BATCH = 1000

const MESSAGE = 'Books retrieved successfully'
const PREFIX = `{"status":200,"message":"${MESSAGE}","data":`

/** Only the four members of a book, whatever else the engine's rows carry. */
function booksJson(books: Book[]): string {
  return JSON.stringify(books.map(({ id, title, author, year }) => ({ id, title, author, year })))
}

/** A page as JSON text, from the store itself when it can serialise, else built here. */
async function pageJson(books: BookRepository, after: number, limit: number): Promise<BookPageJson> {
  if (books.listJson) return books.listJson(after, limit)
  const page = await books.list(after, limit)
  return { json: booksJson(page), count: page.length, lastId: page.at(-1)?.id }
}

/** A batch of the whole list as the JSON text of an array, and how to fetch the batch after it. */
interface Batch {
  json: string
  count: number
  next(): Promise<Batch>
}

/**
 * The whole envelope, written as JSON text past the response schema (which serialises only whole
 * objects): one string when the list fits in one batch, otherwise a stream that fetches and
 * writes a batch at a time, so that memory stays flat however long the list is, and other
 * requests are served between batches.
 */
function sendAll(reply: FastifyReply, first: Batch) {
  const body =
    first.count < LIST_BATCH
      ? `${PREFIX}${first.json}}`
      : Readable.from(
          (async function* () {
            yield PREFIX + first.json.slice(0, -1)
            let batch = first
            while (batch.count === LIST_BATCH) {
              // Each batch is read synchronously by SQLite: without a turn of the event loop
              // between batches, a long list would hold every other request until it is done.
              await nextTurn()
              batch = await batch.next()
              if (batch.count > 0) yield `,${batch.json.slice(1, -1)}`
            }
            yield ']}'
          })(),
          // As bytes: in object mode the stream would read 16 batches ahead of the client, and
          // batches held that long outlive young collections and fill the old generation.
          { objectMode: false },
        )
  return reply.type('application/json; charset=utf-8').send(body)
}

/** `GET /books` as section 4 has it: `limit` and `after`, with `after` in the `Link`. */
async function listByIds(books: BookRepository, query: BookQuery, reply: FastifyReply) {
  const after = query.after ?? 0
  if (query.limit !== undefined) {
    const { limit } = query
    const page = await books.list(after, limit + 1)
    if (page.length > limit) {
      page.length = limit
      reply.header('link', `</books?limit=${limit}&after=${page[limit - 1]!.id}>; rel="next"`)
    }
    return envelope(200, MESSAGE, page)
  }
  const batchAfter = async (id: number): Promise<Batch> => {
    const page = await pageJson(books, id, LIST_BATCH)
    return { json: page.json, count: page.count, next: () => batchAfter(page.lastId!) }
  }
  return sendAll(reply, await batchAfter(after))
}

/** Whether `position` has the shape that the query's order gives its positions. */
function fits(position: Position, shape: ('number' | 'string')[]): boolean {
  return position.length === shape.length && position.every((value, i) => typeof value === shape[i])
}

/** `GET /books` with any parameter of section 9: filters, sorts, counts and cursors. */
async function findBooks(books: BookRepository, cursors: Cursors, query: BookQuery, reply: FastifyReply) {
  const canonical = canonicalQuery(query)
  let after: Position | undefined
  if (query.cursor !== undefined) {
    after = cursors.open(canonical, query.cursor)
    if (after === undefined || !fits(after, positionShape(findQueryOf(query, undefined, 1).order))) {
      throw new HttpError(400, 'Invalid input')
    }
  }
  const find = (position: Position | undefined, limit: number, count: boolean): FindQuery => ({
    ...findQueryOf(query, position, limit),
    count,
  })
  const page = query.limit ?? LIST_BATCH
  // One more than the page: whether it exists says whether a next page does.
  const { found, total } = await books.find(find(after, query.limit === undefined ? page : page + 1, query.count))
  if (total !== undefined) reply.header('x-total-count', String(total))
  if (query.limit !== undefined) {
    if (found.length > page) {
      found.length = page
      const cursor = cursors.issue(canonical, found.at(-1)!.position)
      reply.header('link', `</books?${canonical}&cursor=${cursor}>; rel="next"`)
    }
    return envelope(
      200,
      MESSAGE,
      found.map(({ book }) => book),
    )
  }
  const batch = (items: FoundBook[]): Batch => ({
    json: booksJson(items.map(({ book }) => book)),
    count: items.length,
    next: async () => batch((await books.find(find(items.at(-1)!.position, page, false))).found),
  })
  return sendAll(reply, batch(found))
}

/** Answers `GET /books` for every combination of its parameters. */
export async function listBooks(books: BookRepository, cursors: Cursors, raw: RawBookQuery, reply: FastifyReply) {
  const query = parseBookQuery(raw)
  return findsBooks(query) ? findBooks(books, cursors, query, reply) : listByIds(books, query, reply)
}
