import { STATUS_CODES } from '../status-codes.ts'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { envelope } from '../envelope.ts'
import { SECURITY_HEADERS } from '../plugins/security-headers.ts'

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

/** What an error is answered with. */
export interface ErrorAnswer {
  status: number
  message: string
  headers?: Record<string, string>
}

/** Sends `answer` as the envelope, with `data: null`. */
export function sendError(reply: FastifyReply, { status, message, headers }: ErrorAnswer) {
  if (headers) reply.headers(headers)
  return reply.code(status).send(envelope(status, message, null))
}

/** Answers framework errors raised before routing, such as a URL that cannot be decoded; no hook runs for these. */
export function frameworkErrors(err: FastifyError, _request: FastifyRequest, reply: FastifyReply) {
  const status = err.statusCode !== undefined && err.statusCode < 500 ? 400 : 500
  sendError(reply, { status, message: messageFor(status), headers: { ...SECURITY_HEADERS } })
}
