import type { ServerOptions } from 'node:http'
import fp from 'fastify-plugin'
import { Refusal } from '../../errors.ts'

/**
 * Node answers an HTTP/1.1 request without `Host` itself, with a bare 400; turned off so that
 * the check below answers it with the envelope like every other refusal.
 */
export const REQUEST_LINE_SERVER_OPTIONS: ServerOptions = { requireHostHeader: false }

/** Whether a header's name is `Host`, in any case, without making a lower-case copy of every name. */
function isHost(name: string): boolean {
  return name.length === 4 && (name === 'Host' || name === 'host' || name.toLowerCase() === 'host')
}

function hostHeaders(rawHeaders: string[]): number {
  let count = 0
  for (let i = 0; i < rawHeaders.length; i += 2) if (isHost(rawHeaders[i]!)) count++
  return count
}

/**
 * Refuses what Node's parser lets through but HTTP/1.1 does not allow (RFC 9112 §3.2): a
 * request line without a version, which Node reads as HTTP/0.9 with no headers at all; an
 * HTTP/1.1 request without `Host` or with more than one; any request with several `Host`s,
 * which a proxy and this service could each read differently. The connection is closed after.
 */
export const refuseMalformedRequestLines = fp(
  async (app) => {
    app.addHook('onRequest', (request, _reply, done) => {
      const { httpVersionMajor, httpVersionMinor, rawHeaders } = request.raw
      const hosts = hostHeaders(rawHeaders)
      const malformed = httpVersionMajor !== 1 || hosts > 1 || (httpVersionMinor >= 1 && hosts === 0)
      done(malformed ? new Refusal(400, 'Bad request', { connection: 'close' }) : undefined)
    })
  },
  // First of all: nothing else should read a request that HTTP/1.1 does not allow.
  { name: 'request-line', fastify: '5.x', dependencies: ['request-tracing'] },
)
