import type { FastifyInstance, onRequestHookHandler } from 'fastify'
import Type from 'typebox'
import { envelope } from '../http/envelope.ts'
import { Refusal } from '../errors.ts'
import type { Lifecycle } from '../lifecycle.ts'
import type { Metrics } from '../observability/metrics.ts'
import { Failure, RETRY_AFTER, Success, withHeaders } from '../schemas.ts'
import { STORE_DEADLINE_MS, StoreUnavailableError, type Store } from '../store/store.ts'

export interface OperationRouteOptions {
  store: Pick<Store, 'ping'>
  metrics: Pick<Metrics, 'render' | 'contentType'>
  lifecycle: Pick<Lifecycle, 'draining'>
  /** Refuses the clients that may not read the metrics. */
  metricsAccess: onRequestHookHandler
}

/** A draining instance will not be ready again; its replacement usually is within seconds. */
const DRAINING_RETRY_AFTER_SECONDS = '1'

function pingWithin(store: Pick<Store, 'ping'>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`the store did not answer within ${ms} ms`)), ms)
  })
  return Promise.race([store.ping(), timeout]).finally(() => clearTimeout(timer))
}

/** Probes and metrics for operators and orchestrators: public, and outside the book interface. */
export async function operationRoutes(app: FastifyInstance, { store, metrics, lifecycle, metricsAccess }: OperationRouteOptions) {
  const tags = ['Operations']
  const security: [] = []

  app.get(
    '/healthz',
    {
      schema: {
        summary: 'Liveness: the process is running',
        operationId: 'health',
        tags,
        security,
        response: { 200: Success(200, 'OK', Type.Null(), null, 'The process runs and answers') },
      },
    },
    async () => envelope(200, 'OK', null),
  )

  app.get(
    '/readyz',
    {
      schema: {
        summary: 'Readiness: the store answers and the instance is not shutting down',
        operationId: 'readiness',
        tags,
        security,
        response: {
          200: Success(200, 'OK', Type.Null(), null, 'The store answered: requests can be served'),
          503: withHeaders(
            Failure(
              'NotReady',
              503,
              `The instance is shutting down, or the store did not answer within ${STORE_DEADLINE_MS / 1000} s or failed; \`Retry-After\` says when to ask again`,
              'Service unavailable',
            ),
            RETRY_AFTER,
          ),
        },
      },
    },
    async () => {
      // A proxy that checks readiness stops sending here while the instance still serves.
      if (lifecycle.draining) throw new Refusal(503, 'Service unavailable', { 'retry-after': DRAINING_RETRY_AFTER_SECONDS })
      try {
        await pingWithin(store, STORE_DEADLINE_MS)
      } catch (err) {
        throw err instanceof StoreUnavailableError ? err : new StoreUnavailableError(err)
      }
      return envelope(200, 'OK', null)
    },
  )

  app.get(
    '/metrics',
    {
      schema: {
        summary: 'Metrics in Prometheus text format',
        description:
          'Requests by method, route pattern and status (counts and latency histograms), store operations by outcome, and process metrics. With `METRICS_TOKEN` set, only for `Authorization: Bearer <METRICS_TOKEN>`; otherwise only for clients on the same machine.',
        operationId: 'metrics',
        tags,
        security,
        response: {
          200: {
            description: 'Prometheus text exposition format 0.0.4',
            content: {
              'text/plain': { schema: Type.String({ examples: ['http_requests_total{method="GET",route="/books",status="200"} 3'] }) },
            },
          },
          401: Failure('MetricsTokenRefused', 401, '`METRICS_TOKEN` is set and the request does not carry it', 'Invalid token'),
          403: Failure('MetricsForbidden', 403, '`METRICS_TOKEN` is not set and the client is not on this machine', 'Forbidden'),
        },
      },
      onRequest: metricsAccess,
    },
    async (_request, reply) => {
      const text = await metrics.render()
      return reply.type(metrics.contentType).send(text)
    },
  )
}
