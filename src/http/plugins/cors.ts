import cors from '@fastify/cors'
import fp from 'fastify-plugin'

/**
 * Browser pages from `origins` may call the service; with no origins CORS stays off and
 * browsers keep their same-origin rule. Requests from other origins get no CORS headers.
 * An OPTIONS request that is not a preflight from a listed origin is left to the routes
 * (405 with `Allow`), so only real preflights get the bodiless 204. It comes after the request
 * tracing and the security headers, so that a preflight it answers carries both and is traced.
 */
export const crossOrigin = fp<{ origins: readonly string[] }>(
  async (app, { origins }) => {
    if (origins.length === 0) return
    const allowed = new Set(origins)
    await app.register(cors, {
      delegator: (request, callback) => {
        const origin = request.headers.origin
        const preflight = request.method !== 'OPTIONS' || request.headers['access-control-request-method'] !== undefined
        if (origin === undefined || !allowed.has(origin) || !preflight) {
          callback(null, { origin: false })
          return
        }
        callback(null, {
          origin,
          methods: ['GET', 'POST', 'PUT', 'DELETE'],
          allowedHeaders: ['Authorization', 'Content-Type', 'If-Match', 'Idempotency-Key', 'Last-Event-ID'],
          exposedHeaders: ['Content-Disposition', 'ETag', 'Location', 'Link', 'Retry-After', 'X-Change-Seq', 'X-Total-Count'],
          // Tokens travel in a header, never in cookies, so credentialed requests are not needed.
          credentials: false,
          maxAge: 600,
        })
      },
    })
  },
  { name: 'cross-origin', dependencies: ['request-tracing', 'security-headers'] },
)
