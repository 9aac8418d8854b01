import { STATUS_CODES } from 'node:http'

/** The `message` of each status the service answers with on its own account. */
const MESSAGES: Record<number, string> = {
  400: 'Bad request',
  404: 'Not found',
  405: 'Method not allowed',
  408: 'Request timeout',
  413: 'Payload too large',
  417: 'Expectation failed',
  429: 'Too many requests',
  431: 'Request header fields too large',
  500: 'Internal server error',
  503: 'Service unavailable',
}

/** The envelope's message for `status`: the table's, else Node's reason phrase. */
export function messageFor(status: number): string {
  return MESSAGES[status] ?? STATUS_CODES[status] ?? MESSAGES[status >= 500 ? 500 : 400]!
}
