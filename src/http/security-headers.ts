import fp from 'fastify-plugin'

/**
 * Every answer is JSON and says so: `nosniff` stops a browser from reading one as a script
 * or a page. Answers written outside the request lifecycle add these headers themselves.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = { 'x-content-type-options': 'nosniff' }

/** Fastify names neither itself nor its version in any header, so nothing needs removing. */
export const securityHeaders = fp(
  async (app) => {
    app.addHook('onSend', (_request, reply, payload, done) => {
      reply.headers(SECURITY_HEADERS)
      done(null, payload)
    })
  },
  { name: 'security-headers' },
)
