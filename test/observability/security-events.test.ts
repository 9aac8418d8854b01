import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { buildTestApp, TEST_PASSWORD, TEST_USERNAME } from '../helpers.ts'
import { logCollector } from '../support/log-collector.ts'

const WARN = 40

describe('security events in the log', () => {
  it('logs each failed login and each lockout at warn with the client address and request id, never the password or token', async (t) => {
    const log = logCollector()
    // warn, so that only these lines are written: the request lines are info.
    const app = await buildTestApp({ logLevel: 'warn', trustProxy: ['127.0.0.1'] }, { logStream: log.stream })
    t.after(() => app.close())
    const guess = 'a wrong guess that must not be logged'
    const attempt = (password: string, requestId: string) =>
      app.inject({
        method: 'POST',
        url: '/token',
        remoteAddress: '127.0.0.1',
        headers: { 'x-forwarded-for': '203.0.113.7', 'x-request-id': requestId },
        payload: { username: TEST_USERNAME, password },
      })

    for (let i = 0; i < 10; i++) assert.equal((await attempt(guess, `failed-${i}`)).statusCode, 401)
    const locked = await attempt(TEST_PASSWORD, 'locked-out')
    assert.equal(locked.statusCode, 429)

    const failures = log.lines.filter((line) => String(line.msg).startsWith('login failed'))
    assert.equal(failures.length, 10)
    failures.forEach((line, i) => {
      assert.equal(line.level, WARN)
      assert.equal(line.clientAddress, '203.0.113.7')
      assert.equal(line.requestId, `failed-${i}`)
    })
    const lockouts = log.lines.filter((line) => String(line.msg).startsWith('login refused'))
    assert.equal(lockouts.length, 1)
    assert.equal(lockouts[0]!.level, WARN)
    assert.equal(lockouts[0]!.clientAddress, '203.0.113.7')
    assert.equal(lockouts[0]!.requestId, 'locked-out')
    assert.ok(Number(lockouts[0]!.retryAfterSeconds) > 0)

    const written = JSON.stringify(log.lines)
    assert.ok(!written.includes(guess))
    assert.ok(!written.includes(TEST_PASSWORD))
  })

  it('does not log a successful login at warn, nor its token', async (t) => {
    const log = logCollector()
    const app = await buildTestApp({ logLevel: 'info' }, { logStream: log.stream })
    t.after(() => app.close())
    const res = await app.inject({ method: 'POST', url: '/token', payload: { username: TEST_USERNAME, password: TEST_PASSWORD } })
    assert.equal(res.statusCode, 200)
    assert.deepEqual(
      log.lines.filter((line) => Number(line.level) >= WARN),
      [],
    )
    assert.ok(!JSON.stringify(log.lines).includes(res.json().data.token))
  })
})
