/** The service's public HTTP interface, as any client sees it: the envelope, the token, the headers. */
import type { BookFields } from './book-rules.ts'

export interface Book extends BookFields {
  id: number
}

/** What a token or key may do; each role may do all that the ones before it may (docs/api.md#roles). */
export type Role = 'reader' | 'editor' | 'admin'
export const ROLES: readonly Role[] = ['reader', 'editor', 'admin']

/** Whether `role` may do what `needed` may. The service decides; the page only leaves out what would be refused. */
export function atLeast(role: Role, needed: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(needed)
}

/** One change of a book's history (docs/api.md#history). */
export interface Change {
  seq: number
  book_id: number
  kind: 'created' | 'updated' | 'deleted' | 'restored' | 'purged'
  /** The username, or `key:<name>` for a key. */
  actor: string
  /** RFC 3339, UTC. */
  at: string
  /** The book after the change; as it was for `deleted`; null for `purged`. */
  book: Book | null
}

export interface TrashedBook extends Book {
  deleted_at: string
  deleted_by: string
}

export interface User {
  username: string
  role: Role
  /** Null for the configured user, who lives in the service's configuration. */
  created: string | null
}

export interface Key {
  id: number
  name: string
  role: Role
  owner: string
  created: string
  expires: string | null
  last_used: string | null
}

export interface NewKey {
  name: string
  role: Role
  expires_in_days?: number
}

/** A key just created: `key` itself is in this answer only, never again. */
export interface CreatedKey extends Omit<Key, 'owner' | 'last_used'> {
  key: string
}

/** One page of a list that the service pages by `Link: rel="next"`: the history, the trash. */
export interface Listing<T> {
  items: T[]
  next: string | undefined
}

/** How many changes or deleted books a page of the history or the trash asks for. */
export const LISTING_PAGE = 50

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
  /**
   * Called when the service refuses the token (it expired, its password or role changed, the
   * secret changed): resolves true once the person signed in again, and the request is sent again
   * with the new token; false leaves the refusal to the caller.
   */
  onTokenRefused: () => Promise<boolean>
}

/** A refusal of the token itself, not of a password given in a body (`Invalid credentials`) nor of a sign-in. */
function refusesToken(err: unknown, path: string): boolean {
  return err instanceof ApiError && err.status === 401 && !path.startsWith('/token') && err.message !== 'Invalid credentials'
}

export function createApi({ token, onTokenRefused }: ApiOptions) {
  /** Runs `attempt`, and once more after the person signed in again when the service refused the token. */
  async function signedIn<T>(path: string, attempt: () => Promise<T>): Promise<T> {
    try {
      return await attempt()
    } catch (err) {
      if (!refusesToken(err, path) || !(await onTokenRefused())) throw err
      return attempt()
    }
  }

  function send(
    method: string,
    path: string,
    options: { body?: BodyInit; contentType?: string; ifMatch?: string; signal?: AbortSignal } = {},
  ): Promise<Response> {
    return signedIn(path, () => sendOnce(method, path, options))
  }

  /** Sends a request and answers its response when it succeeded; a refusal becomes an `ApiError`. */
  async function sendOnce(
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
  function upload<T>(path: string, file: File, options: UploadOptions): Promise<T> {
    return signedIn(path, () => uploadOnce<T>(path, file, options))
  }

  function uploadOnce<T>(path: string, file: File, { progress, signal }: UploadOptions): Promise<T> {
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

  async function listing<T>(url: string): Promise<Listing<T>> {
    const { data, headers } = await call<T[]>('GET', url)
    return { items: data, next: nextLink(headers.get('link')) }
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

    async createBook(book: BookFields): Promise<{ book: Book; etag: string | undefined }> {
      const { data, headers } = await call<Book>('POST', '/book', { body: book })
      return { book: data, etag: headers.get('etag') ?? undefined }
    },

    /** Changes the members `changes` holds, the others keep their stored values; with `etag`, only while the book still has it (412 otherwise). */
    async updateBook(
      id: number,
      changes: Partial<BookFields>,
      etag: string | undefined,
    ): Promise<{ book: Book; etag: string | undefined }> {
      const { data, headers } = await call<Book>('PUT', `/book/${id}`, { body: changes, ifMatch: etag })
      return { book: data, etag: headers.get('etag') ?? undefined }
    },

    /** Moves the book to the trash, from which `restoreBook` brings it back. */
    async deleteBook(id: number): Promise<void> {
      await call<null>('DELETE', `/book/${id}`)
    },

    /** A page of the book's changes, newest first: the first page, or the one `next` names. */
    async history(id: number, next?: string, limit = LISTING_PAGE): Promise<Listing<Change>> {
      return listing<Change>(next ?? `/book/${id}/history?limit=${limit}`)
    },

    /** A page of the deleted books, latest deletion first. */
    async trash(next?: string): Promise<Listing<TrashedBook>> {
      return listing<TrashedBook>(next ?? `/books/trash?limit=${LISTING_PAGE}`)
    },

    async restoreBook(id: number): Promise<{ book: Book; etag: string | undefined }> {
      const { data, headers } = await call<Book>('POST', `/book/${id}/restore`)
      return { book: data, etag: headers.get('etag') ?? undefined }
    },

    /** Gives the book the values it had after its change `seq`; with `etag`, only while the book still has it. */
    async revertBook(id: number, seq: number, etag: string | undefined): Promise<{ book: Book; etag: string | undefined }> {
      const { data, headers } = await call<Book>('POST', `/book/${id}/revert`, { body: { seq }, ifMatch: etag })
      return { book: data, etag: headers.get('etag') ?? undefined }
    },

    /** Removes a book from the trash for good, with its history. */
    async purgeBook(id: number): Promise<void> {
      await call<null>('DELETE', `/books/trash/${id}`)
    },

    /** A fresh token for the one in use, until 12 hours after the password was given. */
    async refreshToken(): Promise<string> {
      return (await call<{ token: string }>('POST', '/token/refresh')).data.token
    },

    async users(): Promise<User[]> {
      return (await call<User[]>('GET', '/users')).data
    },

    async createUser(user: { username: string; password: string; role: Role }): Promise<User> {
      return (await call<User>('POST', '/users', { body: user })).data
    },

    async updateUser(username: string, changes: { role?: Role; password?: string }): Promise<User> {
      return (await call<User>('PUT', `/user/${encodeURIComponent(username)}`, { body: changes })).data
    },

    async deleteUser(username: string): Promise<void> {
      await call<null>('DELETE', `/user/${encodeURIComponent(username)}`)
    },

    /** The caller's keys; an admin's: everyone's. */
    async keys(): Promise<Key[]> {
      return (await call<Key[]>('GET', '/keys')).data
    },

    async createKey(key: NewKey): Promise<CreatedKey> {
      return (await call<CreatedKey>('POST', '/keys', { body: key })).data
    },

    async revokeKey(id: number): Promise<void> {
      await call<null>('DELETE', `/key/${id}`)
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

    /**
     * The changes after `seq`, as they happen: Server-Sent Events, read as they come from the
     * response's body. A reading in the background: a refused token is its caller's to wait out,
     * while the session is renewed or the person signs in again for what they do, not a reason to
     * ask for the password.
     */
    changeStream(seq: number, signal: AbortSignal): Promise<Response> {
      return sendOnce('GET', `/books/changes?since=${seq}`, { signal, accept: 'text/event-stream' })
    },

    /** The export file, read whole: a link to the route itself could not send the token. */
    async exportBooks(url: string): Promise<Blob> {
      return (await send('GET', url)).blob()
    },
  }
}

export type Api = ReturnType<typeof createApi>
