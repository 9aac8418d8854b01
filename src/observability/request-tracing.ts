import type { FastifyBaseLogger, FastifyReply, FastifyRequest, FastifyServerOptions, onResponseHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import { REQUEST_ID_HEADER } from '../http/plugins/request-id.ts'
import { UNMATCHED_ROUTE, type Metrics } from './metrics.ts'

type FrameworkErrorHandler = NonNullable<FastifyServerOptions['frameworkErrors']>
/** Every request's logger is pino's, or the lazy one in front of it: both say which levels they write. */
type LevelledLogger = FastifyBaseLogger & { isLevelEnabled(level: string): boolean }

/**
 * Every answer carries its request id; every finished request gives one log line and
 * one observation, labelled by route pattern so that ids in URLs do not multiply series.
 */
export function createRequestTracing(metrics: Pick<Metrics, 'observeRequest'>) {
  // The service's logger without the redaction, for the request lines alone, set as the plugin is
  // registered: their fields are the service's own and hold no secret, and the redaction's
  // wildcard paths (`*.password`) copy each field of a line and parse every path again for it,
  // more than a quarter of what a read allocated at LOG_LEVEL=info.
  let requestLines!: LevelledLogger

  function finished(request: FastifyRequest, reply: FastifyReply, durationMs: number, route: string) {
    const status = reply.statusCode
    metrics.observeRequest(request.method, route, status, durationMs / 1000)
    // The line's fields are made only when it is written: at LOG_LEVEL=warn, every request would make them for nothing.
    if (!requestLines.isLevelEnabled('info')) return
    requestLines.info(
      { requestId: request.id, method: request.method, route, status, durationMs: Math.round(durationMs * 1000) / 1000 },
      'request completed',
    )
  }

  return {
    /** The hooks, as the plugin that the others answering early (CORS) depend on. */
    plugin: fp(
      async (app) => {
        requestLines = app.log.child({}, { redact: [] }) as LevelledLogger
        app.addHook('onRequest', (request, reply, done) => {
          reply.header(REQUEST_ID_HEADER, request.id)
          done()
        })
        // Each route is traced by a hook of its own with its pattern bound in, so that no request
        // looks up its route's options; the ones that match no route are traced here.
        app.addHook('onRoute', (route) => {
          const pattern = route.url
          const traced: onResponseHookHandler = (request, reply, done) => {
            finished(request, reply, reply.elapsedTime, pattern)
            done()
          }
          route.onResponse = [traced, ...[route.onResponse ?? []].flat()]
        })
        app.addHook('onResponse', (request, reply, done) => {
          if (request.is404) finished(request, reply, reply.elapsedTime, UNMATCHED_ROUTE)
          done()
        })
      },
      { name: 'request-tracing' },
    ),

    /** Requests the router refuses (a URL that cannot be decoded) skip every hook: they are traced here. */
    frameworkErrors(handler: FrameworkErrorHandler): FrameworkErrorHandler {
      return (err, request, reply) => {
        const started = performance.now()
        reply.header(REQUEST_ID_HEADER, request.id)
        reply.raw.once('finish', () => finished(request, reply, performance.now() - started, UNMATCHED_ROUTE))
        handler(err, request, reply)
      }
    },
  }
}
