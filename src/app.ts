import Fastify, { LogController, type FastifyInstance } from 'fastify'
import { Accounts } from './accounts/accounts.ts'
import { AccountDirectory } from './accounts/directory.ts'
import { authenticate } from './auth/authenticate.ts'
import { PasswordHasher } from './auth/passwords.ts'
import { createCredentialCheck } from './auth/credentials.ts'
import { StoreLoginLimiter, type LoginLimiter } from './auth/login-limiter.ts'
import { createTokenService, type TokenService } from './auth/tokens.ts'
import { Catalogue } from './books/catalogue.ts'
import { createCursors } from './books/cursor.ts'
import type { Config } from './config.ts'
import { responsesClosingWhileDraining, type Lifecycle } from './lifecycle.ts'
import { serveApiReference } from './http/docs/api-reference.ts'
import { ignoreContentTypes } from './http/plugins/body-parser.ts'
import { capConnectionsPerAddress } from './http/wire/connections-per-address.ts'
import { capConnections, connectionOptions } from './http/wire/connection-limits.ts'
import { crossOrigin } from './http/plugins/cors.ts'
import { refuseCrossSiteWrites } from './http/plugins/cross-site.ts'
import { errorEnvelope } from './http/errors/error-handler.ts'
import { frameworkErrors } from './http/errors/answers.ts'
import { idempotencyPlugin } from './http/plugins/idempotency.ts'
import { metricsAccess } from './http/plugins/metrics-access.ts'
import { answerNotFound, methodNotAllowed } from './http/errors/not-found.ts'
import { clientErrorHandler, refuseConnect, refuseUnknownExpectations } from './http/wire/socket-answers.ts'
import { serveOpenApi } from './http/docs/openapi.ts'
import { servePage } from './http/page/page.ts'
import { lazySerializers } from './http/plugins/serializers.ts'
import { partValidators } from './http/plugins/validation.ts'
import { guardRequestBodies } from './http/wire/request-bodies.ts'
import { requestIdFor } from './http/plugins/request-id.ts'
import { refuseMalformedRequestLines, REQUEST_LINE_SERVER_OPTIONS } from './http/wire/request-line.ts'
import { securityHeaders } from './http/plugins/security-headers.ts'
import { loggerOptions, type LoggerSettings } from './observability/logger.ts'
import { createMetrics, type Metrics } from './observability/metrics.ts'
import { requestLogger } from './observability/request-logger.ts'
import { createRequestTracing } from './observability/request-tracing.ts'
import { accountRoutes } from './routes/accounts.ts'
import { bookTransferRoutes } from './routes/book-transfer.ts'
import { bookRoutes } from './routes/books.ts'
import { historyRoutes } from './routes/history.ts'
import { changeRoutes } from './routes/changes.ts'
import { changeFeed, KEEP_ALIVE_MS, type FeedSettings } from './feed/change-feed.ts'
import { TrashRetention } from './books/retention.ts'
import { operationRoutes } from './routes/monitoring.ts'
import { tokenRoutes } from './routes/token.ts'
import { instrumentStore } from './store/instrumented.ts'
import { openStore } from './store/open.ts'
import type { Store } from './store/store.ts'

export const BODY_LIMIT_BYTES = 64 * 1024

/** What a caller may supply instead of what the configuration would build. */
export interface AppParts {
  store?: Store
  tokens?: TokenService
  loginLimiter?: LoginLimiter
  /** A cluster worker's metrics answer for every worker; tests keep process metrics out. */
  metrics?: Metrics
  /** Where log lines go instead of stdout. */
  logStream?: LoggerSettings['stream']
  /** The built catalogue page; `web/dist` by default. */
  pageRoot?: string
  /** Whether the instance is draining for shutdown: then it is not ready, and its change streams end. */
  lifecycle?: Pick<Lifecycle, 'draining' | 'stopRequested'>
  /** Tests shorten how often change streams are told they are alive, and the rest of the feed's timing and bounds. */
  feed?: Partial<Omit<FeedSettings, 'maxStreams'>>
}

/** A lifecycle that never stops: an app that tests build and close themselves. */
const RUNNING: Pick<Lifecycle, 'draining' | 'stopRequested'> = { draining: false, stopRequested: new Promise(() => {}) }

/** Purges books whose time in the trash is up while the service runs. */
function keepTrashFor(app: FastifyInstance, catalogue: Catalogue, days: number): void {
  const retention = new TrashRetention(catalogue, {
    days,
    onError: (err) => app.log.warn({ err }, 'Purging the trash failed; it is tried again later'),
  })
  app.addHook('onReady', async () => retention.start())
  // preClose: the step under way ends before the store closes.
  app.addHook('preClose', () => retention.stop())
}

/** The whole service for `config`, ready to `listen` or `inject`; closing it closes the store. */
export async function buildApp(config: Config, parts: AppParts = {}): Promise<FastifyInstance> {
  const metrics = parts.metrics ?? createMetrics()
  const engine = parts.store ?? (await openStore(config))
  const store = instrumentStore(engine, metrics)
  const tokens = parts.tokens ?? createTokenService(config)
  const tracing = createRequestTracing(metrics)

  const connection = connectionOptions(config.limits)
  const lifecycle = parts.lifecycle ?? RUNNING
  const app = Fastify({
    logger: loggerOptions({ level: config.logLevel, production: config.production, stream: parts.logStream }),
    // One line per request, written by the request tracing, instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'requestId' }),
    childLoggerFactory: requestLogger,
    requestIdHeader: false,
    genReqId: requestIdFor,
    bodyLimit: BODY_LIMIT_BYTES,
    // Long path segments still reach the route, so any `{id}` that is not an id gets "Book not found".
    routerOptions: { maxParamLength: 16 * 1024 },
    schemaController: { compilersFactory: { ...partValidators.compilersFactory, buildSerializer: lazySerializers } },
    frameworkErrors: tracing.frameworkErrors(frameworkErrors),
    clientErrorHandler,
    trustProxy: config.trustProxy,
    ...connection,
    http: { ...connection.http, ...REQUEST_LINE_SERVER_OPTIONS, ServerResponse: responsesClosingWhileDraining(lifecycle) },
    // While draining for shutdown, requests already on open connections are served, not refused
    // with Fastify's own 503 body, which is not the envelope.
    return503OnClosing: false,
  })
  app.addHook('onClose', () => store.close())
  capConnections(app.server, config.limits)
  capConnectionsPerAddress(app.server, config.limits, config.trustProxy)
  refuseConnect(app.server)
  refuseUnknownExpectations(app.server)

  await app.register(tracing.plugin)
  await app.register(refuseMalformedRequestLines)
  await app.register(securityHeaders)
  await app.register(crossOrigin, { origins: config.corsOrigins })
  await app.register(refuseCrossSiteWrites, { corsOrigins: config.corsOrigins })
  await app.register(errorEnvelope)
  await app.register(answerNotFound)
  await app.register(ignoreContentTypes)
  await app.register(guardRequestBodies, config.limits)
  const directory = new AccountDirectory({
    accounts: store.accounts,
    configuredUsername: config.username,
    onError: (err) => app.log.warn({ err }, 'Reading the accounts failed; they are read again shortly'),
  })
  // Before every route: each that declares `access` gets its check as it is added.
  await app.register(authenticate, { tokens, directory })
  const answerMissingMethods = methodNotAllowed(app)
  await serveOpenApi(app)

  await app.register(operationRoutes, {
    store,
    metrics,
    lifecycle,
    metricsAccess: metricsAccess(config.metricsToken),
  })
  app.addHook('onReady', () => directory.start())
  app.addHook('preClose', () => directory.stop())
  const accounts = new Accounts({
    store: store.accounts,
    directory,
    // Half the request timeout: a login refused sooner is answered; one left waiting would not be.
    hasher: new PasswordHasher({ cost: config.passwordHashCost, maxWaitMs: config.limits.requestTimeoutMs / 2 }),
    checkConfigured: createCredentialCheck(config.username, config.password),
    configuredUsername: config.username,
  })
  await app.register(tokenRoutes, {
    tokens,
    accounts,
    limiter: parts.loginLimiter ?? new StoreLoginLimiter(store.loginFailures),
  })
  await app.register(accountRoutes, { accounts, tokens })
  await app.register(idempotencyPlugin, { keys: store.idempotencyKeys })
  const catalogue = new Catalogue(store)
  await app.register(bookRoutes, { catalogue, reader: store.reader, cursors: createCursors(config) })
  await app.register(bookTransferRoutes, { catalogue, reader: store.reader, metrics })
  await app.register(historyRoutes, { catalogue })
  await app.register(changeFeed, {
    log: catalogue,
    signals: store.changeSignals,
    directory,
    lifecycle,
    maxStreams: config.maxStreams,
    metrics,
    // Written often enough that an idle stream's connection never times out.
    keepAliveMs: Math.min(KEEP_ALIVE_MS, Math.floor(config.limits.requestTimeoutMs / 2)),
    ...parts.feed,
  })
  await app.register(changeRoutes, { catalogue })
  keepTrashFor(app, catalogue, config.trashRetentionDays)
  await serveApiReference(app)
  await servePage(app, parts.pageRoot)
  await app.register(answerMissingMethods)
  return app
}
