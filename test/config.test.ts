import assert from 'node:assert/strict'
import { availableParallelism } from 'node:os'
import { describe, it } from 'node:test'
import { ConfigError, loadConfig } from '../src/config.ts'

describe('WORKERS', () => {
  it('is 1 by default, a number when given one, and the CPU count for "auto"', () => {
    assert.equal(loadConfig({}).workers, 1)
    assert.equal(loadConfig({ WORKERS: '3' }).workers, 3)
    assert.equal(loadConfig({ WORKERS: 'auto' }).workers, availableParallelism())
  })

  it('refuses anything else, naming the variable', () => {
    for (const raw of ['0', '-1', '1.5', 'two', '257', ' 2']) {
      assert.throws(() => loadConfig({ WORKERS: raw }), (err: Error) => err instanceof ConfigError && /^WORKERS /.test(err.message), raw)
    }
  })

  it('refuses more than one worker on a store that each process would have to itself', () => {
    assert.throws(() => loadConfig({ WORKERS: '2', DB_URL: 'sqlite::memory:' }), ConfigError)
    assert.equal(loadConfig({ WORKERS: '2', DB_URL: 'sqlite:./data/books.db' }).workers, 2)
  })
})

describe('SHUTDOWN_GRACE_MS', () => {
  it('is 10 s by default and any whole number of milliseconds up to 10 minutes', () => {
    assert.equal(loadConfig({}).shutdownGraceMs, 10_000)
    assert.equal(loadConfig({ SHUTDOWN_GRACE_MS: '0' }).shutdownGraceMs, 0)
    assert.equal(loadConfig({ SHUTDOWN_GRACE_MS: '600000' }).shutdownGraceMs, 600_000)
  })

  it('refuses anything else, naming the variable', () => {
    for (const raw of ['-1', '1.5', '10s', '600001']) {
      assert.throws(() => loadConfig({ SHUTDOWN_GRACE_MS: raw }), /^ConfigError: SHUTDOWN_GRACE_MS |SHUTDOWN_GRACE_MS must/, raw)
    }
  })
})
