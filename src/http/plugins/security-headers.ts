import fp from 'fastify-plugin'

const CSP = 'content-security-policy'

/**
 * Every answer is JSON and says so: `nosniff` stops a browser from reading one as a script
 * or a page, and the policy lets a JSON answer load nothing and be framed by no page.
 * Answers written outside the request lifecycle add these headers themselves.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  [CSP]: "default-src 'none'; frame-ancestors 'none'",
}

/**
 * Fastify names neither itself nor its version in any header, so nothing needs removing.
 * A page that sets its own policy keeps it; such a policy must say `frame-ancestors 'none'` too.
 */
export const securityHeaders = fp(
  async (app) => {
    const nosniff = SECURITY_HEADERS['x-content-type-options']!
    const policy = SECURITY_HEADERS[CSP]!
    app.addHook('onSend', (_request, reply, payload, done) => {
      reply.header('x-content-type-options', nosniff)
      if (!reply.hasHeader(CSP)) reply.header(CSP, policy)
      done(null, payload)
    })
  },
  { name: 'security-headers' },
)
