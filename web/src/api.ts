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

  constructor(status: number, message: string, retryAfter: number | undefined) {
    super(message)
    this.status = status
    this.retryAfter = retryAfter
  }
}

/** No answer came: the network is down or the service is unreachable. */
export class NetworkError extends Error {}

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
  token(): string | undefined
  /** Called when a book route refuses the token: it expired or the secret changed. */
  onTokenRefused(): void
}

export function createApi({ token, onTokenRefused }: ApiOptions) {
  async function call<T>(
    method: string,
    path: string,
    { body, ifMatch, signal }: { body?: unknown; ifMatch?: string; signal?: AbortSignal } = {},
  ): Promise<{ data: T; headers: Headers }> {
    const headers: Record<string, string> = { accept: 'application/json' }
    const current = token()
    if (current !== undefined && path !== '/token') headers.authorization = current
    if (body !== undefined) headers['content-type'] = 'application/json'
    if (ifMatch !== undefined) headers['if-match'] = ifMatch
    let response: Response
    try {
      response = await fetch(path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
        cache: 'no-store',
      })
    } catch (err) {
      if (signal?.aborted) throw err
      throw new NetworkError('The service could not be reached.')
    }
    let envelope: Envelope<T>
    try {
      envelope = (await response.json()) as Envelope<T>
    } catch (err) {
      if (signal?.aborted) throw err
      throw new ApiError(
        response.status,
        response.ok ? 'The service sent an answer this page cannot read.' : response.statusText,
        undefined,
      )
    }
    if (!response.ok) {
      if (response.status === 401 && path !== '/token') onTokenRefused()
      throw new ApiError(response.status, envelope.message, retryAfterSeconds(response.headers.get('retry-after')))
    }
    return { data: envelope.data, headers: response.headers }
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
  }
}

export type Api = ReturnType<typeof createApi>
