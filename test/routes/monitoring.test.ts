import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createMetrics } from '../../src/observability/metrics.ts'
import { SqliteStore } from '../../src/store/sqlite/store.ts'
import { StoreUnavailableError, type Store } from '../../src/store/store.ts'
import { buildTestApp, dune, issueToken, withToken } from '../helpers.ts'

function storeWithPing(ping: () => Promise<void>): Store {
  const store = new SqliteStore({ path: ':memory:' })
  return Object.assign(Object.create(store) as Store, { ping, close: () => store.close() })
}

describe('operational endpoints', () => {
  it('GET /healthz answers 200 OK in the envelope without a token', async () => {
    const app = await buildTestApp()
    const res = await app.inject({ method: 'GET', url: '/healthz' })
    await app.close()
    assert.equal(res.statusCode, 200)
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8')
    assert.deepEqual(res.json(), { status: 200, message: 'OK', data: null })
  })

  it('GET /readyz answers 200 while the store answers', async () => {
    const app = await buildTestApp()
    const res = await app.inject({ method: 'GET', url: '/readyz' })
    await app.close()
    assert.deepEqual(res.json(), { status: 200, message: 'OK', data: null })
  })

  it('GET /readyz answers 503 when the store fails, whatever the failure', async () => {
    for (const failure of [new StoreUnavailableError(new Error('down')), new Error('unexpected')]) {
      const app = await buildTestApp({}, { store: storeWithPing(() => Promise.reject(failure)) })
      const res = await app.inject({ method: 'GET', url: '/readyz' })
      await app.close()
      assert.equal(res.statusCode, 503)
      assert.deepEqual(res.json(), { status: 503, message: 'Service unavailable', data: null })
      assert.ok(res.headers['retry-after'])
    }
  })

  it('GET /readyz answers 503 within the timeout when the store does not answer', { timeout: 15_000 }, async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] })
    const app = await buildTestApp({}, { store: storeWithPing(() => new Promise(() => {})) })
    const answer = app.inject({ method: 'GET', url: '/readyz' })
    await new Promise((resolve) => setImmediate(resolve))
    t.mock.timers.tick(5000)
    const res = await answer
    t.mock.timers.reset()
    await app.close()
    assert.equal(res.statusCode, 503)
  })

  it('GET /metrics counts requests and times them by route pattern and status, and times the store', async () => {
    const app = await buildTestApp({}, { metrics: createMetrics() })
    const token = await issueToken(app)
    const created = await app.inject(withToken(token, { method: 'POST', url: '/book', payload: dune }))
    await app.inject(withToken(token, { method: 'GET', url: `/book/${created.json().data.id}` }))
    await app.inject(withToken(token, { method: 'GET', url: '/book/424242' }))
    await app.inject({ method: 'GET', url: '/nowhere/7' })
    const res = await app.inject({ method: 'GET', url: '/metrics' })
    await app.close()

    assert.equal(res.statusCode, 200)
    assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/)
    const text = res.body
    assert.match(text, /^http_requests_total\{method="GET",route="\/book\/:id",status="200"\} 1$/m)
    assert.match(text, /^http_requests_total\{method="GET",route="\/book\/:id",status="404"\} 1$/m)
    assert.match(text, /^http_requests_total\{method="POST",route="\/book",status="201"\} 1$/m)
    assert.match(text, /^http_requests_total\{method="GET",route="unmatched",status="404"\} 1$/m)
    assert.match(text, /^http_request_duration_seconds_bucket\{le="\+Inf",method="POST",route="\/book",status="201"\} 1$/m)
    assert.match(text, /^book_store_operation_duration_seconds_count\{operation="create",outcome="ok"\} 1$/m)
    assert.match(text, /^process_cpu_user_seconds_total /m)
    assert.doesNotMatch(text, /424242|nowhere/)
  })
})
