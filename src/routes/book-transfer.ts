import { setImmediate as nextTurn } from 'node:timers/promises'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import { clientKey } from '../auth/login-limiter.ts'
import { csvExport, ndjsonExport } from '../formats/book-export.ts'
import { BookImport, IMPORT_LIMITS, type CheckedBatch, type ReadOptions } from '../formats/book-import.ts'
import { ImportTooLargeError, type RowError } from '../formats/import-errors.ts'
import { declaredBody } from '../formats/import-format.ts'
import { importOptionsOf } from '../formats/import-options.ts'
import { BodySpool, ImportSpool } from '../formats/import-spool.ts'
import { envelope } from '../http/envelope.ts'
import { clientGone } from '../http/wire/client-gone.ts'
import { Refusal } from '../errors.ts'
import type { Metrics } from '../observability/metrics.ts'
import { failures, IdempotencyKeyHeader, idempotencyFailures, ListQuery } from '../schemas.ts'
import type { Catalogue, ImportedBooks } from '../books/catalogue.ts'
import { InvalidInput } from '../books/errors.ts'
import type { BookReader } from '../store/store.ts'
import type { Book } from '../books/book.ts'
import { findQueryOf, parseBookQuery } from '../books/list-parameters.ts'
import { changeSeqOf, endsWith } from './book-list.ts'
import { exportAnswers, importAnswers, importBody, ImportQuery, UNSUPPORTED_MEDIA_TYPE, unsupportedCharset } from './book-transfer-docs.ts'

declare module 'fastify' {
  interface FastifyRequest {
    /** The Content-Type the import was sent with; the header itself is removed before routing reads it. */
    importContentType: string | undefined
  }
}

export interface BookTransferOptions {
  catalogue: Catalogue
  reader: BookReader
  metrics: Pick<Metrics, 'countImportedBooks'>
}

/**
 * Books read per query while an export streams out. Small, because what a page holds is alive
 * whenever csv-stringify's garbage sets off a young collection: V8 grows its young generation
 * with what survives those: pages of 1,000 books doubled the peak memory of a large CSV export
 * (docs/performance.md).
 */
const EXPORT_PAGE = 200

// Every parameter of `GET /books` but paging: an export is always the whole match.
const { limit: _limit, cursor: _cursor, ...findParameters } = ListQuery.properties

const ExportQuery = Type.Object({
  format: Type.Optional(Type.Union([Type.Literal('csv'), Type.Literal('ndjson')], { description: 'The file format; `csv` by default' })),
  ...findParameters,
})

const FILES = {
  csv: { type: 'text/csv; charset=utf-8', name: 'books.csv', write: csvExport },
  ndjson: { type: 'application/x-ndjson; charset=utf-8', name: 'books.ndjson', write: ndjsonExport },
} as const

/**
 * How long an import reads or stores batches before it lets other requests through. A turn
 * after every batch slowed SQLite's imports noticeably (docs/performance.md); a few milliseconds
 * is no wait for a reader.
 */
const IMPORT_TURN_MS = 5

const tooLarge = () => new Refusal(413, 'Payload too large', { connection: 'close' })

const security = [{ token: [] }]

async function* noBytes(): AsyncGenerator<Uint8Array> {}

/** Thrown after the last book of a file that is refused, into the transaction storing them: it rolls back what they stored. */
class FileRefused extends Error {}

/** The checked batches of `reader`, and then FileRefused if `refused` says so once it has read the whole file. */
async function* checkedInFull(reader: BookImport, refused: (reader: BookImport) => boolean): AsyncGenerator<CheckedBatch> {
  yield* reader.checkedBatches()
  if (refused(reader)) throw new FileRefused()
}

/**
 * Runs `work` with the connection's idle timeout off: a client that has sent its whole import
 * only waits while the service stores it, which may take longer than the timeout that cuts
 * clients that stop reading (docs/api.md). The timeout is back on for the answer.
 */
async function withClientWaiting<T>({ raw: { socket } }: FastifyRequest, work: () => Promise<T>): Promise<T> {
  // Without one (an injected request, a server without the timeout), there is nothing to suspend.
  const idle = socket.timeout
  if (idle === undefined) return work()
  socket.setTimeout(0)
  try {
    return await work()
  } finally {
    if (!socket.destroyed) socket.setTimeout(idle)
  }
}

/** 400 with the problems found. Reading may have stopped before the end of the body: the connection cannot be reused. */
function refuse(reply: FastifyReply, errors: RowError[]) {
  return reply
    .code(400)
    .header('connection', 'close')
    .send(envelope(400, 'Invalid input', { errors }))
}

/** `POST /books/import` and `GET /books/export`: books in and out by the file, in their own scope with their own body parser. */
export async function bookTransferRoutes(app: FastifyInstance, { catalogue, reader, metrics }: BookTransferOptions) {
  // The body reaches the handler as the request stream, unparsed and unbuffered, whatever its
  // type: the formats read it as it arrives, and the handler enforces the limits.
  app.removeAllContentTypeParsers()
  // Iterated without being destroyed when reading stops early (a limit, 100 errors): the socket
  // must live on to carry the answer.
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload.iterator({ destroyOnReturn: false })))
  const routes = app.withTypeProvider<TypeBoxTypeProvider>()
  routes.decorateRequest('importContentType', undefined)

  routes.post(
    '/books/import',
    {
      schema: {
        summary: 'Import books from a CSV, TSV, NDJSON or JSON file, all or nothing unless told otherwise',
        description:
          'Every row follows the rules of `POST /book`; when any row breaks them, nothing is stored and the answer lists the first 100 errors ' +
          '(`invalid=skip` stores the others). `duplicates=skip` leaves out the rows that repeat a stored book or an earlier row. ' +
          '`dry_run=true` checks the file, lists its duplicates, and stores nothing. The export files of Goodreads, ' +
          'The StoryGraph, LibraryThing, Calibre, Open Library and goodbooks-10k are read by their own column names. ' +
          'At most 100,000 books and 32 MiB.',
        operationId: 'importBooks',
        tags: ['Books'],
        security,
        headers: IdempotencyKeyHeader,
        querystring: ImportQuery,
        body: importBody,
        response: { ...importAnswers, ...idempotencyFailures, 401: failures.tokenRefused },
      },
      // The formats check the body, and the idempotency plugin the key; the schemas above only document them.
      validatorCompiler: () => () => true,
      bodyLimit: IMPORT_LIMITS.maxBytes,
      config: { access: 'editor', readsContentType: true, streamsBody: true, idempotent: true },
      // The header is read here and then removed, so that the framework's own media-type checks
      // never answer before this route can say which header to send.
      onRequest: (request, _reply, done) => {
        request.importContentType = request.headers['content-type']
        delete request.raw.headers['content-type']
        done()
      },
    },
    async (request, reply) => {
      const declared = declaredBody(request.importContentType)
      if ('unsupported' in declared) {
        throw new Refusal(415, declared.unsupported === 'type' ? UNSUPPORTED_MEDIA_TYPE : unsupportedCharset(declared.charset))
      }
      const asked = importOptionsOf(request.query)
      if (!asked.ok) return refuse(reply, [{ message: asked.message }])
      const { dryRun, skipInvalid, skipDuplicates, columns } = asked.options
      const length = Number(request.headers['content-length'])
      if (length > IMPORT_LIMITS.maxBytes) throw tooLarge()
      // An empty body reaches no parser: it reads as a stream with nothing in it.
      const body = (request.body as AsyncIterable<Uint8Array> | undefined) ?? noBytes()

      const checking: ReadOptions = { ...declared, columns, keepValid: dryRun || skipInvalid }
      const refused = (reader: BookImport) => reader.unreadable || (reader.errors.length > 0 && !dryRun && !skipInvalid)
      // Reading a body that has arrived, and storing, wait for nothing: other requests are let
      // through every few milliseconds.
      let turnStarted = performance.now()
      const between = async () => {
        if (performance.now() - turnStarted < IMPORT_TURN_MS) return
        await nextTurn()
        turnStarted = performance.now()
      }
      const answerFor = ({ ids, duplicates: repeated }: ImportedBooks) =>
        envelope(201, 'Books imported successfully', {
          imported: ids.length,
          ids,
          ...(skipInvalid && { errors: reader.errors }),
          ...(skipDuplicates && { duplicates: repeated }),
        })
      const claim = request.idempotency
      // Called once the whole body has arrived.
      const store = (books: AsyncIterable<CheckedBatch>) =>
        withClientWaiting(request, () =>
          catalogue.importBooks(
            request.principal,
            books,
            { skipDuplicates },
            between,
            claim && ((repositories, stored) => claim.record(repositories, { status: 201, headers: {}, payload: answerFor(stored) })),
          ),
        )
      let reader: BookImport
      let file: ImportSpool | BodySpool | undefined
      let imported: ImportedBooks
      try {
        if (catalogue.storesWhileReading && !dryRun) {
          // Received in full before the transaction opens, so that a slow client never holds the
          // store; then read and checked as the store takes the books, all rolled back if refused.
          file = await BodySpool.receive(body, IMPORT_LIMITS.maxBytes)
          reader = new BookImport(file.bytes(), checking)
          try {
            imported = await store(checkedInFull(reader, refused))
          } catch (err) {
            if (err instanceof FileRefused) return refuse(reply, reader.errors)
            throw err
          }
        } else {
          // Read and checked in full before the transaction opens: a slow client never holds the store.
          reader = new BookImport(body, checking)
          const spool = dryRun ? undefined : (file = await ImportSpool.create())
          // A dry run stores nothing, so it keeps nothing: it looks for duplicates as the rows come.
          const duplicates = dryRun ? catalogue.duplicatesOf() : undefined
          for await (const batch of reader.checkedBatches()) {
            await spool?.write(batch)
            await duplicates?.add(batch)
            await between()
          }
          await duplicates?.end()
          if (refused(reader)) return refuse(reply, reader.errors)
          if (spool === undefined) {
            const { importable, errors, preview } = reader
            const checked = { importable, errors, duplicates: duplicates?.listed ?? [], preview }
            return reply.code(200).send(envelope(200, 'Import checked successfully', checked))
          }
          imported = await store(spool.batches())
        }
      } catch (err) {
        if (err instanceof ImportTooLargeError) throw tooLarge()
        throw err
      } finally {
        await file?.remove()
      }
      metrics.countImportedBooks(imported.ids.length)
      return reply.code(201).send(answerFor(imported))
    },
  )

  routes.get(
    '/books/export',
    {
      schema: {
        summary: 'Export the books that match as a CSV or NDJSON file',
        description:
          'Every book that the filters and sort of `GET /books` select (all books in id order without them), streamed at constant memory; what it writes, `POST /books/import` reads back.',
        operationId: 'exportBooks',
        tags: ['Books'],
        security,
        querystring: ExportQuery,
        response: { ...exportAnswers, 401: failures.tokenRefused },
      },
      config: { access: 'reader', invalidInputMessage: 'Invalid input' },
    },
    async (request, reply) => {
      const { format, ...raw } = request.query
      const file = FILES[format ?? 'csv']
      // Paging has no meaning for a file, and a parameter ignored would look like a filter applied.
      if ('limit' in raw || 'cursor' in raw) throw new InvalidInput()
      const query = parseBookQuery(raw)
      // The first page is read before answering, so that an unreachable store is a 503, not a cut file.
      const pages = await reader.pages(
        { ...findQueryOf(query, undefined, EXPORT_PAGE), count: query.count },
        { whole: true, client: clientKey(request.ip), signal: clientGone(reply) },
      )
      if (pages.total !== undefined) reply.header('x-total-count', String(pages.total))
      changeSeqOf(reply, pages)
      async function* books(): AsyncGenerator<Book[]> {
        for await (const page of pages) yield page.map(({ book }) => book)
      }
      const body = file.write(books())
      endsWith(body, pages)
      return (reply as FastifyReply)
        .type(file.type)
        .header('content-disposition', `attachment; filename="${file.name}"`)
        .header('cache-control', 'no-store')
        .send(body)
    },
  )
}
