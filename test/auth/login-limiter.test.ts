import assert from 'node:assert/strict'
import { afterEach, beforeEach, describe, it } from 'node:test'
import { clientKey, StoreLoginLimiter } from '../../src/auth/login-limiter.ts'
import type { Store } from '../../src/store/store.ts'
import { storeEngines } from '../helpers.ts'

const WINDOW_MS = 15 * 60 * 1000

function clock(start = 1_000_000) {
  let now = start
  return { now: () => now, advance: (ms: number) => (now += ms) }
}

describe('clientKey', () => {
  it('counts a whole IPv6 /64 as one client and an IPv4-mapped address as IPv4', () => {
    assert.equal(clientKey('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64')
    assert.equal(clientKey('2001:0db8:0001:0002:ffff:ffff:ffff:ffff'), '2001:db8:1:2::/64')
    assert.equal(clientKey('2001:db8::1'), '2001:db8:0:0::/64')
    assert.equal(clientKey('::1'), '0:0:0:0::/64')
    assert.equal(clientKey('fe80::1%eth0'), 'fe80:0:0:0::/64')
    assert.equal(clientKey('::ffff:192.0.2.1'), '192.0.2.1')
    assert.equal(clientKey('192.0.2.1'), '192.0.2.1')
  })
})

for (const engine of storeEngines) {
  describe(`StoreLoginLimiter on ${engine.name}`, { skip: engine.skip }, () => {
    let store: Store
    let time: ReturnType<typeof clock>
    let limiter: StoreLoginLimiter

    beforeEach(async () => {
      store = await engine.open()
      time = clock()
      limiter = new StoreLoginLimiter(store.loginFailures, { now: time.now })
    })
    afterEach(() => store.close())

    it('refuses after the tenth failure until the oldest leaves the 15-minute window', async () => {
      for (let i = 0; i < 9; i++) {
        await limiter.recordFailure('203.0.113.7')
        time.advance(1000)
      }
      assert.equal(await limiter.retryAfterSeconds('203.0.113.7'), 0)
      await limiter.recordFailure('203.0.113.7')
      // The first failure was 9 s ago; it leaves the window 15 min after it happened.
      assert.equal(await limiter.retryAfterSeconds('203.0.113.7'), 900 - 9)
      time.advance((900 - 9) * 1000 - 1)
      assert.equal(await limiter.retryAfterSeconds('203.0.113.7'), 1)
      time.advance(1)
      assert.equal(await limiter.retryAfterSeconds('203.0.113.7'), 0)
      // Nine failures are still inside the window: one more refuses again.
      await limiter.recordFailure('203.0.113.7')
      assert.ok((await limiter.retryAfterSeconds('203.0.113.7')) > 0)
    })

    it('waits for the tenth newest failure when more than ten were counted', async () => {
      for (let i = 0; i < 12; i++) {
        await limiter.recordFailure('203.0.113.7')
        time.advance(1000)
      }
      // Failures at 0 s … 11 s, now 12 s: refused until the one at 2 s leaves the window.
      assert.equal(await limiter.retryAfterSeconds('203.0.113.7'), 900 - 10)
    })

    it('counts each address on its own', async () => {
      for (let i = 0; i < 10; i++) await limiter.recordFailure('203.0.113.7')
      assert.ok((await limiter.retryAfterSeconds('203.0.113.7')) > 0)
      assert.equal(await limiter.retryAfterSeconds('203.0.113.8'), 0)
    })

    it('forgets failures older than the window', async () => {
      for (let i = 0; i < 9; i++) await limiter.recordFailure('203.0.113.7')
      time.advance(WINDOW_MS)
      await limiter.recordFailure('203.0.113.7')
      assert.equal(await limiter.retryAfterSeconds('203.0.113.7'), 0)
    })

    it('deletes the failures of every address once they are older than the window', async () => {
      const addresses = Array.from({ length: 500 }, (_, i) => `10.0.${i >> 8}.${i & 255}`)
      for (const address of addresses) await limiter.recordFailure(address)
      time.advance(WINDOW_MS)
      await limiter.recordFailure('203.0.113.7')
      for (const address of [...addresses.slice(0, 3), addresses.at(-1)!]) {
        assert.deepEqual(await store.loginFailures.recent(clientKey(address), 0, 10), [])
      }
      assert.deepEqual(await store.loginFailures.recent('203.0.113.7', 0, 10), [time.now()])
    })

    it('counts an IPv6 /64 together', async () => {
      for (let i = 0; i < 10; i++) await limiter.recordFailure(`2001:db8:1:2::${i.toString(16)}`)
      assert.ok((await limiter.retryAfterSeconds('2001:db8:1:2:ffff::9')) > 0)
      assert.equal(await limiter.retryAfterSeconds('2001:db8:1:3::1'), 0)
    })
  })
}
