/** How routes name a book: the `{id}` of the path, and its revision as an ETag that `If-Match` names. */
import type { onRequestHookHandler } from 'fastify'
import type { StoredBook } from '../books/book.ts'
import { BookNotFound } from '../books/errors.ts'
import { ID_PATTERN } from '../schemas.ts'

declare module 'fastify' {
  interface FastifyRequest {
    /** The `{id}` of the path, once it is known to be a valid id. */
    bookId: number
  }
}

const ID = new RegExp(ID_PATTERN)

/** A path `{id}` that is not an id names no book: 404, before the body is read. */
export const resolveBookId: onRequestHookHandler = (request, _reply, done) => {
  const raw = (request.params as { id: string }).id
  const id = ID.test(raw) ? Number(raw) : Number.NaN
  if (!Number.isSafeInteger(id)) {
    done(new BookNotFound())
    return
  }
  request.bookId = id
  done()
}

export function etag(book: StoredBook): string {
  return `"${book.revision}"`
}

/** The revisions an `If-Match` header accepts; undefined when any revision will do. */
export function acceptedRevisions(header: string | undefined): number[] | undefined {
  if (header === undefined || header.trim() === '*') return undefined
  const revisions: number[] = []
  for (const tag of header.split(',')) {
    const match = /^"(\d{1,15})"$/.exec(tag.trim())
    if (match) revisions.push(Number(match[1]))
  }
  return revisions
}
