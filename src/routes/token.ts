import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { CredentialCheck } from '../auth/credentials.ts'
import type { TokenService } from '../auth/tokens.ts'
import { envelope } from '../http/envelope.ts'
import { HttpError } from '../http/http-error.ts'
import { Envelope, ErrorEnvelope, LoginRequest, TokenPayload } from '../schemas.ts'

export interface TokenRouteOptions {
  tokens: TokenService
  checkCredentials: CredentialCheck
}

export async function tokenRoutes(app: FastifyInstance, { tokens, checkCredentials }: TokenRouteOptions) {
  app.withTypeProvider<TypeBoxTypeProvider>().post(
    '/token',
    {
      schema: {
        summary: 'Issue an access token',
        body: LoginRequest,
        response: { 200: Envelope(TokenPayload), '4xx': ErrorEnvelope, '5xx': ErrorEnvelope },
      },
      config: { invalidInputMessage: 'Invalid request payload' },
    },
    async (request, reply) => {
      const { username, password } = request.body
      if (!checkCredentials(username, password)) throw new HttpError(401, 'Invalid credentials')
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
