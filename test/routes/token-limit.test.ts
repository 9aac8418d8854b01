import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { StoreLoginLimiter } from '../../src/auth/login-limiter.ts'
import type { Config } from '../../src/config.ts'
import { openStore } from '../../src/store/open.ts'
import { buildTestApp, storeEngines, TEST_PASSWORD, TEST_USERNAME, testConfig, type StoreEngine } from '../helpers.ts'

const right = { username: TEST_USERNAME, password: TEST_PASSWORD }
const wrong = { username: TEST_USERNAME, password: 'guess' }

function clock() {
  let now = 5_000_000
  return { now: () => now, advance: (ms: number) => (now += ms) }
}

async function withClock(engine: StoreEngine, overrides: Partial<Config> = {}) {
  const time = clock()
  const store = await engine.open()
  const app = await buildTestApp(overrides, { store, loginLimiter: new StoreLoginLimiter(store.loginFailures, { now: time.now }) })
  return { app, advance: time.advance }
}

/** Two apps, as two processes or instances would be, each with its own connection to one database. */
async function twoAppsOnOneDatabase(t: TestContext, engine: StoreEngine) {
  const database = await engine.freshDatabase()
  const time = clock()
  const apps: FastifyInstance[] = []
  t.after(async () => {
    await Promise.all(apps.map((app) => app.close()))
    await database.drop()
  })
  for (let i = 0; i < 2; i++) {
    const store = await openStore(testConfig({ dbUrl: database.dbUrl }))
    apps.push(await buildTestApp({}, { store, loginLimiter: new StoreLoginLimiter(store.loginFailures, { now: time.now }) }))
  }
  return { apps: apps as [FastifyInstance, FastifyInstance], advance: time.advance }
}

function login(app: FastifyInstance, payload: unknown, remoteAddress = '198.51.100.1', headers: Record<string, string> = {}) {
  return app.inject({ method: 'POST', url: '/token', payload: payload as object, remoteAddress, headers })
}

async function failTimes(app: FastifyInstance, times: number, remoteAddress?: string, headers?: Record<string, string>) {
  for (let i = 0; i < times; i++) {
    const res = await login(app, wrong, remoteAddress, headers)
    assert.equal(res.statusCode, 401, `failure ${i + 1}`)
  }
}

for (const engine of storeEngines)
  describe(`POST /token brute-force limit on ${engine.name}`, { skip: engine.skip }, () => {
    it('answers 429 with Retry-After after ten failures, even for the right pair, until the window passes', async () => {
      const { app, advance } = await withClock(engine)
      await failTimes(app, 10)
      const limited = await login(app, right)
      assert.equal(limited.statusCode, 429)
      assert.deepEqual(limited.json(), { status: 429, message: 'Too many requests', data: null })
      assert.equal(limited.headers['retry-after'], '900')
      // Attempts while refused do not extend the wait.
      advance(60_000)
      assert.equal((await login(app, wrong)).headers['retry-after'], '840')
      advance(840_000 - 1)
      assert.equal((await login(app, right)).statusCode, 429)
      advance(1)
      assert.equal((await login(app, right)).statusCode, 200)
      await app.close()
    })

    it('refuses a limited client before reading its body', async () => {
      const { app } = await withClock(engine)
      await failTimes(app, 10)
      for (const payload of ['{', '[]', '{"username":1}']) {
        const res = await app.inject({ method: 'POST', url: '/token', payload, remoteAddress: '198.51.100.1' })
        assert.equal(res.statusCode, 429)
      }
      await app.close()
    })

    it('does not count successful logins or unparsable bodies', async () => {
      const { app } = await withClock(engine)
      await failTimes(app, 5)
      for (let i = 0; i < 20; i++) assert.equal((await login(app, right)).statusCode, 200)
      for (let i = 0; i < 20; i++) assert.equal((await login(app, { username: 'x' })).statusCode, 400)
      await failTimes(app, 5)
      assert.equal((await login(app, right)).statusCode, 429)
      await app.close()
    })

    it('counts each client address on its own', async () => {
      const { app } = await withClock(engine)
      await failTimes(app, 10, '198.51.100.1')
      assert.equal((await login(app, right, '198.51.100.1')).statusCode, 429)
      assert.equal((await login(app, right, '198.51.100.2')).statusCode, 200)
      await app.close()
    })

    it('refuses concurrent guesses beyond the limit', async () => {
      const { app } = await withClock(engine)
      const answers = await Promise.all(Array.from({ length: 30 }, () => login(app, wrong)))
      const statuses = answers.map((res) => res.statusCode)
      assert.equal(statuses.filter((status) => status === 401).length, 10)
      assert.equal(statuses.filter((status) => status === 429).length, 20)
      await app.close()
    })

    it('ignores X-Forwarded-For unless TRUST_PROXY trusts the peer', async () => {
      const { app } = await withClock(engine)
      for (let i = 0; i < 10; i++) {
        assert.equal((await login(app, wrong, '198.51.100.1', { 'x-forwarded-for': `203.0.113.${i}` })).statusCode, 401)
      }
      const res = await login(app, right, '198.51.100.1', { 'x-forwarded-for': '203.0.113.99' })
      assert.equal(res.statusCode, 429)
      await app.close()
    })

    it('counts the forwarded client address when the proxy is trusted', async () => {
      const { app } = await withClock(engine, { trustProxy: ['198.51.100.1'] })
      await failTimes(app, 10, '198.51.100.1', { 'x-forwarded-for': '203.0.113.5' })
      assert.equal((await login(app, right, '198.51.100.1', { 'x-forwarded-for': '203.0.113.5' })).statusCode, 429)
      assert.equal((await login(app, right, '198.51.100.1', { 'x-forwarded-for': '203.0.113.6' })).statusCode, 200)
      // A peer that is not the trusted proxy is counted by its own address whatever it forwards.
      await failTimes(app, 10, '198.51.100.9', { 'x-forwarded-for': '203.0.113.7' })
      assert.equal((await login(app, right, '198.51.100.9', { 'x-forwarded-for': '203.0.113.8' })).statusCode, 429)
      await app.close()
    })

    it('shares the count between processes on one database, until the window passes', async (t) => {
      const { apps, advance } = await twoAppsOnOneDatabase(t, engine)
      for (let i = 0; i < 10; i++) assert.equal((await login(apps[i % 2]!, wrong)).statusCode, 401, `failure ${i + 1}`)
      for (const app of apps) {
        const limited = await login(app, right)
        assert.equal(limited.statusCode, 429)
        assert.equal(limited.headers['retry-after'], '900')
      }
      advance(900_000)
      for (const app of apps) assert.equal((await login(app, right)).statusCode, 200)
    })

    it('lets concurrent guesses through both processes pass the limit by at most one per process', async (t) => {
      const { apps } = await twoAppsOnOneDatabase(t, engine)
      const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => login(apps[i % 2]!, wrong)))
      const failed = answers.filter((res) => res.statusCode === 401).length
      assert.ok(failed >= 10 && failed <= 11, `${failed} guesses answered 401`)
      assert.equal(answers.filter((res) => res.statusCode === 429).length, 30 - failed)
      for (const app of apps) assert.equal((await login(app, right)).statusCode, 429)
    })
  })
