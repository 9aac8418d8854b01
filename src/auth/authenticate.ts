import fp from 'fastify-plugin'
import { Forbidden, InvalidToken, TokenRequired } from './errors.ts'
import { isRole, mayUse, type Principal, type Role } from './principal.ts'
import type { TokenService } from './tokens.ts'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The least role that may use the route; without it, the route is public. */
    access?: Role
  }
  interface FastifyRequest {
    /** Who is asking: set on every route that declares `access`. */
    principal: Principal
  }
}

/** Longer Authorization headers are refused without being decoded. */
const MAX_AUTHORIZATION_LENGTH = 8 * 1024
const BEARER = /^bearer\s+/i

export interface AuthenticateOptions {
  tokens: TokenService
  /** The configured user, whose tokens issued before tokens named a role act as admin. */
  configuredUsername: string
}

/**
 * Every route that declares `access` in its config is protected here, in one hook: the token in
 * `Authorization` (as it is, or `Bearer <token>`) is checked before the body is read, its
 * principal set on the request, and its role held against the route's. A request without a valid
 * token is refused whatever it carries (401); one whose role is not enough gets 403. Answers to
 * such requests hold the catalogue's data for one client: no cache may keep them.
 */
export const authenticate = fp<AuthenticateOptions>(
  async (app, { tokens, configuredUsername }) => {
    app.decorateRequest('principal', null as unknown as Principal)
    app.addHook('onRequest', (request, reply, done) => {
      const access = request.routeOptions.config.access
      if (access === undefined) {
        done()
        return
      }
      reply.header('cache-control', 'no-store')
      const header = request.headers.authorization
      if (header === undefined || header.trim() === '') {
        done(new TokenRequired())
        return
      }
      if (header.length > MAX_AUTHORIZATION_LENGTH) {
        done(new InvalidToken())
        return
      }
      const token = header.replace(BEARER, '').trim()
      if (token === '') {
        done(new TokenRequired())
        return
      }
      let principal: Principal
      try {
        const { sub, role } = tokens.verify(token)
        const acting = role ?? (sub === configuredUsername ? 'admin' : undefined)
        if (typeof sub !== 'string' || !isRole(acting)) throw new InvalidToken()
        principal = { actor: sub, username: sub, role: acting }
      } catch {
        done(new InvalidToken())
        return
      }
      if (!mayUse(principal.role, access)) {
        done(new Forbidden())
        return
      }
      request.principal = principal
      done()
    })
  },
  { name: 'authenticate', fastify: '5.x', dependencies: ['error-envelope'] },
)
