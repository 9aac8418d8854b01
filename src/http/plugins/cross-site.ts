import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { Refusal } from '../../errors.ts'

/** Methods that change nothing: a page on any site may send them, and reads are protected by the token. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/** The browser says the request comes from the service's own pages, or from no page at all (typed, bookmarked). */
const TRUSTED_FETCH_SITES = new Set(['same-origin', 'none'])

/** Whether `origin` (the `Origin` header) names the host that the request was sent to. */
function isOwnOrigin(origin: string, request: FastifyRequest): boolean {
  let parsed: URL
  try {
    parsed = new URL(origin)
  } catch {
    return false
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return false
  try {
    // Normalised the same way, so `example.org:80` and `http://example.org` agree.
    return new URL(`${parsed.protocol}//${request.host}`).host === parsed.host
  } catch {
    return false
  }
}

/**
 * Whether a browser sent `request` from a page of a site the service does not trust. Browsers
 * send `Sec-Fetch-Site` (where supported) and `Origin` with every request that may change
 * state; curl and server clients send neither and are never refused here.
 */
export function isCrossSite(request: FastifyRequest, allowedOrigins: ReadonlySet<string>): boolean {
  const site = request.headers['sec-fetch-site']
  if (typeof site === 'string' && TRUSTED_FETCH_SITES.has(site)) return false
  const origin = request.headers.origin
  if (origin === undefined) return typeof site === 'string'
  if (allowedOrigins.has(origin)) return false
  // `Sec-Fetch-Site` outranks the host comparison: behind a proxy that rewrites `Host` the
  // comparison could match a foreign page.
  if (typeof site === 'string') return true
  return !isOwnOrigin(origin, request)
}

/**
 * A page on another site can make a visitor's browser send "simple" requests that need no
 * preflight, such as a `text/plain` POST. Requests that may change state from such pages are
 * refused with 403 before anything else looks at them, so they cannot log in, count as failed
 * logins (and lock everyone behind the visitor's address out) or write books.
 */
export const refuseCrossSiteWrites = fp<{ corsOrigins: readonly string[] }>(
  async (app, { corsOrigins }) => {
    const allowed = new Set(corsOrigins)
    app.addHook('onRequest', (request, _reply, done) => {
      if (!SAFE_METHODS.has(request.method) && isCrossSite(request, allowed)) {
        done(new Refusal(403, 'Forbidden'))
        return
      }
      done()
    })
  },
  // After CORS, whose preflight answers come first; before the login limit and the token check.
  { name: 'cross-site', fastify: '5.x', dependencies: ['request-tracing', 'security-headers', 'cross-origin'] },
)
