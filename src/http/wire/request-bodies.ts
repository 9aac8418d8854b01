import type { IncomingMessage } from 'node:http'
import { Readable } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { ConnectionLimits } from '../../config.ts'
import { Refusal } from '../../errors.ts'
import { UnderWay } from './under-way.ts'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's handler reads the body as a stream, instead of the framework reading it whole first. */
    streamsBody?: boolean
  }
}

/** How often the bodies still arriving are checked against their deadlines. */
const CHECK_EVERY_MS = 250
/** What a body holds in memory ahead of its reader before the connection is paused. */
const AHEAD_BYTES = 64 * 1024

/**
 * A request's body as the route reads it. Its failures, a body that falls behind or a client that
 * leaves, are told only to a reader that listens: with nobody reading (the route answered without
 * reading the body, or has not started reading yet), the stream ends quietly, and the reason waits
 * in `errored` for a reader that comes later. So no failure of a body can ever be an unhandled
 * `'error'` event, whatever path the request took; Node's own request stream works the same way.
 */
export class RequestBody extends Readable {
  readonly #source: IncomingMessage
  /** Bytes that have arrived. */
  received = 0

  constructor(source: IncomingMessage) {
    super({ highWaterMark: AHEAD_BYTES })
    this.#source = source
    source.on('data', (chunk: Buffer) => {
      if (this.destroyed) return
      this.received += chunk.length
      if (!this.push(chunk)) source.pause()
    })
    source.once('end', () => this.push(null))
    // A client that leaves before its body is complete.
    source.once('close', () => {
      if (!source.complete) this.destroy(new Refusal(400, 'Bad request', { connection: 'close' }))
    })
  }

  override _read(): void {
    this.#source.resume()
  }

  override _destroy(err: Error | null, callback: (err?: Error | null) => void): void {
    // Whatever was not read is dropped as it arrives, so the connection can carry the answer.
    this.#source.resume()
    callback(this.listenerCount('error') > 0 ? err : null)
  }
}

/** A body still arriving, and when it must have arrived by. */
interface ArrivingBody {
  body: RequestBody
  started: number
  /** Past this, a body that the framework reads whole has taken longer than a whole request may. */
  wholeBy: number | undefined
}

/**
 * Every request body arrives through a RequestBody, under two limits: once `bodyRateGraceMs` have
 * passed it must keep arriving at `minBodyBytesPerSecond` on average, and a body that the
 * framework reads whole must arrive within `requestTimeoutMs`. A body that breaks either fails its
 * read with 408, which the route answers, closing the connection. A body that the route streams
 * (an import) is bounded by the rate alone: a large upload on a slow line may take longer than a
 * request may wait for its headers and a small body.
 *
 * An answer sent before its body has arrived whole closes the connection, so that nothing the
 * client still sends is read, and nothing waits for it.
 */
export const guardRequestBodies = fp<ConnectionLimits>(guard, { name: 'request-bodies', fastify: '5.x', dependencies: ['error-envelope'] })

async function guard(app: FastifyInstance, limits: ConnectionLimits): Promise<void> {
  const { minBodyBytesPerSecond: rate, bodyRateGraceMs: grace, requestTimeoutMs } = limits
  // One timer checks every body still arriving: a timer and a stream for each cost a small
  // request much of its CPU (docs/performance.md).
  const arriving = new UnderWay<ArrivingBody>()
  const check = () => {
    const now = performance.now()
    for (const entry of arriving.entries()) {
      const { body, started, wholeBy } = entry.value!
      const tooSlow = rate > 0 && body.received < (now - started - grace) * (rate / 1000)
      if (tooSlow || (wholeBy !== undefined && now > wholeBy)) {
        arriving.delete(entry)
        body.destroy(new Refusal(408, 'Request timeout', { connection: 'close' }))
      }
    }
  }
  const timer = setInterval(check, Math.min(CHECK_EVERY_MS, Math.max(grace, 1))).unref()
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
    const started = performance.now()
    const body = new RequestBody(request.raw)
    const whole = request.routeOptions.config.streamsBody !== true
    const entry = arriving.add({ body, started, wholeBy: whole ? started + requestTimeoutMs : undefined })
    body.once('close', () => arriving.delete(entry))
    body.once('end', () => arriving.delete(entry))
    done(null, body)
  })

  app.addHook('onSend', (request, reply, payload, done) => {
    // False only on a real request whose body the server has not had whole.
    if (request.raw.complete === false) reply.header('connection', 'close')
    done(null, payload)
  })
}
