import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ConfigError, loadConfig } from '../src/config.ts'

describe('database settings', () => {
  it('default to a pool of 10 and timeouts that answer within 5 seconds', () => {
    const config = loadConfig({})
    assert.equal(config.dbPoolSize, 10)
    assert.equal(config.dbConnectTimeoutMs, 2000)
    assert.equal(config.dbQueryTimeoutMs, 4000)
  })

  it('are read from DB_POOL_SIZE, DB_CONNECT_TIMEOUT_MS and DB_QUERY_TIMEOUT_MS', () => {
    const config = loadConfig({ DB_POOL_SIZE: '3', DB_CONNECT_TIMEOUT_MS: '250', DB_QUERY_TIMEOUT_MS: '750' })
    assert.equal(config.dbPoolSize, 3)
    assert.equal(config.dbConnectTimeoutMs, 250)
    assert.equal(config.dbQueryTimeoutMs, 750)
  })

  for (const [name, bad] of [
    ['DB_POOL_SIZE', '0'],
    ['DB_POOL_SIZE', '1001'],
    ['DB_POOL_SIZE', 'ten'],
    ['DB_CONNECT_TIMEOUT_MS', '-5'],
    ['DB_CONNECT_TIMEOUT_MS', '1.5'],
    ['DB_QUERY_TIMEOUT_MS', '0'],
    ['DB_QUERY_TIMEOUT_MS', '4s'],
  ] as const) {
    it(`refuse ${name}=${bad}, naming the variable`, () => {
      assert.throws(() => loadConfig({ [name]: bad }), (err: unknown) => {
        assert.ok(err instanceof ConfigError)
        assert.match(err.message, new RegExp(`^${name} must be a whole number`))
        return true
      })
    })
  }

  it('accept postgres:// and postgresql:// URLs', () => {
    assert.equal(loadConfig({ DB_URL: 'postgres://db.example/books' }).dbUrl, 'postgres://db.example/books')
    assert.equal(loadConfig({ DB_URL: 'postgresql://db.example/books' }).dbUrl, 'postgresql://db.example/books')
  })
})
