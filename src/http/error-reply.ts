import type { FastifyReply } from 'fastify'
import { envelope } from './envelope.ts'

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
