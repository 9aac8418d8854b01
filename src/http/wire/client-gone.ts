import type { FastifyReply } from 'fastify'

/**
 * Aborted when the client's connection closes before its answer has gone out: what the answer
 * would read stops, and waits for no turn (see `signal` of the store's read options). Once the
 * answer has begun, a streamed body ends its read itself when the connection closes.
 */
export function clientGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController()
  const response = reply.raw
  response.once('close', () => {
    if (!response.headersSent) controller.abort()
  })
  return controller.signal
}
