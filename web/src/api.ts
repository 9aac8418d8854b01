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

/** One refused row of an import, counted from 1 (the first book, not a header). */
export interface RowError {
  row: number
  message: string
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
    { body, contentType, ifMatch, signal }: { body?: BodyInit; contentType?: string; ifMatch?: string; signal?: AbortSignal } = {},
  ): Promise<Response> {
    const headers: Record<string, string> = { accept: 'application/json' }
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

    /** Stores every book of the file or none: a refusal's `data.errors` lists the wrong rows. */
    async importBooks(file: File): Promise<{ imported: number; ids: number[] }> {
      const response = await send('POST', '/books/import', { body: file, contentType: importType(file.name) })
      return ((await response.json()) as Envelope<{ imported: number; ids: number[] }>).data
    },

    /** The export file, read whole: a link to the route itself could not send the token. */
    async exportBooks(url: string): Promise<Blob> {
      return (await send('GET', url)).blob()
    },
  }
}

export type Api = ReturnType<typeof createApi>
