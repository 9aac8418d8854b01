import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { sendError } from './error-reply.ts'
import { SECURITY_HEADERS } from './security-headers.ts'
import { messageFor } from './status-messages.ts'

/** Answers framework errors raised before routing, such as a URL that cannot be decoded; no hook runs for these. */
export function frameworkErrors(err: FastifyError, _request: FastifyRequest, reply: FastifyReply) {
  const status = err.statusCode !== undefined && err.statusCode < 500 ? 400 : 500
  sendError(reply, { status, message: messageFor(status), headers: { ...SECURITY_HEADERS } })
}
