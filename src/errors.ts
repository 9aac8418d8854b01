/** An answer the service gives on purpose: its status and fixed message go out in the envelope. */
export class Refusal extends Error {
  readonly statusCode: number
  readonly headers: Record<string, string>

  constructor(statusCode: number, message: string, headers: Record<string, string> = {}) {
    // A 4xx answers what the client asked: where in the service it was made tells a reader of the
    // log nothing, and capturing that stack cost a 404 up to a tenth of its CPU (docs/performance.md).
    const limit = Error.stackTraceLimit
    if (statusCode < 500) Error.stackTraceLimit = 0
    super(message)
    Error.stackTraceLimit = limit
    this.name = 'Refusal'
    this.statusCode = statusCode
    this.headers = headers
  }
}
