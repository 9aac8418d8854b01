/**
 * Sends one request of the service's interface and reads its envelope: the address, the
 * `Authorization` header, an `Idempotency-Key` on the writes that take one, retries where a retry
 * cannot do a change twice, and every error answer as an `ApiError` (docs/api.md#statuses).
 */
import { ApiError, ConnectionError } from './errors.ts'
import type { Fetch, FetchHeaders, FetchResponse } from './fetch.ts'
import { sendWithProgress, type Progress, type UploadBody } from './upload.ts'

export type Query = Record<string, string | number | boolean | undefined>

export interface Request {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE'
  /** A path of the service, `/books`, or a `Link` it sent, which holds its own query. */
  path: string
  query?: Query | undefined
  /** A JSON body. */
  json?: unknown
  /** A file's body, sent as it is, with the type of its format. */
  upload?: { body: UploadBody; type: string | undefined; onProgress?: ((progress: Progress) => void) | undefined } | undefined
  headers?: Record<string, string | undefined> | undefined
  /** Whether the route takes an `Idempotency-Key`: one is made for the request, and kept for its retries. */
  idempotent?: boolean
  /** The `Authorization` header: by default the client's token or key; `null` sends none. */
  authorization?: string | null
  /** A request made in the background: a refused token is its caller's to hear, not `onRefused`'s. */
  background?: boolean | undefined
  signal?: AbortSignal | undefined
}

export interface TransportOptions {
  /** The service's address, `http://localhost:8080`; empty for the page's own origin. */
  url: string
  fetch: Fetch
  /** How many times a request that may safely be sent again is retried after a lost connection or a 503. */
  retries: number
  /** The longest `Retry-After`, in seconds, waited for before a retry; an answer asking for longer is the caller's at once. */
  longestWaitSeconds: number
  /** The `Authorization` header for a request, renewing the token first when it is about to expire. */
  authorization(): Promise<string | undefined>
  /** Hears that the service refused the token or key of a request; true sends the request once more, with the new one. */
  onRefused: ((error: ApiError) => Promise<boolean>) | undefined
}

const IN_PROGRESS = 'Request with this idempotency key is in progress'
/** The longest wait between two tries after a lost connection. */
const MAX_BACKOFF_MS = 10_000

/** A key of 128 random bits: `crypto.randomUUID` exists only on secure origins, `getRandomValues` everywhere. */
export function newIdempotencyKey(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (byte) => byte.toString(16).padStart(2, '0')).join('')
}

function retryAfterSeconds(response: FetchResponse): number | undefined {
  const header = response.headers.get('retry-after')?.trim()
  return header !== undefined && /^\d+$/.test(header) ? Number(header) : undefined
}

/** The error an answer that is not a success stands for: its envelope's status and message, or the HTTP status line. */
export async function errorOf(response: FetchResponse): Promise<ApiError> {
  const retryAfter = retryAfterSeconds(response)
  try {
    const envelope = (await response.json()) as { status?: unknown; message?: unknown; data?: unknown }
    if (typeof envelope.message === 'string') return new ApiError(response.status, envelope.message, envelope.data ?? null, retryAfter)
  } catch {
    // Not an envelope: a proxy's page, or a body cut short. The status still says what happened.
  }
  return new ApiError(response.status, response.statusText || `HTTP ${response.status}`, null, retryAfter)
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error)
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', abort)
      resolve()
    }, ms)
    const abort = () => {
      clearTimeout(timer)
      reject(signal!.reason as Error)
    }
    signal?.addEventListener('abort', abort, { once: true })
  })
}

export class Transport {
  readonly #options: TransportOptions

  constructor(options: TransportOptions) {
    this.#options = options
  }

  /** The full address of a path of the service, with `query`. */
  address(path: string, query: Query = {}): string {
    const search = new URLSearchParams()
    for (const [name, value] of Object.entries(query)) if (value !== undefined) search.set(name, String(value))
    const tail = search.size === 0 ? '' : `${path.includes('?') ? '&' : '?'}${search.toString()}`
    return `${this.#options.url.replace(/\/+$/, '')}${path}${tail}`
  }

  /** Sends `request`, retrying while that is safe, and answers the response of a success; an error answer throws an `ApiError`. */
  async send(request: Request): Promise<FetchResponse> {
    const { method, headers = {}, signal } = request
    const url = this.address(request.path, request.query)
    const idempotencyKey = request.idempotent ? newIdempotencyKey() : undefined
    // A retry must not do a change twice: reads, a PUT that does not depend on the state it
    // replaces, and writes with an Idempotency-Key may go again; a file read as a stream cannot.
    // ReadableStream is looked at only for an upload: in Node.js the global loads web streams.
    const repeatable =
      (method === 'GET' || (method === 'PUT' && headers['if-match'] === undefined) || idempotencyKey !== undefined) &&
      !(request.upload !== undefined && request.upload.body instanceof ReadableStream)
    let signedInAgain = false
    for (let attempt = 0; ; attempt++) {
      const authorization = request.authorization === undefined ? await this.#options.authorization() : (request.authorization ?? undefined)
      const sent: Record<string, string> = {}
      for (const [name, value] of Object.entries(headers)) if (value !== undefined) sent[name] = value
      if (authorization !== undefined) sent.authorization = authorization
      if (idempotencyKey !== undefined) sent['idempotency-key'] = idempotencyKey
      const mayRetry = repeatable && attempt < this.#options.retries
      let response: FetchResponse
      try {
        response = await this.#attempt(url, method, sent, request)
      } catch (err) {
        if (signal?.aborted) throw signal.reason
        if (!mayRetry) throw new ConnectionError(this.#origin(url), err)
        await sleep(backoff(attempt), signal)
        continue
      }
      if (response.ok) return response
      const error = await errorOf(response)
      // A refusal of the client's own credentials, not of a password in the body of a login, nor
      // of a token the caller sent itself (a renewal's), whose refusal is the caller's to hear.
      const refused =
        error.status === 401 &&
        request.authorization === undefined &&
        !request.background &&
        authorization !== undefined &&
        error.message !== 'Invalid credentials'
      if (refused && !signedInAgain && (await this.#options.onRefused?.(error))) {
        signedInAgain = true
        attempt--
        continue
      }
      const busy = error.status === 503 || (error.status === 409 && error.message === IN_PROGRESS && idempotencyKey !== undefined)
      if (!busy || !mayRetry || (error.retryAfter ?? 0) > this.#options.longestWaitSeconds) throw error
      await sleep(error.retryAfter === undefined ? backoff(attempt) : error.retryAfter * 1000, signal)
    }
  }

  /** Sends `request` and answers the `data` of its envelope, with the answer's headers. */
  async json<T>(request: Request): Promise<{ data: T; headers: FetchHeaders }> {
    const response = await this.send({ ...request, headers: { accept: 'application/json', ...request.headers } })
    let envelope: { data: T }
    try {
      envelope = (await response.json()) as { data: T }
    } catch (err) {
      if (request.signal?.aborted) throw request.signal.reason
      throw new ConnectionError(this.#origin(response.url || this.address(request.path)), err)
    }
    return { data: envelope.data, headers: response.headers }
  }

  #attempt(url: string, method: string, headers: Record<string, string>, request: Request): Promise<FetchResponse> {
    const { fetch } = this.#options
    if (request.upload !== undefined) {
      const { body, type, onProgress } = request.upload
      if (type !== undefined) headers['content-type'] = type
      return sendWithProgress(fetch, url, { method, headers, body, onProgress, signal: request.signal })
    }
    if (request.json !== undefined) headers['content-type'] = 'application/json'
    const body = request.json === undefined ? undefined : JSON.stringify(request.json)
    return fetch(url, { method, headers, body, signal: request.signal, cache: 'no-store' })
  }

  #origin(url: string): string {
    try {
      return new URL(url).origin
    } catch {
      return url
    }
  }
}

/** A quarter of a second, then doubling, with jitter so that many clients do not come back at once. */
function backoff(attempt: number): number {
  return Math.min(MAX_BACKOFF_MS, 250 * 2 ** attempt) * (0.5 + Math.random() / 2)
}
