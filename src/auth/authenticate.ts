import type { onRequestHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import { Forbidden, InvalidToken, TokenRequired } from './errors.ts'
import type { AccountDirectory } from '../accounts/directory.ts'
import { isApiKey } from './api-keys.ts'
import { mayUse, type Principal, type Role } from './principal.ts'
import type { TokenClaims, TokenService } from './tokens.ts'

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

/** Credentials of keys already seen: far more than one instance has clients at once. */
const KEY_CREDENTIALS = 1000

/**
 * Every route that declares `access` in its config is protected here: when the route is added,
 * it gets a check of its own, with its role bound in, ahead of its other hooks, so that routes
 * without `access` pay nothing. The token or key in `Authorization` (as it is, or `Bearer <…>`)
 * is checked before the body is read, its principal set on the request, and its role held
 * against the route's. A request without a valid token is refused whatever it carries (401); one
 * whose role is not enough gets 403. Answers to such requests hold the catalogue's data for one
 * client: no cache may keep them. Registered before any route, so that none escapes it.
 */
export const authenticate = fp<AuthenticateOptions>(
  async (app, { tokens, directory }) => {
    app.decorateRequest('principal', null as unknown as Principal)
    app.decorateRequest('credential', null as unknown as Credential)
    // A client sends the same token or key again and again: its credential is made once. A
    // token's stands on its claims, which the verified tokens keep while they are good; a key's
    // is dropped whenever the keys are read again.
    const tokenCredentials = new WeakMap<TokenClaims, Credential>()
    const keyCredentials = new Map<string, Credential>()
    directory.onChange(() => keyCredentials.clear())
    const keyCredential = (key: string): Credential => {
      let credential = keyCredentials.get(key)
      if (credential === undefined) {
        credential = { expiresAt: directory.keyExpiry(key), stands: () => directory.keyStands(key) }
        if (keyCredentials.size >= KEY_CREDENTIALS) keyCredentials.clear()
        keyCredentials.set(key, credential)
      }
      return credential
    }
    const tokenCredential = (claims: TokenClaims): Credential => {
      let credential = tokenCredentials.get(claims)
      if (credential === undefined) {
        const expiresAt = claims.exp * 1000
        credential = { expiresAt, stands: () => Date.now() < expiresAt && directory.principalOfToken(claims) !== undefined }
        tokenCredentials.set(claims, credential)
      }
      return credential
    }

    const checkFor = (access: Role): onRequestHookHandler =>
      function checkCredential(request, reply, done) {
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
            if (principal !== undefined) credential = keyCredential(token)
          } else {
            const claims = tokens.verify(token)
            if (claims !== undefined) {
              principal = directory.principalOfToken(claims)
              if (principal !== undefined) credential = tokenCredential(claims)
            }
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
      }

    app.addHook('onRoute', (route) => {
      const access = route.config?.access
      if (access === undefined) return
      route.onRequest = [checkFor(access), ...[route.onRequest ?? []].flat()]
    })
  },
  { name: 'authenticate', fastify: '5.x', dependencies: ['error-envelope'] },
)
