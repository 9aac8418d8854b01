/** A service on a loopback port for the client's tests, on one engine, and clients signed in to it. */
import type { TestContext } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { buildTestApp, listenOnLoopback, TEST_PASSWORD, TEST_USERNAME, type StoreEngine } from '../../../../test/helpers.ts'
import { BookCatalogue, type ClientOptions } from '../../src/index.ts'

export { storeEngines, TEST_PASSWORD, TEST_USERNAME } from '../../../../test/helpers.ts'

export interface TestService {
  url: string
  app: FastifyInstance
  /** A client signed in as the configured admin. */
  admin(options?: ClientOptions): Promise<BookCatalogue>
}

/** A service of the test's own, with an empty store of `engine`, closed when the test ends. */
export async function serviceFor(t: TestContext, engine: StoreEngine): Promise<TestService> {
  const app = await buildTestApp({}, { store: await engine.open() })
  t.after(() => app.close())
  const url = `http://127.0.0.1:${await listenOnLoopback(app)}`
  return {
    url,
    app,
    async admin(options = {}) {
      const client = new BookCatalogue({ url, ...options })
      await client.login(TEST_USERNAME, TEST_PASSWORD)
      return client
    },
  }
}

/** A CSV of `count` books, numbered from 1, as the service's import reads it. */
export function csvOf(count: number, first = 1): string {
  const rows = ['title,author,year']
  for (let n = first; n < first + count; n++) rows.push(`Book ${n},Author ${n % 97},${1900 + (n % 120)}`)
  return `${rows.join('\n')}\n`
}
