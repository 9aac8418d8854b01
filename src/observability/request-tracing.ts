import type { FastifyInstance } from 'fastify'
import { REQUEST_ID_HEADER } from '../http/request-id.ts'
import { UNMATCHED_ROUTE, type Metrics } from './metrics.ts'

/**
 * Every answer carries its request id; every finished request gives one log line and
 * one observation, labelled by route pattern so that ids in URLs do not multiply series.
 */
export function traceRequests(app: FastifyInstance, metrics: Pick<Metrics, 'observeRequest'>): void {
  app.addHook('onRequest', (request, reply, done) => {
    reply.header(REQUEST_ID_HEADER, request.id)
    done()
  })
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? UNMATCHED_ROUTE
    const status = reply.statusCode
    const durationMs = reply.elapsedTime
    metrics.observeRequest(request.method, route, status, durationMs / 1000)
    request.log.info(
      { method: request.method, route, status, durationMs: Math.round(durationMs * 1000) / 1000 },
      'request completed',
    )
    done()
  })
}
