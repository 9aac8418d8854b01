import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ConfigError, loadConfig } from '../src/config.ts'

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
