import Fastify, { type FastifyInstance } from 'fastify'
import { createCredentialCheck } from './auth/credentials.ts'
import { createTokenService, type TokenService } from './auth/tokens.ts'
import type { Config } from './config.ts'
import { parseEveryBodyAsJson } from './http/body-parser.ts'
import { answerErrorsWithEnvelope, clientErrorHandler, frameworkErrors, methodNotAllowed } from './http/error-handling.ts'
import { bookRoutes } from './routes/books.ts'
import { tokenRoutes } from './routes/token.ts'
import { openStore } from './store/open.ts'
import type { BookStore } from './store/store.ts'

export const BODY_LIMIT_BYTES = 64 * 1024

/** What a test may supply instead of what the configuration would build. */
export interface AppParts {
  store?: BookStore
  tokens?: TokenService
}

/** The whole service for `config`, ready to `listen` or `inject`; closing it closes the store. */
export async function buildApp(config: Config, parts: AppParts = {}): Promise<FastifyInstance> {
  const store = parts.store ?? (await openStore(config))
  const tokens = parts.tokens ?? createTokenService(config)

  const app = Fastify({
    logger: { level: config.logLevel },
    bodyLimit: BODY_LIMIT_BYTES,
    // Long path segments still reach the route, so any `{id}` that is not an id gets "Book not found".
    routerOptions: { maxParamLength: 16 * 1024 },
    // Bodies are checked as sent: "2020" is not a year.
    ajv: { customOptions: { coerceTypes: false } },
    frameworkErrors,
    clientErrorHandler,
  })
  app.addHook('onClose', () => store.close())

  answerErrorsWithEnvelope(app)
  parseEveryBodyAsJson(app)
  const answerMissingMethods = methodNotAllowed(app)

  await app.register(tokenRoutes, { tokens, checkCredentials: createCredentialCheck(config.username, config.password) })
  await app.register(bookRoutes, { store, tokens })
  await app.register(answerMissingMethods)
  return app
}
