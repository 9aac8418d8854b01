import { Readable } from 'node:stream'
import type { FastifyReply } from 'fastify'
import type { Cursors } from '../books/cursor.ts'
import { positionShape, type FoundBook, type Position } from '../books/find.ts'
import { canonicalQuery, findQueryOf, findsBooks, parseBookQuery, type BookQuery, type RawBookQuery } from '../books/list-parameters.ts'
import { envelope } from '../http/envelope.ts'
import { clientGone } from '../http/wire/client-gone.ts'
import { InvalidInput } from '../books/errors.ts'
import type { BookPages, BookReader, JsonPage } from '../store/store.ts'

/** Books read per page while the whole list is written out. */
const LIST_PAGE = 1000

const MESSAGE = 'Books retrieved successfully'
const PREFIX = `{"status":200,"message":"${MESSAGE}","data":`

/** Whether `position` has the shape that the query's order gives its positions. */
function fits(position: Position, shape: ('number' | 'string')[]): boolean {
  return position.length === shape.length && position.every((value, i) => typeof value === shape[i])
}

/** Where the query's pages start: after the cursor's position, once the cursor is known to be genuine. */
function startOf(query: BookQuery, cursors: Cursors): Position | undefined {
  if (query.cursor === undefined) return undefined
  const after = cursors.open(canonicalQuery(query), query.cursor)
  if (after === undefined || !fits(after, positionShape(findQueryOf(query, undefined, 1).order))) throw new InvalidInput()
  return after
}

/**
 * The link to the page after one that ended at `last`: a list with only `limit` and `after` keeps
 * the `after` form it always had; any other query carries every parameter and a cursor.
 */
function nextLink(query: BookQuery, cursors: Cursors, last: FoundBook): string {
  if (!findsBooks(query)) return `</books?limit=${query.limit}&after=${last.book.id}>; rel="next"`
  const canonical = canonicalQuery(query)
  return `</books?${canonical}&cursor=${cursors.issue(canonical, last.position)}>; rel="next"`
}

/**
 * The whole envelope of an unpaged list, written as JSON text past the response schema (which
 * serialises only whole objects): as one string when one page holds it, otherwise a page at a time,
 * so that memory stays flat however long the list is. Every page comes from one snapshot of the
 * catalogue.
 */
async function sendAll(reply: FastifyReply, pages: BookPages<JsonPage>) {
  reply.type('application/json; charset=utf-8')
  if (pages.complete) {
    // A list that its first page holds goes as one string, with its length: the read ended with
    // that page, and a stream of it costs the thread that answers every request a third more.
    let books = '[]'
    for await (const page of pages) books = page.json
    return reply.send(`${PREFIX}${books}}`)
  }
  const body = Readable.from(
    (async function* () {
      yield `${PREFIX}[`
      let first = true
      for await (const page of pages) {
        if (page.size === 0) continue
        yield `${first ? '' : ','}${page.json.slice(1, -1)}`
        first = false
      }
      yield ']}'
    })(),
    // As bytes: in object mode the stream would read 16 pages ahead of the client, and pages held
    // that long outlive young collections and fill the old generation.
    { objectMode: false },
  )
  endsWith(body, pages)
  return reply.send(body)
}

/**
 * Ends the read of `pages` when `body` closes, however it closes: a client gone before the body
 * was first read destroys it without running its generator, which would keep the read (and on
 * PostgreSQL its connection) for ever.
 */
export function endsWith(body: Readable, pages: BookPages<unknown>): void {
  body.once('close', () => {
    pages.close().catch(() => {})
  })
}

/**
 * Names in `X-Change-Seq` the newest change that a whole read reflects: a client that follows the
 * changes after it from there keeps a copy that never misses one (docs/api.md#following-changes).
 */
export function changeSeqOf(reply: FastifyReply, pages: BookPages<unknown>): void {
  if (pages.changeSeq !== undefined) reply.header('x-change-seq', String(pages.changeSeq))
}

/**
 * Answers `GET /books` for every combination of its parameters: one page, with a `Link` to the
 * next while more remain, or every match. `client` is the asking client's address.
 */
export async function listBooks(reader: BookReader, cursors: Cursors, raw: RawBookQuery, reply: FastifyReply, client: string) {
  const query = parseBookQuery(raw)
  const after = startOf(query, cursors)
  if (query.limit === undefined) {
    const pages = await reader.pages(
      { ...findQueryOf(query, after, LIST_PAGE), count: query.count },
      { whole: true, json: true, client, signal: clientGone(reply) },
    )
    if (pages.total !== undefined) reply.header('x-total-count', String(pages.total))
    changeSeqOf(reply, pages)
    return sendAll(reply, pages)
  }
  const { limit } = query
  // One more than the page: whether it exists says whether a next page does.
  const pages = await reader.pages({ ...findQueryOf(query, after, limit + 1), count: query.count }, { client, signal: clientGone(reply) })
  let found: FoundBook[] = []
  for await (const page of pages) found = page
  if (pages.total !== undefined) reply.header('x-total-count', String(pages.total))
  if (found.length > limit) {
    found.length = limit
    reply.header('link', nextLink(query, cursors, found.at(-1)!))
  }
  return envelope(
    200,
    MESSAGE,
    found.map(({ book }) => book),
  )
}
