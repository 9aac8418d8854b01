import type { Server } from 'node:http'
import type { Socket } from 'node:net'
import { PassThrough, type Readable } from 'node:stream'
import proxyAddr from '@fastify/proxy-addr'
import type { FastifyInstance } from 'fastify'
import { clientKey } from '../auth/login-limiter.ts'
import type { ConnectionLimits } from '../config.ts'
import { HttpError } from './http-error.ts'

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

/**
 * A body must keep arriving at `minBodyBytesPerSecond` on average once `bodyRateGraceMs` have
 * passed, or the request gets 408 and its connection is closed: a client that trickles a large
 * body byte by byte would otherwise hold its connection for the whole request timeout.
 */
export function requireMinimumBodyRate(app: FastifyInstance, limits: ConnectionLimits): void {
  const { minBodyBytesPerSecond: rate, bodyRateGraceMs: grace } = limits
  if (rate === 0) return
  app.addHook('preParsing', (request, reply, payload, done) => {
    const { headers } = request.raw
    if (headers['transfer-encoding'] === undefined && Number(headers['content-length'] ?? 0) === 0) {
      done(null, payload)
      return
    }
    const started = performance.now()
    let received = 0
    const measured = new PassThrough()
    let timer: NodeJS.Timeout | undefined
    const check = () => {
      // Fastify stops reading a body it refuses (413) or no longer needs: nothing to time then.
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
    done(null, measured)
  })
}
