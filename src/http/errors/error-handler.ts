import type { FastifyError, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { UnparsableBodyError } from '../plugins/body-parser.ts'
import { type ErrorAnswer, messageFor, sendError } from './answers.ts'
import { Refusal } from '../../errors.ts'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The message of this route's 400 for a body or query that cannot be parsed. */
    invalidInputMessage?: string
  }
}

/** Headers an error carries for its answer, such as the store's `Retry-After`. */
function headersOf(err: FastifyError): Record<string, string> | undefined {
  const { headers } = err as { headers?: unknown }
  return typeof headers === 'object' && headers !== null ? (headers as Record<string, string>) : undefined
}

/**
 * An error's answer comes from the error itself: Refusal says its status and message; any
 * other error that carries a 4xx status, or 503 (unavailable for now, as the store says), gets
 * that status with the table's message and the headers it carries; everything else is a 500,
 * with nothing internal in it.
 */
function answerFor(err: FastifyError, request: FastifyRequest): ErrorAnswer {
  if (err instanceof Refusal) return { status: err.statusCode, message: err.message, headers: err.headers }
  const invalidInput = request.routeOptions.config.invalidInputMessage
  if (
    invalidInput !== undefined &&
    (err.validation !== undefined || err instanceof UnparsableBodyError || err.code === 'FST_ERR_CTP_INVALID_CONTENT_LENGTH')
  ) {
    return { status: 400, message: invalidInput }
  }
  const status = err.statusCode
  if (status !== undefined && ((status >= 400 && status < 500) || status === 503)) {
    return { status, message: messageFor(status), headers: headersOf(err) }
  }
  return { status: 500, message: messageFor(500) }
}

/**
 * Every error, including the framework's own, leaves as the envelope with nothing internal in it,
 * with the request id and the security headers of every other answer.
 */
export const errorEnvelope = fp(
  async (app) => {
    app.setErrorHandler((err: FastifyError, request, reply) => {
      const answer = answerFor(err, request)
      // A store's read stopped because its client went reaches no one, and says nothing of the service.
      if (answer.status === 503 && reply.raw.destroyed) request.log.info({ err }, 'request ended: its client went')
      else if (answer.status >= 500) request.log.error({ err }, 'request failed')
      // Refused as it arrived (by a hook, before its body): the answer waits for the end of the
      // event loop's turn, so that a burst of such answers is written together, as answers that
      // waited for the store are (docs/performance.md).
      if (request.raw.complete === false) {
        setImmediate(() => void sendError(reply, answer))
        return
      }
      return sendError(reply, answer)
    })
  },
  { name: 'error-envelope', dependencies: ['request-tracing', 'security-headers'] },
)
