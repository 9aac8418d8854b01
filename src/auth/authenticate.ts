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
    /** The token or key the principal comes from, set with it: an answer that lasts (a stream) asks whether it still stands. */
    credential: Credential
  }
}

/** A token or key that was accepted, which may stop being accepted while an answer to it lasts. */
export interface Credential {
  /** When it stops being accepted by itself, in milliseconds since the epoch; undefined for a key that never expires. */
  expiresAt: number | undefined
  /** Whether it would still be accepted now: not expired, its user and role unchanged, its key not revoked. */
  stands(): boolean
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
    app.decorateRequest('credential', null as unknown as Credential)
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
      let credential: Credential | undefined
      try {
        if (isApiKey(token)) {
          principal = directory.principalOfKey(token)
          credential = { expiresAt: directory.keyExpiry(token), stands: () => directory.keyStands(token) }
        } else {
          const claims = tokens.verify(token)
          principal = directory.principalOfToken(claims)
          const expiresAt = claims.exp * 1000
          credential = { expiresAt, stands: () => Date.now() < expiresAt && directory.principalOfToken(claims) !== undefined }
        }
      } catch {
        principal = undefined
      }
      if (principal === undefined || credential === undefined) {
        done(new InvalidToken())
        return
      }
      if (!mayUse(principal.role, access)) {
        done(new Forbidden())
        return
      }
      request.principal = principal
      request.credential = credential
      done()
    })
  },
  { name: 'authenticate', fastify: '5.x', dependencies: ['error-envelope'] },
)
