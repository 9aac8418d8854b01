import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createLoginGate } from '../../src/auth/login-gate.ts'
import { StoreLoginLimiter } from '../../src/auth/login-limiter.ts'
import type { LoginFailureRepository } from '../../src/store/store.ts'

/** Failed logins in memory, counting the reads of the count. */
function countingStore() {
  const failures: { key: string; at: number }[] = []
  const store: LoginFailureRepository & { reads: number } = {
    reads: 0,
    async record(key, at) {
      failures.push({ key, at })
    },
    async recent(key, since, limit) {
      store.reads++
      return failures
        .filter((f) => f.key === key && f.at > since)
        .map((f) => f.at)
        .reverse()
        .slice(0, limit)
    },
  }
  return store
}

/** The status each attempt was answered with: 200 when it passed. */
function outcome(attempt: Promise<unknown>): Promise<number> {
  return attempt.then(
    () => 200,
    (err: { statusCode?: number }) => err.statusCode ?? 500,
  )
}

describe('login gate', () => {
  it('lets concurrent right pairs of one client through on one read of its count', async () => {
    const store = countingStore()
    const { decide } = createLoginGate(new StoreLoginLimiter(store))
    const statuses = await Promise.all(Array.from({ length: 20 }, () => outcome(decide('198.51.100.1', () => true))))
    assert.deepEqual(statuses, Array(20).fill(200))
    assert.equal(store.reads, 1)
  })

  it('checks each attempt after a wrong one against a count that includes it', async () => {
    const store = countingStore()
    const { decide } = createLoginGate(new StoreLoginLimiter(store, { maxFailures: 2 }))
    const pairs = [true, false, true, false, true, false]
    const statuses = await Promise.all(pairs.map((right) => outcome(decide('198.51.100.1', () => right))))
    assert.deepEqual(statuses, [200, 401, 200, 401, 429, 429])
    assert.equal(store.reads, 3)
  })

  it('answers every waiting attempt with the failure of the count it waited for', async () => {
    const store = countingStore()
    store.recent = async () => {
      throw Object.assign(new Error('store away'), { statusCode: 503 })
    }
    const { decide } = createLoginGate(new StoreLoginLimiter(store))
    const statuses = await Promise.all(Array.from({ length: 3 }, () => outcome(decide('198.51.100.1', () => true))))
    assert.deepEqual(statuses, [503, 503, 503])
    // A later attempt reads again.
    store.recent = async () => []
    assert.equal(await outcome(decide('198.51.100.1', () => true)), 200)
  })
})

describe('login gate prechecks', () => {
  it('refuses a limited client, and lets an attempt go on from a precheck when no failure was recorded since', async () => {
    const store = countingStore()
    const gate = createLoginGate(new StoreLoginLimiter(store, { maxFailures: 1 }))
    const precheck = await gate.precheck('198.51.100.1')
    assert.equal(store.reads, 1)
    assert.equal(await outcome(gate.decide('198.51.100.1', () => true, precheck)), 200)
    assert.equal(store.reads, 1)
    // A failure recorded after a precheck was read makes that precheck stale: the count is read again.
    const stale = await gate.precheck('198.51.100.1')
    assert.equal(await outcome(gate.decide('198.51.100.1', () => false)), 401)
    assert.equal(await outcome(gate.decide('198.51.100.1', () => true, stale)), 429)
    assert.equal(await outcome(gate.precheck('198.51.100.1')), 429)
  })
})

describe('StoreLoginLimiter reads', () => {
  it('shares one read among the checks of one client in one turn, and reads again after a failure', async () => {
    const store = countingStore()
    const limiter = new StoreLoginLimiter(store, { maxFailures: 1 })
    assert.deepEqual(await Promise.all([limiter.retryAfterSeconds('198.51.100.1'), limiter.retryAfterSeconds('198.51.100.1')]), [0, 0])
    assert.equal(store.reads, 1)
    const before = limiter.retryAfterSeconds('198.51.100.2')
    await limiter.recordFailure('198.51.100.2')
    assert.equal(await before, 0)
    assert.ok((await limiter.retryAfterSeconds('198.51.100.2')) > 0)
  })
})
