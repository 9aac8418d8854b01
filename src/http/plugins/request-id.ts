import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

export const REQUEST_ID_HEADER = 'x-request-id'
/** Long enough for a UUID or a trace id; short and plain enough to be safe in a log line. */
const ACCEPTED_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** The client's `X-Request-Id` when it is short and plain, otherwise a fresh UUID. */
export function requestIdFor(request: IncomingMessage): string {
  const given = request.headers[REQUEST_ID_HEADER]
  return typeof given === 'string' && ACCEPTED_ID.test(given) ? given : randomUUID()
}
