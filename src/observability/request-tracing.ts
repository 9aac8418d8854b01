import type { FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify'
import fp from 'fastify-plugin'
import { REQUEST_ID_HEADER } from '../http/plugins/request-id.ts'
import { UNMATCHED_ROUTE, type Metrics } from './metrics.ts'

type FrameworkErrorHandler = NonNullable<FastifyServerOptions['frameworkErrors']>

/**
 * Every answer carries its request id; every finished request gives one log line and
 * one observation, labelled by route pattern so that ids in URLs do not multiply series.
 */
export function createRequestTracing(metrics: Pick<Metrics, 'observeRequest'>) {
  function finished(request: FastifyRequest, reply: FastifyReply, durationMs: number) {
    const route = request.routeOptions.url ?? UNMATCHED_ROUTE
    const status = reply.statusCode
    metrics.observeRequest(request.method, route, status, durationMs / 1000)
    request.log.info({ method: request.method, route, status, durationMs: Math.round(durationMs * 1000) / 1000 }, 'request completed')
  }

  return {
    /** The hooks, as the plugin that the others answering early (CORS) depend on. */
    plugin: fp(
      async (app) => {
        app.addHook('onRequest', (request, reply, done) => {
          reply.header(REQUEST_ID_HEADER, request.id)
          done()
        })
        app.addHook('onResponse', (request, reply, done) => {
          finished(request, reply, reply.elapsedTime)
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
        reply.raw.once('finish', () => finished(request, reply, performance.now() - started))
        handler(err, request, reply)
      }
    },
  }
}
