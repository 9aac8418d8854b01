import type { FastifyInstance } from 'fastify'

/**
 * Every answer is JSON and says so: `nosniff` stops a browser from reading one as a script
 * or a page. Nothing names the framework or its version, which would only help an attacker.
 */
export function addSecurityHeaders(app: FastifyInstance): void {
  app.addHook('onSend', (_request, reply, payload, done) => {
    reply.header('x-content-type-options', 'nosniff')
    reply.removeHeader('x-powered-by')
    done(null, payload)
  })
}
