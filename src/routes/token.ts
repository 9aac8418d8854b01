import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { CredentialCheck } from '../auth/credentials.ts'
import { clientKey, type LoginLimiter } from '../auth/login-limiter.ts'
import type { TokenService } from '../auth/tokens.ts'
import { parseBodiesAsJson } from '../http/body-parser.ts'
import { envelope } from '../http/envelope.ts'
import { HttpError } from '../http/http-error.ts'
import { Failure, failures, LoginRequest, RETRY_AFTER, Success, TokenPayload, withHeaders } from '../schemas.ts'

export interface TokenRouteOptions {
  tokens: TokenService
  checkCredentials: CredentialCheck
  limiter: LoginLimiter
}

/** Runs the tasks given for one key one after another; tasks of different keys run at once. */
function oneAtATimePerKey() {
  const tails = new Map<string, Promise<unknown>>()
  return async <T>(key: string, task: () => Promise<T>): Promise<T> => {
    const result = (tails.get(key) ?? Promise.resolve()).then(task)
    const tail = result.catch(() => {})
    tails.set(key, tail)
    try {
      return await result
    } finally {
      // Only keys with a task under way are kept.
      if (tails.get(key) === tail) tails.delete(key)
    }
  }
}

export async function tokenRoutes(app: FastifyInstance, { tokens, checkCredentials, limiter }: TokenRouteOptions) {
  parseBodiesAsJson(app)
  /** `request.ip` is the socket's peer, or the forwarded client when TRUST_PROXY trusts that peer. */
  async function refuseWhileLimited(request: FastifyRequest): Promise<void> {
    const retryAfter = await limiter.retryAfterSeconds(request.ip)
    if (retryAfter > 0) {
      // The line carries the request id; never the body, which holds the password.
      request.log.warn({ clientAddress: request.ip, retryAfterSeconds: retryAfter }, 'login refused: too many failed logins')
      throw new HttpError(429, 'Too many requests', { 'retry-after': String(retryAfter) })
    }
  }
  const oneAtATime = oneAtATimePerKey()

  app.withTypeProvider<TypeBoxTypeProvider>().post(
    '/token',
    {
      schema: {
        summary: 'Issue an access token',
        description: 'Exchanges the configured username and password for a token that the book operations require.',
        operationId: 'issueToken',
        tags: ['Tokens'],
        security: [],
        body: LoginRequest,
        response: {
          200: withHeaders(
            Success(
              200,
              'Token generated successfully',
              TokenPayload,
              { token: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9…' },
              'A token valid for 15 minutes',
            ),
            { 'Cache-Control': '`no-store`: the answer carries a credential' },
          ),
          400: Failure(400, 'The body is not an object with string `username` and `password`', 'Invalid request payload'),
          401: Failure(401, 'The username or the password is wrong', 'Invalid credentials'),
          413: failures.tooLarge,
          429: withHeaders(
            Failure(429, 'Too many failed logins from this address; `Retry-After` says when to try again', 'Too many requests'),
            RETRY_AFTER,
          ),
          500: Failure(
            500,
            'The token could not be signed, or another unexpected failure',
            'Could not generate token',
            'Internal server error',
          ),
          // The limit is counted in the store: without it, no attempt is answered.
          503: failures.storeUnavailable,
        },
      },
      config: { invalidInputMessage: 'Invalid request payload' },
      // Refused before the body is read, so a limited client costs no parsing.
      onRequest: refuseWhileLimited,
    },
    async (request, reply) => {
      const { username, password } = request.body
      // Within this process a client's attempts take turns from the check to the recorded
      // failure, so concurrent guesses cannot all pass a check made before any was counted.
      // Every attempt takes its turn, right pair or not, so the wait tells nothing about it.
      await oneAtATime(clientKey(request.ip), async () => {
        await refuseWhileLimited(request)
        if (!checkCredentials(username, password)) {
          // Counted before the answer leaves: the client learns nothing from an uncounted guess,
          // and a store that cannot count it answers 503 instead.
          await limiter.recordFailure(request.ip)
          request.log.warn({ clientAddress: request.ip }, 'login failed: wrong username or password')
          throw new HttpError(401, 'Invalid credentials')
        }
      })
      let token: string
      try {
        token = tokens.sign(username)
      } catch (err) {
        request.log.error({ err }, 'token signing failed')
        throw new HttpError(500, 'Could not generate token')
      }
      // RFC 6749 §5.1: responses that carry a token are never cached.
      reply.header('cache-control', 'no-store')
      return envelope(200, 'Token generated successfully', { token })
    },
  )
}
