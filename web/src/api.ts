/** The service's public HTTP interface, as any client sees it: the envelope, the token, the headers. */
import type { BookFields } from './book-rules.ts'

export interface Book extends BookFields {
  id: number
}

/** The service answered with an error status. */
export class ApiError extends Error {
  readonly status: number
  /** Seconds, from `Retry-After`, when the service said how long to wait. */
  readonly retryAfter: number | undefined
  /** The envelope's `data`: null on errors, except the row errors of an import. */
  readonly data: unknown

  constructor(status: number, message: string, retryAfter: number | undefined, data: unknown = null) {
    super(message)
    this.status = status
    this.retryAfter = retryAfter
    this.data = data
  }
}

/** No answer came: the network is down or the service is unreachable. */
export class NetworkError extends Error {}

/** One problem of an import: a row counted from 1 (the first book, not a header), or none when the file as a whole is at fault. */
export interface RowError {
  row?: number
  message: string
}

/** A row that repeats a stored book (its `id`) or an earlier row of the file (`id` null). */
export interface DuplicateRow {
  row: number
  id: number | null
}

/** What a dry run of an import found; nothing was stored. */
export interface ImportCheck {
  /** Rows that pass the rules of a book, duplicates included. */
  importable: number
  errors: RowError[]
  duplicates: DuplicateRow[]
  /** The first books that pass, as they would be stored. */
  preview: BookFields[]
}

/** What the person chose to leave out of an import instead of storing nothing. */
export interface ImportChoices {
  skipInvalid: boolean
  skipDuplicates: boolean
}

export interface ImportedBooks {
  imported: number
  ids: number[]
  /** With `skipInvalid`: the rows left out. */
  errors?: RowError[]
  /** With `skipDuplicates`: the rows left out. */
  duplicates?: DuplicateRow[]
}

export interface UploadOptions {
  /** Hears the bytes sent so far of `total`, as the browser sends them; `sent === total` once the file is sent whole. */
  progress?: (sent: number, total: number) => void
  signal?: AbortSignal
}

/** The Content-Type of an import, by the file's extension; CSV unless it says otherwise. */
export function importType(fileName: string): string {
  if (/\.ndjson$/i.test(fileName)) return 'application/x-ndjson'
  if (/\.json$/i.test(fileName)) return 'application/json'
  return 'text/csv'
}

export interface BookPage {
  books: Book[]
  /** The `rel="next"` link, followed as it is. */
  next: string | undefined
  /** `X-Total-Count`: how many books match, all pages together. */
  total: number | undefined
}

interface Envelope<T> {
  status: number
  message: string
  data: T
}

const NEXT_LINK = /<([^>]*)>\s*;\s*rel="?next"?/

export function nextLink(header: string | null): string | undefined {
  return header === null ? undefined : NEXT_LINK.exec(header)?.[1]
}

function retryAfterSeconds(header: string | null): number | undefined {
  if (header === null || !/^\d+$/.test(header.trim())) return undefined
  return Number(header)
}

export interface ApiOptions {
  token: () => string | undefined
  /** Called when a book route refuses the token: it expired or the secret changed. */
  onTokenRefused: () => void
}

export function createApi({ token, onTokenRefused }: ApiOptions) {
  /** Sends a request and answers its response when it succeeded; a refusal becomes an `ApiError`. */
  async function send(
    method: string,
    path: string,
    {
      body,
      contentType,
      ifMatch,
      signal,
      accept = 'application/json',
    }: { body?: BodyInit; contentType?: string; ifMatch?: string; signal?: AbortSignal; accept?: string } = {},
  ): Promise<Response> {
    const headers: Record<string, string> = { accept }
    const current = token()
    if (current !== undefined && path !== '/token') headers.authorization = current
    if (contentType !== undefined) headers['content-type'] = contentType
    if (ifMatch !== undefined) headers['if-match'] = ifMatch
    let response: Response
    try {
      response = await fetch(path, { method, headers, body, signal, cache: 'no-store' })
    } catch (err) {
      if (signal?.aborted) throw err
      throw new NetworkError('The service could not be reached.')
    }
    if (response.ok) return response
    let envelope: Envelope<unknown>
    try {
      envelope = (await response.json()) as Envelope<unknown>
    } catch (err) {
      if (signal?.aborted) throw err
      throw new ApiError(response.status, response.statusText, undefined)
    }
    if (response.status === 401 && path !== '/token') onTokenRefused()
    throw new ApiError(response.status, envelope.message, retryAfterSeconds(response.headers.get('retry-after')), envelope.data)
  }

  async function call<T>(
    method: string,
    path: string,
    { body, ifMatch, signal }: { body?: unknown; ifMatch?: string; signal?: AbortSignal } = {},
  ): Promise<{ data: T; headers: Headers }> {
    const json = body === undefined ? {} : { body: JSON.stringify(body), contentType: 'application/json' }
    const response = await send(method, path, { ...json, ifMatch, signal })
    try {
      return { data: ((await response.json()) as Envelope<T>).data, headers: response.headers }
    } catch (err) {
      if (signal?.aborted) throw err
      throw new ApiError(response.status, 'The service sent an answer this page cannot read.', undefined)
    }
  }

  /**
   * POSTs a file for the import with XMLHttpRequest, the one browser API that reports how much of
   * a body is sent (`fetch` does not); answers and refusals as `call` gives them.
   */
  function upload<T>(path: string, file: File, { progress, signal }: UploadOptions): Promise<T> {
    const cancelled = () => (signal?.reason instanceof Error ? signal.reason : new DOMException('The upload was cancelled.', 'AbortError'))
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(cancelled())
      const request = new XMLHttpRequest()
      request.open('POST', path)
      request.setRequestHeader('accept', 'application/json')
      request.setRequestHeader('content-type', importType(file.name))
      const current = token()
      if (current !== undefined) request.setRequestHeader('authorization', current)
      if (progress) {
        request.upload.addEventListener('progress', (event) => progress(event.loaded, event.lengthComputable ? event.total : file.size))
        request.upload.addEventListener('load', () => progress(file.size, file.size))
      }
      const abort = () => request.abort()
      signal?.addEventListener('abort', abort, { once: true })
      request.addEventListener('loadend', () => signal?.removeEventListener('abort', abort))
      request.addEventListener('abort', () => reject(cancelled()))
      request.addEventListener('error', () => reject(new NetworkError('The service could not be reached.')))
      request.addEventListener('load', () => {
        let envelope: Envelope<unknown> | undefined
        try {
          envelope = JSON.parse(request.responseText) as Envelope<unknown>
        } catch {
          envelope = undefined
        }
        if (request.status >= 200 && request.status < 300) {
          if (envelope === undefined) reject(new ApiError(request.status, 'The service sent an answer this page cannot read.', undefined))
          else resolve(envelope.data as T)
          return
        }
        if (request.status === 401) onTokenRefused()
        reject(
          new ApiError(
            request.status,
            envelope?.message ?? request.statusText,
            retryAfterSeconds(request.getResponseHeader('retry-after')),
            envelope?.data ?? null,
          ),
        )
      })
      request.send(file)
    })
  }

  return {
    async signIn(username: string, password: string): Promise<string> {
      const { data } = await call<{ token: string }>('POST', '/token', { body: { username, password } })
      return data.token
    },

    async findBooks(url: string, signal?: AbortSignal): Promise<BookPage> {
      const { data, headers } = await call<Book[]>('GET', url, { signal })
      const total = headers.get('x-total-count')
      return { books: data, next: nextLink(headers.get('link')), total: total === null ? undefined : Number(total) }
    },

    async getBook(id: number): Promise<{ book: Book; etag: string | undefined }> {
      const { data, headers } = await call<Book>('GET', `/book/${id}`)
      return { book: data, etag: headers.get('etag') ?? undefined }
    },

    async createBook(book: BookFields): Promise<Book> {
      return (await call<Book>('POST', '/book', { body: book })).data
    },

    async updateBook(id: number, book: BookFields, etag: string | undefined): Promise<{ book: Book; etag: string | undefined }> {
      const { data, headers } = await call<Book>('PUT', `/book/${id}`, { body: book, ifMatch: etag })
      return { book: data, etag: headers.get('etag') ?? undefined }
    },

    async deleteBook(id: number): Promise<void> {
      await call<null>('DELETE', `/book/${id}`)
    },

    /** Checks the file and stores nothing: what an import would store and leave out. A file that cannot be read at all is refused. */
    checkImport(file: File, options: UploadOptions = {}): Promise<ImportCheck> {
      return upload<ImportCheck>('/books/import?dry_run=true', file, options)
    },

    /** Stores the books of the file, all or nothing unless `choices` leave rows out: a refusal's `data.errors` lists the wrong rows. */
    importBooks(file: File, choices: ImportChoices, options: UploadOptions = {}): Promise<ImportedBooks> {
      const query = new URLSearchParams()
      if (choices.skipInvalid) query.set('invalid', 'skip')
      if (choices.skipDuplicates) query.set('duplicates', 'skip')
      const search = query.size > 0 ? `?${query.toString()}` : ''
      return upload<ImportedBooks>(`/books/import${search}`, file, options)
    },

    /** The seq of the newest change of the catalogue: the changes after it are still to come. */
    async newestChange(signal?: AbortSignal): Promise<number> {
      const { headers } = await call<unknown[]>('GET', '/books/changes?since=latest', { signal })
      return Number(/[?&]since=(\d+)/.exec(nextLink(headers.get('link')) ?? '')?.[1] ?? 0)
    },

    /** The changes after `seq`, as they happen: Server-Sent Events, read as they come from the response's body. */
    changeStream(seq: number, signal: AbortSignal): Promise<Response> {
      return send('GET', `/books/changes?since=${seq}`, { signal, accept: 'text/event-stream' })
    },

    /** The export file, read whole: a link to the route itself could not send the token. */
    async exportBooks(url: string): Promise<Blob> {
      return (await send('GET', url)).blob()
    },
  }
}

export type Api = ReturnType<typeof createApi>
