import fp from 'fastify-plugin'
import { Forbidden, InvalidToken, TokenRequired } from './errors.ts'
import type { AccountDirectory } from '../accounts/directory.ts'
import { isApiKey } from './api-keys.ts'
import { mayUse, type Principal, type Role } from './principal.ts'
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
  /** Who the users and keys are, held in memory: a check costs no store round trip. */
  directory: AccountDirectory
}

/**
 * Every route that declares `access` in its config is protected here, in one hook: the token or
 * key in `Authorization` (as it is, or `Bearer <…>`) is checked before the body is read, its
 * principal set on the request, and its role held against the route's. A request without a valid
 * token is refused whatever it carries (401); one whose role is not enough gets 403. Answers to
 * such requests hold the catalogue's data for one client: no cache may keep them.
 */
export const authenticate = fp<AuthenticateOptions>(
  async (app, { tokens, directory }) => {
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
      let principal: Principal | undefined
      try {
        principal = isApiKey(token) ? directory.principalOfKey(token) : directory.principalOfToken(tokens.verify(token))
      } catch {
        principal = undefined
      }
      if (principal === undefined) {
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
