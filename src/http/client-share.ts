import type { Server } from 'node:http'
import type { Socket } from 'node:net'
import { PassThrough, type Readable } from 'node:stream'
import proxyAddr from '@fastify/proxy-addr'
import type { FastifyInstance } from 'fastify'
import { clientKey } from '../auth/login-limiter.ts'
import type { ConnectionLimits } from '../config.ts'
import { HttpError } from './http-error.ts'
import { InFlight } from './in-flight.ts'

/**
 * Closes on arrival the connections of an address that already holds `maxConnectionsPerAddress`,
 * so one client cannot take the slots of `maxConnections` that everyone shares. A whole IPv6 /64
 * counts as one address, as for the login limit. Proxies that `trustProxy` names are not capped:
 * every client behind them arrives from their address.
 */
export function capConnectionsPerAddress(server: Server, limits: ConnectionLimits, trustProxy: boolean | string[]): void {
  if (trustProxy === true) return
  const trusted = trustProxy === false ? () => false : proxyAddr.compile(trustProxy)
  const open = new Map<string, number>()
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress
    if (address === undefined || trusted(address, 0)) return
    const key = clientKey(address)
    const count = (open.get(key) ?? 0) + 1
    if (count > limits.maxConnectionsPerAddress) {
      socket.destroy()
      return
    }
    open.set(key, count)
    socket.once('close', () => {
      const left = open.get(key)! - 1
      if (left === 0) open.delete(key)
      else open.set(key, left)
    })
  })
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's handler reads the body as a stream, instead of the framework reading it whole first. */
    streamsBody?: boolean
  }
}

/** How often the bodies still arriving are checked against the minimum rate. */
const BODY_RATE_CHECK_MS = 250

/** A body still arriving: what has arrived of it, and how its read is failed. */
interface ArrivingBody {
  /** The stream its reader reads. */
  read: Readable
  /** Ends the read with `err`, which the reader then answers. */
  fail: (err: HttpError) => void
  started: number
  received: number
}

/**
 * A body that Fastify reads whole, through its own listeners on the request: an error emitted to
 * them ends the read and is answered. Destroying the request instead would close the connection
 * before any answer.
 */
function readWhole(payload: Readable): Pick<ArrivingBody, 'read' | 'fail'> {
  return { read: payload, fail: (err) => payload.emit('error', err) }
}

/**
 * A body that the route's handler reads as a stream, through a stream of its own: an error ends
 * the handler's read by destroying the stream it reads, which must not be the connection's.
 */
function readThroughOwnStream(payload: Readable): Pick<ArrivingBody, 'read' | 'fail'> {
  const read = payload.pipe(new PassThrough())
  return {
    read,
    fail: (err) => {
      payload.unpipe(read)
      read.destroy(err)
    },
  }
}

/**
 * A body must keep arriving at `minBodyBytesPerSecond` on average once `bodyRateGraceMs` have
 * passed, or the request gets 408 and its connection is closed: a client that trickles a large
 * body byte by byte would otherwise hold its connection for the whole request timeout.
 */
export function requireMinimumBodyRate(app: FastifyInstance, limits: ConnectionLimits): void {
  const { minBodyBytesPerSecond: rate, bodyRateGraceMs: grace } = limits
  if (rate === 0) return
  // One timer checks every body still arriving: a timer and a stream for each cost a small
  // request a fifth of its CPU.
  const arriving = new InFlight<ArrivingBody>()
  const check = () => {
    const now = performance.now()
    for (const entry of arriving.entries()) {
      const { read, fail, started, received } = entry.value!
      // Nobody reads a body refused (413) or no longer needed: nothing to time then.
      const reading = !read.destroyed && !read.readableEnded && read.listenerCount('error') > 0
      if (reading && received < (now - started - grace) * (rate / 1000)) {
        arriving.delete(entry)
        fail(new HttpError(408, 'Request timeout', { connection: 'close' }))
      }
    }
  }
  const timer = setInterval(check, Math.min(BODY_RATE_CHECK_MS, Math.max(grace, 1))).unref()
  app.addHook('onClose', (_app, done) => {
    clearInterval(timer)
    done()
  })

  app.addHook('preParsing', (request, _reply, payload, done) => {
    const { headers } = request.raw
    if (headers['transfer-encoding'] === undefined && Number(headers['content-length'] ?? 0) === 0) {
      done(null, payload)
      return
    }
    const source = payload as Readable
    const body: ArrivingBody = {
      ...(request.routeOptions.config.streamsBody === true ? readThroughOwnStream(source) : readWhole(source)),
      started: performance.now(),
      received: 0,
    }
    const entry = arriving.add(body)
    source.on('data', (chunk: Buffer) => (body.received += chunk.length))
    // A request closes once its body has ended, or once it was cut short.
    source.once('close', () => arriving.delete(entry))
    done(null, body.read)
  })
}
