import type { FastifyInstance, onRequestAsyncHookHandler } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import { clientKey } from '../auth/login-limiter.ts'
import type { Cursors } from '../books/cursor.ts'
import { parseBodiesAsJson } from '../http/plugins/body-parser.ts'
import { envelope } from '../http/envelope.ts'
import type { Catalogue } from '../books/catalogue.ts'
import {
  Book,
  BookChanges,
  CHANGE_SEQ,
  BookIdParams,
  ETAG,
  EXAMPLE_BOOK,
  failures,
  IDEMPOTENT_REPLAYED,
  IdempotencyKeyHeader,
  idempotencyFailures,
  IfMatchHeader,
  ListQuery,
  NewBook,
  Success,
  withHeaders,
} from '../schemas.ts'
import type { BookReader } from '../store/store.ts'
import { acceptedRevisions, etag, resolveBookId } from './book-identity.ts'
import { listBooks } from './book-list.ts'

export interface BookRouteOptions {
  catalogue: Catalogue
  reader: BookReader
  cursors: Cursors
}

const { invalidInput, tokenRefused, bookNotFound: noSuchBook, tooLarge, internal, storeUnavailable, preconditionFailed } = failures
const errors = { 401: tokenRefused, 500: internal, 503: storeUnavailable }
const security = [{ token: [] }]

export async function bookRoutes(app: FastifyInstance, { catalogue, reader, cursors }: BookRouteOptions) {
  parseBodiesAsJson(app)
  const books = app.withTypeProvider<TypeBoxTypeProvider>()
  books.decorateRequest('bookId', 0)

  // A missing book is 404 before its body is read.
  const requireExistingBook: onRequestAsyncHookHandler = async (request) => {
    await catalogue.get(request.bookId)
  }

  books.post(
    '/book',
    {
      schema: {
        summary: 'Create a book',
        operationId: 'createBook',
        tags: ['Books'],
        security,
        headers: IdempotencyKeyHeader,
        body: NewBook,
        response: {
          201: withHeaders(Success(201, 'Book created successfully', Book, EXAMPLE_BOOK, 'The stored book with its new id'), {
            Location: 'The path of the new book',
            ...ETAG,
            ...IDEMPOTENT_REPLAYED,
          }),
          400: invalidInput,
          ...idempotencyFailures,
          413: tooLarge,
          ...errors,
        },
      },
      config: { access: 'editor', invalidInputMessage: 'Invalid input', idempotent: true },
    },
    async (request, reply) => {
      const { title, author, year } = request.body
      const claim = request.idempotency
      // With a key, the answer commits with the book, so that a retry finds exactly what was stored.
      const book = await catalogue.create(
        request.principal,
        { title, author, year },
        claim &&
          ((repositories, created) =>
            claim.record(repositories, {
              status: 201,
              headers: { etag: etag(created), location: `/book/${created.id}` },
              payload: envelope(201, 'Book created successfully', created),
            })),
      )
      reply.code(201).header('etag', etag(book)).header('location', `/book/${book.id}`)
      return envelope(201, 'Book created successfully', book)
    },
  )

  books.get(
    '/books',
    {
      schema: {
        summary: 'List and find books',
        description:
          'Every book, ascending by id, by default. With `q`, `title`, `author` and the years, only the books that match; `sort` orders them, `count=true` counts them. With `limit`, one page, and a `Link` header to the next page while more remain.',
        operationId: 'listBooks',
        tags: ['Books'],
        security,
        querystring: ListQuery,
        response: {
          200: withHeaders(
            Success(
              200,
              'Books retrieved successfully',
              Type.Array(Book),
              [EXAMPLE_BOOK],
              'The books, ascending by id (`[]` when there are none)',
            ),
            {
              Link: 'With `limit`, while more books remain: `</books?limit=N&after=ID>; rel="next"`, or, with any search parameter, a link that holds every parameter and a `cursor`',
              'X-Total-Count': 'With `count=true`: how many books match, all pages together',
              'X-Change-Seq': `Without \`limit\`: ${CHANGE_SEQ['X-Change-Seq']}`,
            },
          ),
          400: invalidInput,
          ...errors,
        },
      },
      config: { access: 'reader', invalidInputMessage: 'Invalid input' },
    },
    (request, reply) => listBooks(reader, cursors, request.query, reply, clientKey(request.ip)),
  )

  books.get(
    '/book/:id',
    {
      schema: {
        summary: 'Get a book',
        operationId: 'getBook',
        tags: ['Books'],
        security,
        params: BookIdParams,
        response: {
          200: withHeaders(Success(200, 'Book retrieved successfully', Book, EXAMPLE_BOOK, 'The book'), ETAG),
          404: noSuchBook,
          ...errors,
        },
      },
      config: { access: 'reader' },
      onRequest: resolveBookId,
    },
    async (request, reply) => {
      const book = await catalogue.get(request.bookId)
      reply.header('etag', etag(book))
      return envelope(200, 'Book retrieved successfully', book)
    },
  )

  books.put(
    '/book/:id',
    {
      schema: {
        summary: 'Update a book: members absent from the body keep their values',
        description:
          'The id is checked before the body: a missing book is 404 whatever the body. With `If-Match`, the update happens only while the book still has one of the given ETags.',
        operationId: 'updateBook',
        tags: ['Books'],
        security,
        params: BookIdParams,
        headers: IfMatchHeader,
        body: BookChanges,
        response: {
          200: withHeaders(Success(200, 'Book updated successfully', Book, { ...EXAMPLE_BOOK, year: 1966 }, 'The updated book'), ETAG),
          400: invalidInput,
          404: noSuchBook,
          412: preconditionFailed,
          413: tooLarge,
          ...errors,
        },
      },
      config: { access: 'editor', invalidInputMessage: 'Invalid input' },
      onRequest: [resolveBookId, requireExistingBook],
    },
    async (request, reply) => {
      const { title, author, year } = request.body
      const book = await catalogue.update(
        request.principal,
        request.bookId,
        { title, author, year },
        acceptedRevisions(request.headers['if-match']),
      )
      reply.header('etag', etag(book))
      return envelope(200, 'Book updated successfully', book)
    },
  )

  books.delete(
    '/book/:id',
    {
      schema: {
        summary: 'Delete a book: it goes to the trash',
        description:
          'The book is gone from every list, search, count and export, and waits in the trash (`GET /books/trash`) until it is restored or purged. With `If-Match`, only while the book still has one of the given ETags.',
        operationId: 'deleteBook',
        tags: ['Books'],
        security,
        params: BookIdParams,
        headers: IfMatchHeader,
        response: {
          200: Success(200, 'Book deleted successfully', Type.Null(), null, 'The book is in the trash; its id is never given to another'),
          404: noSuchBook,
          412: preconditionFailed,
          ...errors,
        },
      },
      config: { access: 'editor' },
      onRequest: resolveBookId,
    },
    async (request) => {
      await catalogue.remove(request.principal, request.bookId, acceptedRevisions(request.headers['if-match']))
      return envelope(200, 'Book deleted successfully', null)
    },
  )
}
