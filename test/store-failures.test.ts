import assert from 'node:assert/strict'
import { after, before, beforeEach, describe, it } from 'node:test'
import { setTimeout } from 'node:timers/promises'
import { dune, storeEngines, TEST_PASSWORD, TEST_USERNAME } from './helpers.ts'
import { call, serviceEnv, login, runToExit, startService, type Answer, type ListeningService } from './support/service.ts'
import { createTestSchema, TEST_DATABASE_URL, type TestSchema } from './support/postgres.ts'
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy.ts'

const postgres = storeEngines.find((engine) => engine.name === 'postgres')!
// Short timeouts keep these tests quick; the defaults answer within 5 s the same way.
const FAST_TIMEOUTS = { DB_CONNECT_TIMEOUT_MS: '500', DB_QUERY_TIMEOUT_MS: '1000' }
/**
 * A running service keeps the default connect timeout: it starts through the proxy, and on a
 * loaded machine its first connection may take longer than half a second to come up.
 */
const RUNNING_TIMEOUTS = { DB_QUERY_TIMEOUT_MS: '1000' }
const PROMISED_MS = 5000
/** A recovery that never comes fails the test after this. */
const GIVE_UP = { timeout: 60_000 }

/** `schema`'s DB_URL with the proxy in place of the server. */
function throughProxy(schema: TestSchema, proxy: TcpProxy): string {
  const url = new URL(schema.url)
  url.hostname = '127.0.0.1'
  url.port = String(proxy.port)
  return url.toString()
}

async function timed(request: () => Promise<Answer>): Promise<Answer & { ms: number }> {
  const started = performance.now()
  const answer = await request()
  return { ...answer, ms: performance.now() - started }
}

describe('PostgreSQL failures', { skip: postgres.skip }, () => {
  let schema: TestSchema
  let proxy: TcpProxy

  before(async () => {
    schema = await createTestSchema()
    const server = new URL(TEST_DATABASE_URL)
    proxy = await startTcpProxy({ host: server.hostname, port: Number(server.port || 5432) })
  })
  after(async () => {
    await proxy?.close()
    await schema?.drop()
  })

  describe('at start-up', () => {
    after(() => proxy.restore())

    it('stop the service with exit code 1 and one line saying why when the server is down', async () => {
      await proxy.down()
      const { code, output } = await runToExit(serviceEnv(throughProxy(schema, proxy), FAST_TIMEOUTS))
      assert.equal(code, 1)
      assert.match(output, /^Store unavailable at start-up: connect ECONNREFUSED 127\.0\.0\.1:\d+\n$/)
    })

    it('stop the service within the connect timeout when the server stalls', async () => {
      await proxy.restore()
      proxy.stall()
      // Timed from the service's first attempt to reach the server, so the time the process
      // takes to start does not count.
      let firstAttempt = 0
      void proxy.nextConnection().then(() => (firstAttempt = performance.now()))
      const { code, output } = await runToExit(serviceEnv(throughProxy(schema, proxy), FAST_TIMEOUTS))
      const waited = performance.now() - firstAttempt
      assert.equal(code, 1)
      assert.match(output, /^Store unavailable at start-up: /)
      assert.ok(firstAttempt > 0, 'the service never tried to reach the server')
      assert.ok(waited < PROMISED_MS, `gave up ${Math.round(waited)} ms after its first attempt`)
    })
  })

  describe('while the service runs', () => {
    let instance: ListeningService
    let token: string
    let bookId: number

    before(async () => {
      instance = await startService(serviceEnv(throughProxy(schema, proxy), RUNNING_TIMEOUTS))
      token = await login(instance)
    })
    after(() => instance?.stop())
    beforeEach(async () => {
      const created = await call(instance, 'POST', '/book', { token, body: dune })
      assert.equal(created.status, 201)
      bookId = created.body.data.id
    })

    /**
     * Every book route, and logins, which need the store to count failures: more requests at
     * once than the pool has connections.
     */
    function everyStoreRequest(): Promise<Answer & { ms: number }>[] {
      return [
        () => call(instance, 'POST', '/token', { body: { username: TEST_USERNAME, password: TEST_PASSWORD } }),
        () => call(instance, 'POST', '/token', { body: { username: TEST_USERNAME, password: 'guess' } }),
        () => call(instance, 'GET', `/book/${bookId}`, { token }),
        () => call(instance, 'GET', '/books', { token }),
        () => call(instance, 'POST', '/book', { token, body: dune }),
        () => call(instance, 'PUT', `/book/${bookId}`, { token, body: { year: 1966 } }),
        () => call(instance, 'DELETE', `/book/${bookId}`, { token }),
      ].map(timed)
    }

    async function assertUnavailable() {
      for (const answer of await Promise.all(everyStoreRequest())) {
        assert.equal(answer.status, 503)
        assert.deepEqual(answer.body, { status: 503, message: 'Service unavailable', data: null })
        assert.match(answer.headers.get('retry-after') ?? '', /^\d+$/)
        assert.ok(answer.ms < PROMISED_MS, `answered after ${Math.round(answer.ms)} ms`)
      }
      assert.equal(instance.child.exitCode, null)
    }

    /** After the store is back the same process serves books and logins again, without a restart. */
    async function assertRecovers(bringBack: () => unknown = () => proxy.restore()) {
      await bringBack()
      // Asked again until it answers: the test's timeout bounds how long recovering may take.
      let answer = await call(instance, 'GET', `/book/${bookId}`, { token })
      while (answer.status !== 200) {
        assert.equal(answer.status, 503)
        await setTimeout(100)
        answer = await call(instance, 'GET', `/book/${bookId}`, { token })
      }
      assert.equal(answer.status, 200)
      assert.equal((await call(instance, 'POST', '/book', { token, body: dune })).status, 201)
      const guess = await call(instance, 'POST', '/token', { body: { username: TEST_USERNAME, password: 'guess' } })
      // Seen once as 503 in a whole run on a loaded machine, and not since: the log says why, if it comes again.
      assert.equal(guess.status, 401, `the service's log, last lines:\n${instance.output().split('\n').slice(-20).join('\n')}`)
      token = await login(instance)
      assert.equal(instance.child.exitCode, null)
    }

    it('answer book requests and logins with 503 and Retry-After within 5 s when the server goes down, then recover', GIVE_UP, async () => {
      await proxy.down()
      await assertUnavailable()
      await assertRecovers()
    })

    it('answer book requests and logins with 503 and Retry-After within 5 s when the server stalls, then recover', GIVE_UP, async () => {
      proxy.stall()
      await assertUnavailable()
      // Still stalled: the pool's connections are all stuck or given up, and new ones hang.
      await assertUnavailable()
      await assertRecovers()
    })

    it('close the connections a stalled server left unanswered, and recover on new ones', GIVE_UP, async () => {
      proxy.stall()
      await assertUnavailable()
      // The stalled connections stay open and silent: only the service can give up on them.
      await assertRecovers(() => proxy.thaw())
    })
  })
})
