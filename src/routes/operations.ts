import type { FastifyInstance } from 'fastify'
import Type from 'typebox'
import { envelope } from '../http/envelope.ts'
import type { Metrics } from '../observability/metrics.ts'
import { Failure, RETRY_AFTER, Success, withHeaders } from '../schemas.ts'
import { STORE_DEADLINE_MS, StoreUnavailableError, type Store } from '../store/store.ts'

export interface OperationRouteOptions {
  store: Pick<Store, 'ping'>
  metrics: Pick<Metrics, 'render' | 'contentType'>
}

function pingWithin(store: Pick<Store, 'ping'>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`the store did not answer within ${ms} ms`)), ms)
  })
  return Promise.race([store.ping(), timeout]).finally(() => clearTimeout(timer))
}

/** Probes and metrics for operators and orchestrators: public, and outside the book interface. */
export async function operationRoutes(app: FastifyInstance, { store, metrics }: OperationRouteOptions) {
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
        summary: 'Readiness: the store answers',
        operationId: 'readiness',
        tags,
        security,
        response: {
          200: Success(200, 'OK', Type.Null(), null, 'The store answered: requests can be served'),
          503: withHeaders(
            Failure(
              503,
              `The store did not answer within ${STORE_DEADLINE_MS / 1000} s or failed; \`Retry-After\` says when to ask again`,
              'Service unavailable',
            ),
            RETRY_AFTER,
          ),
        },
      },
    },
    async () => {
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
          'Requests by method, route pattern and status (counts and latency histograms), store operations by outcome, and process metrics.',
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
        },
      },
    },
    async (_request, reply) => {
      const text = await metrics.render()
      return reply.type(metrics.contentType).send(text)
    },
  )
}
