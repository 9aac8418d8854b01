import { STATUS_CODES } from '../status-codes.ts'
import type { Server, ServerResponse } from 'node:http'
import type { Duplex } from 'node:stream'
import { envelope } from '../envelope.ts'
import { SECURITY_HEADERS } from '../plugins/security-headers.ts'
import { messageFor } from '../errors/answers.ts'

/** How long a refused CONNECT socket may stay open for the client to read the answer. */
const CONNECT_LINGER_MS = 2000

const rawSecurityHeaders = Object.entries(SECURITY_HEADERS)
  .map(([name, value]) => `${name}: ${value}\r\n`)
  .join('')

/** Writes the envelope straight to a socket that no Fastify reply owns; the caller closes the socket. */
function answerOnSocket(socket: Duplex, status: number): void {
  const body = JSON.stringify(envelope(status, messageFor(status), null))
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
    const body = JSON.stringify(envelope(417, messageFor(417), null))
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
