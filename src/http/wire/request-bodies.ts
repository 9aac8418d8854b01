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

/** Whether the request's headers announce a body. */
function sendsBody({ headers }: IncomingMessage): boolean {
  return headers['transfer-encoding'] !== undefined || Number(headers['content-length'] ?? 0) !== 0
}

/** A body still arriving, when it must have arrived by, and how its read is failed. */
interface ArrivingBody {
  received: number
  started: number
  /** Past this, a body that the framework reads whole has taken longer than a whole request may. */
  wholeBy: number | undefined
  fail: (err: Refusal) => void
}

/**
 * Request bodies arrive under two limits: once `bodyRateGraceMs` have passed, a body must keep
 * arriving at `minBodyBytesPerSecond` on average, and a body that the framework reads whole must
 * arrive within `requestTimeoutMs`. A body that breaks either fails its read with 408, which the
 * route answers, closing the connection. A body that the route streams (an import) arrives through
 * a RequestBody and is bounded by the rate alone: a large upload on a slow line may take longer
 * than a request may wait for its headers and a small body. A body read whole is the request
 * stream itself, whose error is told to the framework while it reads it; once the framework has
 * stopped reading (it answered early), a body that falls behind only has its client cut off.
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
      const body = entry.value!
      const tooSlow = rate > 0 && body.received < (now - body.started - grace) * (rate / 1000)
      if (tooSlow || (body.wholeBy !== undefined && now > body.wholeBy)) {
        arriving.delete(entry)
        body.fail(new Refusal(408, 'Request timeout', { connection: 'close' }))
      }
    }
  }
  const timer = setInterval(check, Math.min(CHECK_EVERY_MS, Math.max(grace, 1))).unref()
  app.addHook('onClose', (_app, done) => {
    clearInterval(timer)
    done()
  })

  app.addHook('preParsing', (request, _reply, payload, done) => {
    if (!sendsBody(request.raw)) {
      done(null, payload)
      return
    }
    const started = performance.now()
    const source = request.raw
    if (request.routeOptions.config.streamsBody === true) {
      const body = new RequestBody(source)
      const entry = arriving.add({
        get received() {
          return body.received
        },
        started,
        wholeBy: undefined,
        fail: (err) => body.destroy(err),
      })
      // The rate judges how the client sends, and a body that has arrived whole has kept to it,
      // however long the route then takes to read it: an import waits for the store to claim its
      // idempotency key before it reads a byte. A body cut short or failed never ends: it closes.
      source.once('end', () => arriving.delete(entry))
      body.once('close', () => arriving.delete(entry))
      done(null, body)
      return
    }
    const body: ArrivingBody = {
      received: 0,
      started,
      wholeBy: started + requestTimeoutMs,
      fail: (err) => {
        if (source.listenerCount('error') > 0) source.emit('error', err)
        else source.destroy()
      },
    }
    const entry = arriving.add(body)
    source.on('data', (chunk: Buffer) => (body.received += chunk.length))
    // A request closes once its body has ended, or once it was cut short.
    source.once('close', () => arriving.delete(entry))
    done(null, payload)
  })

  app.addHook('onSend', (request, reply, payload, done) => {
    // False on a real request whose body the server has not had whole, and on one without a body
    // answered in the turn its headers arrived, before Node marks it complete: that one keeps its
    // connection.
    if (request.raw.complete === false && sendsBody(request.raw)) reply.header('connection', 'close')
    done(null, payload)
  })
}
