import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { messageFor, sendError } from './answers.ts'

/** Paths that name nothing are answered 404 in the envelope. */
export const answerNotFound = fp(
  async (app) => {
    app.setNotFoundHandler((_request, reply) => sendError(reply, { status: 404, message: messageFor(404) }))
  },
  { name: 'not-found', fastify: '5.x', dependencies: ['error-envelope'] },
)

/**
 * Collects the routes as they are added; the returned plugin, registered after every
 * other route, answers the methods a path lacks with 405 and an `Allow` header.
 */
export function methodNotAllowed(app: FastifyInstance) {
  const methodsByUrl = new Map<string, Set<string>>()
  app.addHook('onRoute', (route) => {
    const methods = methodsByUrl.get(route.url) ?? new Set()
    for (const method of [route.method].flat()) methods.add(method)
    methodsByUrl.set(route.url, methods)
  })
  return async function answerMissingMethods(instance: FastifyInstance) {
    for (const [url, methods] of [...methodsByUrl]) {
      const allow = [...methods].sort().join(', ')
      const missing = instance.supportedMethods.filter((method) => !methods.has(method))
      instance.route({
        method: missing,
        url,
        // Not an operation of the interface: kept out of the OpenAPI document.
        schema: { hide: true },
        handler: (_request, reply) => sendError(reply, { status: 405, message: messageFor(405), headers: { allow } }),
      })
    }
  }
}
