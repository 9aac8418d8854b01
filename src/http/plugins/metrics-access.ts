import { createHash, timingSafeEqual } from 'node:crypto'
import { isIP } from 'node:net'
import type { onRequestHookHandler } from 'fastify'
import { Refusal } from '../../errors.ts'

const BEARER = /^bearer\s+(\S+)\s*$/i

function isLoopback(address: string): boolean {
  const plain = address.replace(/^::ffff:/i, '')
  return (isIP(plain) === 4 && plain.startsWith('127.')) || plain === '::1'
}

const digest = (text: string) => createHash('sha256').update(text).digest()

/**
 * Who may read `/metrics`, which tells how many logins failed and when, write volumes and
 * process limits. With `token` set, only a client sending `Authorization: Bearer <token>`;
 * without it, only clients on this machine (the address as `TRUST_PROXY` decides it, so a
 * proxy on this machine must be named there).
 */
export function metricsAccess(token: string | undefined): onRequestHookHandler {
  const expected = token === undefined ? undefined : digest(token)
  return function checkMetricsAccess(request, _reply, done) {
    if (expected === undefined) {
      done(isLoopback(request.ip) ? undefined : new Refusal(403, 'Forbidden'))
      return
    }
    const header = request.headers.authorization
    if (header === undefined || header.trim() === '') {
      done(new Refusal(401, 'Authorization token required', { 'www-authenticate': 'Bearer' }))
      return
    }
    const given = BEARER.exec(header)?.[1]
    // Compared as digests of equal length, in constant time.
    const matches = given !== undefined && timingSafeEqual(digest(given), expected)
    done(matches ? undefined : new Refusal(401, 'Invalid token', { 'www-authenticate': 'Bearer' }))
  }
}
