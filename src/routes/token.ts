import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Accounts } from '../accounts/accounts.ts'
import { createLoginGate, type Precheck } from '../auth/login-gate.ts'
import type { LoginLimiter } from '../auth/login-limiter.ts'
import type { TokenService } from '../auth/tokens.ts'
import { parseBodiesAsJson } from '../http/plugins/body-parser.ts'
import { envelope } from '../http/envelope.ts'
import { InvalidCredentials, TooManyAttempts } from '../auth/errors.ts'
import { Refusal } from '../errors.ts'
import { Failure, failures, LoginRequest, RETRY_AFTER, Success, TokenPayload, withHeaders } from '../schemas.ts'

export interface TokenRouteOptions {
  tokens: TokenService
  accounts: Accounts
  limiter: LoginLimiter
}

/**
 * A warn line for a login refused by the limit or failed on its credentials, so that an operator
 * sees who is guessing and who is locked out. It carries the request id; never the body, which
 * holds the password.
 */
function logRefusal(request: FastifyRequest, err: unknown): void {
  if (err instanceof TooManyAttempts) {
    request.log.warn({ clientAddress: request.ip, retryAfterSeconds: err.retryAfterSeconds }, 'login refused: too many failed logins')
  } else if (err instanceof InvalidCredentials) {
    request.log.warn({ clientAddress: request.ip }, 'login failed: wrong username or password')
  }
}

export async function tokenRoutes(app: FastifyInstance, { tokens, accounts, limiter }: TokenRouteOptions) {
  parseBodiesAsJson(app)
  const gate = createLoginGate(limiter)
  const prechecks = new WeakMap<FastifyRequest, Precheck>()
  /** `request.ip` is the socket's peer, or the forwarded client when TRUST_PROXY trusts that peer. */
  async function refuseWhileLimited(request: FastifyRequest): Promise<void> {
    try {
      prechecks.set(request, await gate.precheck(request.ip))
    } catch (err) {
      logRefusal(request, err)
      throw err
    }
  }

  app.withTypeProvider<TypeBoxTypeProvider>().post(
    '/token',
    {
      schema: {
        summary: 'Issue an access token',
        description:
          "Exchanges a user's name and password, or the configured pair's, for a token in the user's role that the other operations require.",
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
          400: Failure(
            'InvalidRequestPayload',
            400,
            'The body is not an object with string `username` and `password`',
            'Invalid request payload',
          ),
          401: Failure('InvalidCredentials', 401, 'The username or the password is wrong', 'Invalid credentials'),
          413: failures.tooLarge,
          429: withHeaders(
            Failure(
              'TooManyRequests',
              429,
              'Too many failed logins from this address; `Retry-After` says when to try again',
              'Too many requests',
            ),
            RETRY_AFTER,
          ),
          500: Failure(
            'CouldNotGenerateToken',
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
      let identity
      try {
        // Checked before its turn: a password hash takes a while, and the turn only orders the counting.
        const found = await accounts.login(username, password)
        await gate.decide(request.ip, () => found !== undefined, prechecks.get(request))
        identity = found!
      } catch (err) {
        logRefusal(request, err)
        throw err
      }
      let token: string
      try {
        token = tokens.sign(identity.username, identity.role, identity.session)
      } catch (err) {
        request.log.error({ err }, 'token signing failed')
        throw new Refusal(500, 'Could not generate token')
      }
      // RFC 6749 §5.1: responses that carry a token are never cached.
      reply.header('cache-control', 'no-store')
      return envelope(200, 'Token generated successfully', { token })
    },
  )
}
