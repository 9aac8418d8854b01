import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import { buildApp, type AppParts } from '../src/app.ts'
import { DEFAULT_LIMITS, type Config } from '../src/config.ts'
import { createMetrics } from '../src/observability/metrics.ts'
import { SqliteStore, type SqliteOptions } from '../src/store/sqlite/store.ts'
import type { Store } from '../src/store/store.ts'
import { openTestPostgresStore } from './support/postgres-store.ts'
import { createTestSchema, postgresUnreachableReason } from './support/postgres.ts'

export const TEST_SECRET = 'a-test-secret-of-at-least-thirty-two-bytes'
export const TEST_USERNAME = 'librarian'
export const TEST_PASSWORD = 'correct horse battery staple'

export function testConfig(overrides: Partial<Config> = {}): Config {
  return {
    port: 0,
    host: '127.0.0.1',
    dbUrl: 'sqlite::memory:',
    dbPoolSize: 2,
    dbConnectTimeoutMs: 1000,
    dbQueryTimeoutMs: 2000,
    secret: TEST_SECRET,
    previousSecret: undefined,
    username: TEST_USERNAME,
    password: TEST_PASSWORD,
    logLevel: 'silent',
    production: false,
    trustProxy: false,
    corsOrigins: [],
    sqliteSynchronous: 'normal',
    limits: DEFAULT_LIMITS,
    // Hashes of next to no cost, below what PASSWORD_HASH_COST may choose: tests log in wrongly by
    // the hundred, and the costs themselves are checked in test/auth/passwords.test.ts.
    passwordHashCost: 1,
    trashRetentionDays: 30,
    maxStreams: 1000,
    workers: 1,
    shutdownDelayMs: 0,
    shutdownGraceMs: 10_000,
    notices: [],
    ...overrides,
  }
}

/** A database of its own for a test that runs the service as a separate process. */
export interface FreshDatabase {
  /** What the process gets as DB_URL. */
  dbUrl: string
  /** Removes the database once the test is done with it. */
  drop(): Promise<void>
}

/** A way to get a fresh, empty store of one engine; `skip` says why it cannot run here. */
export interface StoreEngine {
  name: string
  skip?: string
  open(): Promise<Store>
  freshDatabase(): Promise<FreshDatabase>
}

// With CI=true PostgreSQL is never skipped: when it is unreachable, its tests fail.
const postgresSkip = process.env.CI === 'true' ? undefined : await postgresUnreachableReason()

/** Every engine the behavioural tests run against. */
export const storeEngines: StoreEngine[] = [
  {
    name: 'sqlite',
    open: async () => new SqliteStore({ path: ':memory:' }),
    async freshDatabase() {
      const dir = await mkdtemp(join(tmpdir(), 'books-'))
      return { dbUrl: `sqlite:${join(dir, 'books.db')}`, drop: () => rm(dir, { recursive: true, force: true }) }
    },
  },
  {
    name: 'postgres',
    skip: postgresSkip,
    open: openTestPostgresStore,
    async freshDatabase() {
      const schema = await createTestSchema()
      return { dbUrl: schema.url, drop: schema.drop }
    },
  },
]

/**
 * The engines that finding books is tested on: SQLite also with the search indexes taking books
 * in batches of 5, so that a suite's books are found both through the indexes and in the tail
 * (a suite stores fewer books than the default batch of 2,000, which would leave them all in the
 * tail).
 */
export const searchEngines: StoreEngine[] = [
  ...storeEngines,
  {
    ...storeEngines[0]!,
    name: 'sqlite file, read by a thread of its own, indexed in batches of 5',
    open: () => openSqliteFile({ searchIndexBatch: 5, readers: 1 }),
  },
]

/**
 * The same store with some of its members replaced: the others are bound to the store itself,
 * since its methods use private fields, which a copy does not have.
 */
export function storeWith(store: Store, replaced: Partial<Store>): Store {
  return {
    reader: store.reader,
    books: store.books,
    changes: store.changes,
    trash: store.trash,
    accounts: store.accounts,
    loginFailures: store.loginFailures,
    idempotencyKeys: store.idempotencyKeys,
    changeSignals: store.changeSignals,
    storesWhileReading: store.storesWhileReading,
    transaction: (work) => store.transaction(work),
    ping: () => store.ping(),
    close: () => store.close(),
    ...replaced,
  }
}

/**
 * A store in an SQLite file of its own, removed when the store is closed: unlike an in-memory
 * database, a file is read by the store's reader threads, as the service reads it.
 */
export async function openSqliteFile(options: Omit<SqliteOptions, 'path'> = {}): Promise<Store> {
  const dir = await mkdtemp(join(tmpdir(), 'books-'))
  const store = new SqliteStore({ ...options, path: join(dir, 'books.db') })
  const close = store.close.bind(store)
  return Object.assign(store, {
    close: async () => {
      await close()
      await rm(dir, { recursive: true, force: true })
    },
  })
}

export async function buildTestApp(overrides: Partial<Config> = {}, parts: AppParts = {}): Promise<FastifyInstance> {
  // Process metrics watch the event loop and GC of the whole process: one set per app would pile up.
  const app = await buildApp(testConfig(overrides), { metrics: createMetrics({ processMetrics: false }), ...parts })
  await app.ready()
  return app
}

export async function issueToken(app: FastifyInstance): Promise<string> {
  const res = await app.inject({
    method: 'POST',
    url: '/token',
    payload: { username: TEST_USERNAME, password: TEST_PASSWORD },
  })
  if (res.statusCode !== 200) throw new Error(`login failed: ${res.body}`)
  return res.json().data.token
}

/** An inject call with the token in the Authorization header. */
export function withToken(token: string, options: InjectOptions): InjectOptions {
  return { ...options, headers: { authorization: token, ...options.headers } }
}

export const dune = { title: 'Dune', author: 'Frank Herbert', year: 1965 }

/** Starts `app` on a free loopback port and returns the port. */
export async function listenOnLoopback(app: FastifyInstance): Promise<number> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  if (address === null || typeof address === 'string') throw new Error('not listening on a TCP port')
  return address.port
}

/** Asserts an answer is the envelope with this status and message (and data, when given); gives back its data. */
export function assertEnvelope(res: LightMyRequestResponse, status: number, message: string, data?: unknown) {
  assert.equal(res.statusCode, status, res.body)
  assert.equal(res.headers['content-type'], 'application/json; charset=utf-8')
  const body = res.json()
  assert.deepEqual(Object.keys(body).sort(), ['data', 'message', 'status'])
  assert.equal(body.status, status)
  assert.equal(body.message, message)
  if (data !== undefined) assert.deepEqual(body.data, data)
  return body.data
}
