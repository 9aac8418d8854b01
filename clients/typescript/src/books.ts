/** The book routes: find, read, change, history, trash, import and export (docs/api.md). */
import type { FetchHeaders } from './fetch.ts'
import { call } from './operations.ts'
import { pageOf, Paged, type Page } from './pages.ts'
import { checkImport, exportBooks, importBooks, type ImportOptions } from './transfer.ts'
import type { Transport } from './transport.ts'
import type {
  Book,
  BookChanges,
  Change,
  ExportQuery,
  FindQuery,
  ImportCheck,
  ImportResult,
  NewBook,
  PageQuery,
  TrashedBook,
} from './types.ts'
import type { UploadBody } from './upload.ts'

/**
 * A book as an answer carries it: with the `ETag` of that state of the book, for a change that
 * must not overwrite another's (`ifMatch`, docs/api.md#changing-a-book-safely).
 */
export interface BookVersion {
  book: Book
  etag: string | undefined
}

function versionOf({ data, headers }: { data: Book; headers: FetchHeaders }): BookVersion {
  return { book: data, etag: headers.get('etag') ?? undefined }
}

/** The most books one page holds: following pages of this size reads a list with the fewest requests. */
const LARGEST_PAGE = 1000

export interface Signal {
  signal?: AbortSignal | undefined
}

export interface Changing extends Signal {
  ifMatch?: string | undefined
}

export class Books {
  readonly #transport: Transport

  constructor(transport: Transport) {
    this.#transport = transport
  }

  /**
   * Every book `query` finds, page after page, `query.limit` books to a page (1000 by default):
   * `for await (const book of catalogue.books.find({ author: 'king' }))`.
   */
  find(query: FindQuery = {}, { signal }: Signal = {}): Paged<Book> {
    return this.#paged(() => call(this.#transport, 'get', '/books', { query: { limit: LARGEST_PAGE, ...query }, signal }), signal)
  }

  /** One page: of `query`, or at a `next` link of a page before, followed as it is. */
  async page(query: PageQuery | string, { signal }: Signal = {}): Promise<Page<Book>> {
    const { data, headers } =
      typeof query === 'string'
        ? await this.#transport.json<Book[]>({ method: 'GET', path: query, signal })
        : await call(this.#transport, 'get', '/books', { query, signal })
    return pageOf(data, headers)
  }

  /** How many books `query` finds (`X-Total-Count`). */
  async count(query: FindQuery = {}, { signal }: Signal = {}): Promise<number> {
    const { total } = await this.page({ ...query, limit: 1, count: true }, { signal })
    return total ?? 0
  }

  async get(id: number, { signal }: Signal = {}): Promise<BookVersion> {
    return versionOf(await call(this.#transport, 'get', '/book/{id}', { params: { id }, signal }))
  }

  /** Stores a new book; retried after a lost answer, it is stored once (`Idempotency-Key`). */
  async create(book: NewBook, { signal }: Signal = {}): Promise<BookVersion> {
    return versionOf(await call(this.#transport, 'post', '/book', { json: book, idempotent: true, signal }))
  }

  /** Changes the members `changes` has; with `ifMatch`, only while the book still has that `ETag` (else `ApiError` 412). */
  async update(id: number, changes: BookChanges, { ifMatch, signal }: Changing = {}): Promise<BookVersion> {
    return versionOf(
      await call(this.#transport, 'put', '/book/{id}', { params: { id }, json: changes, headers: { 'if-match': ifMatch }, signal }),
    )
  }

  /** Moves the book to the trash, from which `restore` takes it back. */
  async delete(id: number, { ifMatch, signal }: Changing = {}): Promise<void> {
    await call(this.#transport, 'delete', '/book/{id}', { params: { id }, headers: { 'if-match': ifMatch }, signal })
  }

  async restore(id: number, { signal }: Signal = {}): Promise<BookVersion> {
    return versionOf(await call(this.#transport, 'post', '/book/{id}/restore', { params: { id }, signal }))
  }

  /** Gives the book the values it had after its change `seq`, recorded as a change of its own. */
  async revert(id: number, seq: number, { ifMatch, signal }: Changing = {}): Promise<BookVersion> {
    return versionOf(
      await call(this.#transport, 'post', '/book/{id}/revert', { params: { id }, json: { seq }, headers: { 'if-match': ifMatch }, signal }),
    )
  }

  /** The book's changes, newest first. */
  history(id: number, { limit, signal }: Signal & { limit?: number | undefined } = {}): Paged<Change> {
    return this.#paged(() => call(this.#transport, 'get', '/book/{id}/history', { params: { id }, query: { limit }, signal }), signal)
  }

  /** Deleted books, latest deletion first. */
  trash({ limit, signal }: Signal & { limit?: number | undefined } = {}): Paged<TrashedBook> {
    return this.#paged(() => call(this.#transport, 'get', '/books/trash', { query: { limit }, signal }), signal)
  }

  /** Removes a book from the trash for good, with its history (admins only). */
  async purge(id: number, { signal }: Signal = {}): Promise<void> {
    await call(this.#transport, 'delete', '/books/trash/{id}', { params: { id }, signal })
  }

  /** A list whose first page `first` reads, and whose next pages are at the links each page gives. */
  #paged<T>(first: () => Promise<{ data: T[]; headers: FetchHeaders }>, signal: AbortSignal | undefined): Paged<T> {
    const read = async (answer: Promise<{ data: T[]; headers: FetchHeaders }>) => {
      const { data, headers } = await answer
      return pageOf(data, headers)
    }
    return new Paged(
      () => read(first()),
      (link) => read(this.#transport.json<T[]>({ method: 'GET', path: link, signal })),
    )
  }

  /** Stores the books of a file, all or nothing unless `options` skip rows. A refusal's `ApiError.rowErrors` lists the wrong rows. */
  import(body: UploadBody, options: ImportOptions = {}): Promise<ImportResult> {
    return importBooks(this.#transport, body, options)
  }

  /** Checks a file and stores nothing (`dry_run=true`): how many books it holds, its wrong rows and duplicates, the first books. */
  checkImport(body: UploadBody, options: ImportOptions = {}): Promise<ImportCheck> {
    return checkImport(this.#transport, body, options)
  }

  /** Every book `query` finds, as a file in `query.format` (CSV by default), streamed as it is read. */
  export(query: ExportQuery = {}, { signal }: Signal = {}): Promise<ReadableStream<Uint8Array>> {
    return exportBooks(this.#transport, query, signal)
  }
}
