import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { clientKey, LoginLimiter } from '../../src/auth/login-limiter.ts'

function clock(start = 1_000_000) {
  let now = start
  return { now: () => now, advance: (ms: number) => (now += ms) }
}

describe('LoginLimiter', () => {
  it('refuses after the tenth failure until the oldest leaves the 15-minute window', () => {
    const time = clock()
    const limiter = new LoginLimiter({ now: time.now })
    for (let i = 0; i < 9; i++) {
      limiter.recordFailure('203.0.113.7')
      time.advance(1000)
    }
    assert.equal(limiter.retryAfterSeconds('203.0.113.7'), 0)
    limiter.recordFailure('203.0.113.7')
    // The first failure was 9 s ago; it leaves the window 15 min after it happened.
    assert.equal(limiter.retryAfterSeconds('203.0.113.7'), 900 - 9)
    time.advance((900 - 9) * 1000 - 1)
    assert.equal(limiter.retryAfterSeconds('203.0.113.7'), 1)
    time.advance(1)
    assert.equal(limiter.retryAfterSeconds('203.0.113.7'), 0)
    // Nine failures are still inside the window: one more refuses again.
    limiter.recordFailure('203.0.113.7')
    assert.ok(limiter.retryAfterSeconds('203.0.113.7') > 0)
  })

  it('counts each address on its own', () => {
    const limiter = new LoginLimiter({ now: clock().now })
    for (let i = 0; i < 10; i++) limiter.recordFailure('203.0.113.7')
    assert.ok(limiter.retryAfterSeconds('203.0.113.7') > 0)
    assert.equal(limiter.retryAfterSeconds('203.0.113.8'), 0)
  })

  it('forgets failures older than the window', () => {
    const time = clock()
    const limiter = new LoginLimiter({ now: time.now })
    for (let i = 0; i < 9; i++) limiter.recordFailure('203.0.113.7')
    time.advance(15 * 60 * 1000)
    limiter.recordFailure('203.0.113.7')
    assert.equal(limiter.retryAfterSeconds('203.0.113.7'), 0)
  })

  it('remembers a bounded number of addresses whatever arrives', () => {
    const limiter = new LoginLimiter({ now: clock().now, maxAddresses: 100 })
    for (let i = 0; i < 5000; i++) limiter.recordFailure(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`)
    assert.equal(limiter.size, 100)
    // The most recent addresses are the ones kept.
    for (let i = 0; i < 9; i++) limiter.recordFailure('10.0.19.135')
    assert.ok(limiter.retryAfterSeconds('10.0.19.135') > 0)
  })

  it('forgets an address once its failures have left the window', () => {
    const time = clock()
    const limiter = new LoginLimiter({ now: time.now })
    limiter.recordFailure('203.0.113.7')
    time.advance(15 * 60 * 1000 + 1)
    limiter.retryAfterSeconds('203.0.113.7')
    assert.equal(limiter.size, 0)
  })

  it('counts a whole IPv6 /64 as one client and an IPv4-mapped address as IPv4', () => {
    assert.equal(clientKey('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64')
    assert.equal(clientKey('2001:0db8:0001:0002:ffff:ffff:ffff:ffff'), '2001:db8:1:2::/64')
    assert.equal(clientKey('2001:db8::1'), '2001:db8:0:0::/64')
    assert.equal(clientKey('::1'), '0:0:0:0::/64')
    assert.equal(clientKey('fe80::1%eth0'), 'fe80:0:0:0::/64')
    assert.equal(clientKey('::ffff:192.0.2.1'), '192.0.2.1')
    assert.equal(clientKey('192.0.2.1'), '192.0.2.1')
    const limiter = new LoginLimiter({ now: clock().now })
    for (let i = 0; i < 10; i++) limiter.recordFailure(`2001:db8:1:2::${i.toString(16)}`)
    assert.ok(limiter.retryAfterSeconds('2001:db8:1:2:ffff::9') > 0)
    assert.equal(limiter.retryAfterSeconds('2001:db8:1:3::1'), 0)
  })
})
