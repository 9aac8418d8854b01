import type { FastifyInstance, FastifyReply } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import type { Catalogue } from '../books/catalogue.ts'
import type { TrashedBook } from '../books/change.ts'
import { changeAnswer } from '../http/change-answer.ts'
import { parseBodiesAsJson } from '../http/plugins/body-parser.ts'
import { envelope } from '../http/envelope.ts'
import {
  Book,
  BookIdParams,
  Change as ChangeSchema,
  ETAG,
  EXAMPLE_BOOK,
  EXAMPLE_CHANGE,
  EXAMPLE_TRASHED,
  failures,
  IfMatchHeader,
  PageQuery,
  RevertRequest,
  Success,
  TrashedBook as TrashedBookSchema,
  withHeaders,
} from '../schemas.ts'
import { acceptedRevisions, etag, resolveBookId } from './book-identity.ts'
import { nextPageLink, pageLimit } from './paging.ts'

export interface HistoryRouteOptions {
  catalogue: Catalogue
}

const { invalidInput, tokenRefused, bookNotFound, tooLarge, internal, storeUnavailable, preconditionFailed } = failures
const errors = { 401: tokenRefused, 500: internal, 503: storeUnavailable }
const security = [{ token: [] }]
const LINK = { Link: 'While more remain: the next page, `<…?limit=N&before=SEQ>; rel="next"`' }

function trashedOf({ id, title, author, year, deletedAt, deletedBy }: TrashedBook) {
  return { id, title, author, year, deleted_at: new Date(deletedAt).toISOString(), deleted_by: deletedBy }
}

/**
 * One page of what `read` answers, newest first: `limit + 1` are read, and when the extra one
 * comes, the answer links to the page after the last one shown.
 */
async function paged<T extends { seq: number } | { deletedSeq: number }>(
  query: { limit?: string | undefined; before?: string | undefined },
  reply: FastifyReply,
  path: string,
  read: (before: number | undefined, limit: number) => Promise<T[]>,
): Promise<T[]> {
  const limit = pageLimit(query)
  const found = await read(query.before === undefined ? undefined : Number(query.before), limit + 1)
  if (found.length <= limit) return found
  const page = found.slice(0, limit)
  const last = page.at(-1)!
  reply.header('link', nextPageLink(path, limit, ['before', 'seq' in last ? last.seq : last.deletedSeq]))
  return page
}

/** The history of each book, the trash, and the ways back: restore, revert and purge (docs/api.md#history). */
export async function historyRoutes(app: FastifyInstance, { catalogue }: HistoryRouteOptions) {
  parseBodiesAsJson(app)
  const routes = app.withTypeProvider<TypeBoxTypeProvider>()
  routes.decorateRequest('bookId', 0)

  routes.get(
    '/book/:id/history',
    {
      schema: {
        summary: "A book's history",
        description:
          'Every change of the book, newest first: who made it, when, and the values it left. A book in the trash keeps its history; a purged one has none.',
        operationId: 'getBookHistory',
        tags: ['History'],
        security,
        params: BookIdParams,
        querystring: PageQuery,
        response: {
          200: withHeaders(
            Success(200, 'History retrieved successfully', Type.Array(ChangeSchema), [EXAMPLE_CHANGE], 'The changes, newest first'),
            LINK,
          ),
          400: invalidInput,
          404: bookNotFound,
          ...errors,
        },
      },
      config: { access: 'reader', invalidInputMessage: 'Invalid input' },
      onRequest: resolveBookId,
    },
    async (request, reply) => {
      const page = await paged(request.query, reply, `/book/${request.bookId}/history`, (before, limit) =>
        catalogue.history(request.bookId, before, limit),
      )
      return envelope(200, 'History retrieved successfully', page.map(changeAnswer))
    },
  )

  routes.get(
    '/books/trash',
    {
      schema: {
        summary: 'The trash',
        description: `Deleted books, latest deletion first, until they are restored or purged; each is purged by itself after \`TRASH_RETENTION_DAYS\`.`,
        operationId: 'listTrash',
        tags: ['History'],
        security,
        querystring: PageQuery,
        response: {
          200: withHeaders(
            Success(
              200,
              'Trash retrieved successfully',
              Type.Array(TrashedBookSchema),
              [EXAMPLE_TRASHED],
              'The deleted books, latest deletion first',
            ),
            LINK,
          ),
          400: invalidInput,
          ...errors,
        },
      },
      config: { access: 'editor', invalidInputMessage: 'Invalid input' },
    },
    async (request, reply) => {
      const page = await paged(request.query, reply, '/books/trash', (before, limit) => catalogue.trash(before, limit))
      return envelope(200, 'Trash retrieved successfully', page.map(trashedOf))
    },
  )

  routes.post(
    '/book/:id/restore',
    {
      schema: {
        summary: 'Restore a book from the trash',
        description: 'The book comes back with its id, and every list, search, count and export finds it again.',
        operationId: 'restoreBook',
        tags: ['History'],
        security,
        params: BookIdParams,
        response: {
          200: withHeaders(Success(200, 'Book restored successfully', Book, EXAMPLE_BOOK, 'The book, back with its id'), ETAG),
          404: bookNotFound,
          413: tooLarge,
          ...errors,
        },
      },
      config: { access: 'editor' },
      onRequest: resolveBookId,
    },
    async (request, reply) => {
      const book = await catalogue.restore(request.principal, request.bookId)
      reply.header('etag', etag(book))
      return envelope(200, 'Book restored successfully', book)
    },
  )

  routes.post(
    '/book/:id/revert',
    {
      schema: {
        summary: 'Give a book the values it had after one of its changes',
        description: 'Recorded as an `updated` change. With `If-Match`, only while the book still has one of the given ETags.',
        operationId: 'revertBook',
        tags: ['History'],
        security,
        params: BookIdParams,
        headers: IfMatchHeader,
        body: RevertRequest,
        response: {
          200: withHeaders(Success(200, 'Book updated successfully', Book, EXAMPLE_BOOK, 'The book with the values of that change'), ETAG),
          400: invalidInput,
          404: bookNotFound,
          412: preconditionFailed,
          413: tooLarge,
          ...errors,
        },
      },
      config: { access: 'editor', invalidInputMessage: 'Invalid input' },
      onRequest: resolveBookId,
    },
    async (request, reply) => {
      const book = await catalogue.revert(
        request.principal,
        request.bookId,
        request.body.seq,
        acceptedRevisions(request.headers['if-match']),
      )
      reply.header('etag', etag(book))
      return envelope(200, 'Book updated successfully', book)
    },
  )

  routes.delete(
    '/books/trash/:id',
    {
      schema: {
        summary: 'Purge a book from the trash',
        description:
          'The book and its history are gone for good; the history keeps one `purged` change, and the id is never given to another book.',
        operationId: 'purgeBook',
        tags: ['History'],
        security,
        params: BookIdParams,
        response: {
          200: Success(200, 'Book purged successfully', Type.Null(), null, 'The book is gone for good'),
          404: bookNotFound,
          ...errors,
        },
      },
      config: { access: 'admin' },
      onRequest: resolveBookId,
    },
    async (request) => {
      await catalogue.purge(request.principal, request.bookId)
      return envelope(200, 'Book purged successfully', null)
    },
  )
}
