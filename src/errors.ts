/** An answer the service gives on purpose: its status and fixed message go out in the envelope. */
export class Refusal extends Error {
  readonly statusCode: number
  readonly headers: Record<string, string>

  constructor(statusCode: number, message: string, headers: Record<string, string> = {}) {
    super(message)
    this.name = 'Refusal'
    this.statusCode = statusCode
    this.headers = headers
  }
}
