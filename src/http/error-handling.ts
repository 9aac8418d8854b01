import { STATUS_CODES } from 'node:http'
import type { Server, ServerResponse } from 'node:http'
import type { Duplex } from 'node:stream'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { StoreUnavailableError } from '../store/store.ts'
import { UnparsableBodyError } from './body-parser.ts'
import { envelope } from './envelope.ts'
import { HttpError } from './http-error.ts'
import { SECURITY_HEADERS } from './security-headers.ts'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The message of this route's 400 for a body or query that cannot be parsed. */
    invalidInputMessage?: string
  }
}

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
/** How long a refused CONNECT socket may stay open for the client to read the answer. */
const CONNECT_LINGER_MS = 2000
/** Seconds a client should wait before retrying when the store is unavailable. */
const RETRY_AFTER_SECONDS = '5'

interface Answer {
  status: number
  message: string
  headers?: Record<string, string>
}

function answerFor(err: FastifyError, request: FastifyRequest): Answer {
  if (err instanceof HttpError) return { status: err.statusCode, message: err.message, headers: err.headers }
  if (err instanceof StoreUnavailableError) {
    return { status: 503, message: MESSAGES[503]!, headers: { 'retry-after': RETRY_AFTER_SECONDS } }
  }
  const invalidInput = request.routeOptions.config.invalidInputMessage
  if (
    invalidInput !== undefined &&
    (err.validation !== undefined || err instanceof UnparsableBodyError || err.code === 'FST_ERR_CTP_INVALID_CONTENT_LENGTH')
  ) {
    return { status: 400, message: invalidInput }
  }
  const status = err.statusCode
  if (status !== undefined && status >= 400 && status < 500) {
    return { status, message: MESSAGES[status] ?? STATUS_CODES[status] ?? MESSAGES[400]! }
  }
  return { status: 500, message: MESSAGES[500]! }
}

function sendError(reply: FastifyReply, { status, message, headers }: Answer) {
  if (headers) reply.headers(headers)
  return reply.code(status).send(envelope(status, message, null))
}

/** Answers framework errors raised before routing, such as a URL that cannot be decoded; no hook runs for these. */
export function frameworkErrors(err: FastifyError, _request: FastifyRequest, reply: FastifyReply) {
  const status = err.statusCode !== undefined && err.statusCode < 500 ? 400 : 500
  sendError(reply, { status, message: MESSAGES[status]!, headers: { ...SECURITY_HEADERS } })
}

const rawSecurityHeaders = Object.entries(SECURITY_HEADERS)
  .map(([name, value]) => `${name}: ${value}\r\n`)
  .join('')

/** Writes the envelope straight to a socket that no Fastify reply owns; the caller closes the socket. */
function answerOnSocket(socket: Duplex, status: number): void {
  const body = JSON.stringify(envelope(status, MESSAGES[status]!, null))
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        rawSecurityHeaders +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    )
  }
}

/** Answers what the HTTP parser refuses (malformed requests, oversized headers, timeouts) with the envelope. */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return
  const status = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : err.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400
  answerOnSocket(socket, status)
  socket.destroy(err)
}

/**
 * Node answers an `Expect` other than `100-continue` with a bare 417 unless someone listens
 * for it; this listener gives that 417 the envelope and the headers of every other answer.
 */
export function refuseUnknownExpectations(server: Server): void {
  server.on('checkExpectation', (_request, response: ServerResponse) => {
    const body = JSON.stringify(envelope(417, MESSAGES[417]!, null))
    response.writeHead(417, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      ...SECURITY_HEADERS,
      connection: 'close',
    })
    response.end(body)
  })
}

/**
 * Node hands CONNECT to a `connect` listener and, when there is none, drops the socket
 * without a word. The service is no proxy: CONNECT names nothing it serves, so 400.
 */
export function refuseConnect(server: Server): void {
  server.on('connect', (_request, socket: Duplex) => {
    answerOnSocket(socket, 400)
    // The socket has left the HTTP server and its timeouts: read and drop what the client
    // still sends so its close is seen, and cut it if it does not close soon.
    socket.resume()
    socket.end()
    setTimeout(() => socket.destroy(), CONNECT_LINGER_MS).unref()
  })
}

/** Every error, including the framework's own, leaves as the envelope with nothing internal in it. */
export function answerErrorsWithEnvelope(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const answer = answerFor(err, request)
    if (answer.status >= 500) request.log.error({ err }, 'request failed')
    else if (err instanceof StoreUnavailableError) request.log.warn({ err }, 'store unavailable')
    return sendError(reply, answer)
  })
  app.setNotFoundHandler((_request, reply) => sendError(reply, { status: 404, message: MESSAGES[404]! }))
}

/**
 * Collects the routes as they are added; the returned plugin, registered after every
 * other route, answers the methods a path lacks with 405 and an `Allow` header.
 */
export function methodNotAllowed(app: FastifyInstance) {
  const methodsByUrl = new Map<string, Set<string>>()
  app.addHook('onRoute', (route) => {
    const methods = methodsByUrl.get(route.url) ?? new Set()
    for (const method of [route.method].flat()) methods.add(method)
    methodsByUrl.set(route.url, methods)
  })
  return async function answerMissingMethods(instance: FastifyInstance) {
    for (const [url, methods] of [...methodsByUrl]) {
      const allow = [...methods].sort().join(', ')
      const missing = instance.supportedMethods.filter((method) => !methods.has(method))
      instance.route({
        method: missing,
        url,
        // Not an operation of the interface: kept out of the OpenAPI document.
        schema: { hide: true },
        handler: (_request, reply) => sendError(reply, { status: 405, message: MESSAGES[405]!, headers: { allow } }),
      })
    }
  }
}
