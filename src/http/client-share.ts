import type { Server } from 'node:http'
import type { Socket } from 'node:net'
import { PassThrough, type Readable } from 'node:stream'
import proxyAddr from '@fastify/proxy-addr'
import type { FastifyInstance, FastifyReply, RequestPayload } from 'fastify'
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

/** A body still arriving, and what has arrived of it. */
interface ArrivingBody {
  payload: Readable
  started: number
  received: number
}

/**
 * A body must keep arriving at `minBodyBytesPerSecond` on average once `bodyRateGraceMs` have
 * passed, or the request gets 408 and its connection is closed: a client that trickles a large
 * body byte by byte would otherwise hold its connection for the whole request timeout.
 */
export function requireMinimumBodyRate(app: FastifyInstance, limits: ConnectionLimits): void {
  const { minBodyBytesPerSecond: rate, bodyRateGraceMs: grace } = limits
  if (rate === 0) return
  // One timer checks every body the framework reads whole: a timer and a stream of their own cost
  // each small request a fifth of its CPU.
  const arriving = new InFlight<ArrivingBody>()
  const check = () => {
    const now = performance.now()
    for (const entry of arriving.entries()) {
      const { payload, started, received } = entry.value!
      // Fastify reads the body through its listeners; once it has stopped (a 413, or no longer
      // needed), there is nothing to time. An error emitted to them ends the read and is answered;
      // destroying the request instead would close the connection before any answer.
      if (payload.listenerCount('error') > 0 && received < (now - started - grace) * (rate / 1000)) {
        arriving.delete(entry)
        payload.emit('error', new HttpError(408, 'Request timeout', { connection: 'close' }))
      }
    }
  }
  const timer = setInterval(check, Math.min(BODY_RATE_CHECK_MS, Math.max(grace, 1))).unref()
  app.addHook('onClose', (_app, done) => {
    clearInterval(timer)
    done()
  })

  app.addHook('preParsing', (request, reply, payload, done) => {
    const { headers } = request.raw
    if (headers['transfer-encoding'] === undefined && Number(headers['content-length'] ?? 0) === 0) {
      done(null, payload)
      return
    }
    if (request.routeOptions.config.streamsBody === true) {
      done(null, measuredStream(payload, reply, rate, grace))
      return
    }
    const body: ArrivingBody = { payload, started: performance.now(), received: 0 }
    const entry = arriving.add(body)
    payload.on('data', (chunk: Buffer) => (body.received += chunk.length))
    // A request closes once its body has ended, or once it was cut short.
    payload.once('close', () => arriving.delete(entry))
    done(null, payload)
  })
}

/**
 * The body of a route that reads it as a stream, through a stream of its own: an error would end
 * the handler's read by destroying the stream it reads, which must not be the connection's.
 */
function measuredStream(payload: RequestPayload, reply: FastifyReply, rate: number, grace: number): PassThrough {
  const started = performance.now()
  let received = 0
  const measured = new PassThrough()
  let timer: NodeJS.Timeout | undefined
  const check = () => {
    // The handler stops reading a body it refuses (413) or no longer needs: nothing to time then.
    if (measured.destroyed || measured.readableEnded || measured.listenerCount('error') === 0) return
    const due = (performance.now() - started - grace) * (rate / 1000)
    if (received < due) {
      ;(payload as Readable).unpipe(measured)
      measured.destroy(new HttpError(408, 'Request timeout', { connection: 'close' }))
      return
    }
    // The next moment the body would fall behind, if nothing more arrives.
    timer = setTimeout(check, Math.max(50, started + grace + (received * 1000) / rate - performance.now()))
  }
  timer = setTimeout(check, grace)
  const stop = () => clearTimeout(timer)
  payload.on('data', (chunk: Buffer) => (received += chunk.length))
  payload.once('end', stop)
  payload.once('close', stop)
  measured.once('close', stop)
  reply.raw.once('close', stop)
  payload.pipe(measured)
  return measured
}
