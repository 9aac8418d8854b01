import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ConfigError, DEFAULT_LIMITS, loadConfig } from '../src/config.ts'

describe('hardening settings', () => {
  it('defaults: no proxy trusted, CORS off, synchronous=normal, bounded timeouts', () => {
    const config = loadConfig({})
    assert.equal(config.trustProxy, false)
    assert.deepEqual(config.corsOrigins, [])
    assert.equal(config.sqliteSynchronous, 'normal')
    assert.deepEqual(config.limits, DEFAULT_LIMITS)
    for (const value of Object.values(config.limits)) assert.ok(value > 0 && Number.isFinite(value))
  })

  it('reads TRUST_PROXY as true, false or a list of proxies', () => {
    assert.equal(loadConfig({ TRUST_PROXY: 'true' }).trustProxy, true)
    assert.equal(loadConfig({ TRUST_PROXY: 'false' }).trustProxy, false)
    assert.deepEqual(loadConfig({ TRUST_PROXY: '10.0.0.1, 192.168.0.0/16,loopback,::1' }).trustProxy, [
      '10.0.0.1',
      '192.168.0.0/16',
      'loopback',
      '::1',
    ])
    assert.throws(() => loadConfig({ TRUST_PROXY: 'yes please' }), ConfigError)
    for (const bad of ['2', '10.0.0.1/33', '10.0.0', 'example.org']) assert.throws(() => loadConfig({ TRUST_PROXY: bad }), /TRUST_PROXY/, bad)
  })

  it('reads CORS_ORIGINS as exact origins and refuses anything else', () => {
    assert.deepEqual(loadConfig({ CORS_ORIGINS: 'https://a.example, http://localhost:3000' }).corsOrigins, [
      'https://a.example',
      'http://localhost:3000',
    ])
    for (const bad of ['*', 'https://a.example/', 'https://a.example/path', 'a.example', 'ftp://a.example', 'https://a.example,']) {
      assert.throws(() => loadConfig({ CORS_ORIGINS: bad }), /CORS_ORIGINS/, bad)
    }
  })

  it('reads SQLITE_SYNCHRONOUS as normal or full', () => {
    assert.equal(loadConfig({ SQLITE_SYNCHRONOUS: 'FULL' }).sqliteSynchronous, 'full')
    assert.equal(loadConfig({ SQLITE_SYNCHRONOUS: 'normal' }).sqliteSynchronous, 'normal')
    assert.throws(() => loadConfig({ SQLITE_SYNCHRONOUS: 'off' }), /SQLITE_SYNCHRONOUS/)
  })

  it('reads the connection limits and refuses unbounded or inconsistent ones', () => {
    const config = loadConfig({ REQUEST_TIMEOUT_MS: '20000', HEADERS_TIMEOUT_MS: '5000', KEEP_ALIVE_TIMEOUT_MS: '1000', MAX_CONNECTIONS: '50' })
    assert.deepEqual(config.limits, { requestTimeoutMs: 20000, headersTimeoutMs: 5000, keepAliveTimeoutMs: 1000, maxConnections: 50 })
    assert.throws(() => loadConfig({ REQUEST_TIMEOUT_MS: '0' }), /REQUEST_TIMEOUT_MS/)
    assert.throws(() => loadConfig({ MAX_CONNECTIONS: '-1' }), /MAX_CONNECTIONS/)
    assert.throws(() => loadConfig({ KEEP_ALIVE_TIMEOUT_MS: 'soon' }), /KEEP_ALIVE_TIMEOUT_MS/)
    assert.throws(() => loadConfig({ REQUEST_TIMEOUT_MS: '1000', HEADERS_TIMEOUT_MS: '2000' }), /HEADERS_TIMEOUT_MS/)
  })
})
