/** The service answered with an error status: its envelope's `status` and `message` (docs/api.md#statuses). */
export class ApiError extends Error {
  override readonly name = 'ApiError'
  readonly status: number
  /** The envelope's `data`: `null`, except for the refused rows of an import (`{ errors: [...] }`). */
  readonly data: unknown
  /** Seconds to wait, when the answer had `Retry-After` (429, 503). */
  readonly retryAfter: number | undefined

  constructor(status: number, message: string, data: unknown = null, retryAfter?: number) {
    super(message)
    this.status = status
    this.data = data
    this.retryAfter = retryAfter
  }

  /** The rows an import refused, as its answer listed them; empty for any other error. */
  get rowErrors(): { row?: number; message: string }[] {
    const errors = (this.data as { errors?: unknown } | null)?.errors
    return Array.isArray(errors) ? (errors as { row?: number; message: string }[]) : []
  }
}

/** No answer came: the service could not be reached, or the connection broke before the answer. */
export class ConnectionError extends Error {
  override readonly name = 'ConnectionError'

  constructor(url: string, cause: unknown) {
    const reason = cause instanceof Error ? ((cause.cause as Error | undefined)?.message ?? cause.message) : String(cause)
    super(`Cannot reach ${url}: ${reason}`, { cause })
  }
}
