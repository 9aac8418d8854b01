import type { onRequestHookHandler } from 'fastify'
import { HttpError } from '../http/http-error.ts'
import type { TokenService } from './tokens.ts'

/** Longer Authorization headers are refused without being decoded. */
const MAX_AUTHORIZATION_LENGTH = 8 * 1024
const BEARER = /^bearer\s+/i

/**
 * Runs at onRequest, before the body is read, so a request without a valid token
 * is refused whatever it carries. The header holds the token itself or `Bearer <token>`.
 * Answers to signed-in requests carry the catalogue's data for one client: no cache may keep them.
 */
export function requireToken(tokens: TokenService): onRequestHookHandler {
  return function checkToken(request, reply, done) {
    reply.header('cache-control', 'no-store')
    const header = request.headers.authorization
    if (header === undefined || header.trim() === '') {
      done(new HttpError(401, 'Authorization token required'))
      return
    }
    if (header.length > MAX_AUTHORIZATION_LENGTH) {
      done(new HttpError(401, 'Invalid token'))
      return
    }
    const token = header.replace(BEARER, '').trim()
    if (token === '') {
      done(new HttpError(401, 'Authorization token required'))
      return
    }
    try {
      tokens.verify(token)
    } catch {
      done(new HttpError(401, 'Invalid token'))
      return
    }
    done()
  }
}
