import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'
import type { Config } from '../../src/config.ts'
import { loadConfig } from '../../src/config.ts'
import { createMetrics } from '../../src/observability/metrics.ts'
import { buildTestApp } from '../helpers.ts'

const TOKEN = 'a-metrics-token-for-the-scraper'

async function appFor(t: TestContext, overrides: Partial<Config> = {}) {
  const app = await buildTestApp(overrides)
  t.after(() => app.close())
  return app
}

describe('who may read GET /metrics', () => {
  it('reads METRICS_TOKEN from the environment', () => {
    assert.equal(loadConfig({ METRICS_TOKEN: TOKEN }).metricsToken, TOKEN)
    assert.equal(loadConfig({}).metricsToken, undefined)
  })

  it('without METRICS_TOKEN: clients on this machine only; others get the 403 envelope', async (t) => {
    const app = await appFor(t, { trustProxy: ['127.0.0.1'] })
    for (const remoteAddress of ['127.0.0.1', '::1', '::ffff:127.0.0.1']) {
      assert.equal((await app.inject({ method: 'GET', url: '/metrics', remoteAddress })).statusCode, 200, remoteAddress)
    }
    for (const [remoteAddress, headers] of [
      ['203.0.113.7', {}],
      ['2001:db8::1', {}],
      // Through a proxy on this machine that TRUST_PROXY names: the client is the forwarded one.
      ['127.0.0.1', { 'x-forwarded-for': '203.0.113.7' }],
    ] as const) {
      const res = await app.inject({ method: 'GET', url: '/metrics', remoteAddress, headers })
      assert.equal(res.statusCode, 403, remoteAddress)
      assert.deepEqual(res.json(), { status: 403, message: 'Forbidden', data: null })
      assert.doesNotMatch(res.body, /http_requests_total/)
    }
  })

  it('with METRICS_TOKEN: only with that bearer token, from anywhere', async (t) => {
    const app = await appFor(t, { metricsToken: TOKEN })
    const scrape = (remoteAddress: string, authorization?: string) =>
      app.inject({ method: 'GET', url: '/metrics', remoteAddress, headers: authorization === undefined ? {} : { authorization } })
    assert.equal((await scrape('203.0.113.7', `Bearer ${TOKEN}`)).statusCode, 200)
    assert.equal((await scrape('127.0.0.1', `bearer ${TOKEN}`)).statusCode, 200)
    const missing = await scrape('127.0.0.1')
    assert.equal(missing.statusCode, 401)
    assert.deepEqual(missing.json(), { status: 401, message: 'Authorization token required', data: null })
    assert.equal(missing.headers['www-authenticate'], 'Bearer')
    for (const wrong of [`Bearer ${TOKEN}x`, TOKEN, `Bearer ${TOKEN.slice(1)}`, 'Bearer', `Basic ${TOKEN}`]) {
      const res = await scrape('203.0.113.7', wrong)
      assert.equal(res.statusCode, 401, wrong)
      assert.deepEqual(res.json(), { status: 401, message: 'Invalid token', data: null })
    }
  })

  it('names no runtime version', async (t) => {
    const app = await buildTestApp({}, { metrics: createMetrics() })
    t.after(() => app.close())
    const text = (await app.inject({ method: 'GET', url: '/metrics' })).body
    assert.match(text, /process_resident_memory_bytes/)
    assert.doesNotMatch(text, /version/i)
    assert.doesNotMatch(text, new RegExp(process.version.replace(/\./g, '\\.')))
  })
})
