import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { buildTestApp, dune, issueToken, TEST_PASSWORD, TEST_USERNAME, withToken } from '../helpers.ts'
import { logCollector } from '../support/log-collector.ts'

describe('request tracing', () => {
  it('writes exactly one info line per request with method, route pattern, status, duration and request id', async () => {
    const log = logCollector()
    const app = await buildTestApp({ logLevel: 'info' }, { logStream: log.stream })
    const token = await issueToken(app)
    const created = await app.inject(withToken(token, { method: 'POST', url: '/book', payload: dune }))
    const before = log.lines.length
    const res = await app.inject(withToken(token, { method: 'GET', url: `/book/${created.json().data.id}` }))
    await app.close()

    const lines = log.lines.slice(before).filter((line) => line.requestId === res.headers['x-request-id'])
    assert.equal(lines.length, 1)
    const [line] = lines
    assert.equal(line!.level, 30)
    assert.equal(line!.method, 'GET')
    assert.equal(line!.route, '/book/:id')
    assert.equal(line!.status, 200)
    assert.equal(typeof line!.durationMs, 'number')
  })

  it('labels requests that match no route without their URL', async () => {
    const log = logCollector()
    const app = await buildTestApp({ logLevel: 'info' }, { logStream: log.stream })
    await app.inject({ method: 'GET', url: '/no/such/path' })
    await app.close()
    assert.equal(log.lines.find((line) => line.status === 404)?.route, 'unmatched')
    assert.doesNotMatch(log.text(), /no\/such\/path/)
  })

  it('traces requests the router refuses before any route, too', async () => {
    const log = logCollector()
    const app = await buildTestApp({ logLevel: 'info' }, { logStream: log.stream })
    const res = await app.inject({ method: 'GET', url: '/book/%E0%A4%A', headers: { 'x-request-id': 'bad-url-1' } })
    const metrics = await app.inject({ method: 'GET', url: '/metrics' })
    await app.close()
    assert.equal(res.statusCode, 400)
    assert.equal(res.headers['x-request-id'], 'bad-url-1')
    const lines = log.lines.filter((line) => line.requestId === 'bad-url-1')
    assert.equal(lines.length, 1)
    assert.equal(lines[0]!.status, 400)
    assert.equal(lines[0]!.route, 'unmatched')
    assert.match(metrics.body, /^http_requests_total\{method="GET",route="unmatched",status="400"\} 1$/m)
  })

  it('returns a plain client request id, and generates one for a missing or unsafe id', async () => {
    const app = await buildTestApp()
    const given = await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'trace-42.a:b_c' } })
    const missing = await app.inject({ method: 'GET', url: '/healthz' })
    const unsafe = await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'a"b\\n{}' } })
    const long = await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'x'.repeat(129) } })
    const failed = await app.inject({ method: 'GET', url: '/nowhere', headers: { 'x-request-id': 'lost-1' } })
    await app.close()
    assert.equal(given.headers['x-request-id'], 'trace-42.a:b_c')
    assert.equal(failed.headers['x-request-id'], 'lost-1')
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
    for (const res of [missing, unsafe, long]) assert.match(String(res.headers['x-request-id']), uuid)
  })

  it('never logs the password, the token or the Authorization header', async () => {
    const log = logCollector()
    const app = await buildTestApp({ logLevel: 'trace' }, { logStream: log.stream })
    const token = await issueToken(app)
    await app.inject(withToken(token, { method: 'GET', url: '/books' }))
    await app.inject({ method: 'POST', url: '/token', payload: { username: TEST_USERNAME, password: 'wrong' } })
    await app.inject({ method: 'GET', url: '/books', headers: { authorization: 'not-a-token-but-secret' } })
    await app.close()
    assert.ok(log.lines.length >= 4)
    const text = log.text()
    for (const secret of [token, TEST_PASSWORD, 'not-a-token-but-secret']) assert.ok(!text.includes(secret), `logged ${secret}`)
  })

  it('honours the log level', async () => {
    const log = logCollector()
    const app = await buildTestApp({ logLevel: 'warn' }, { logStream: log.stream })
    await app.inject({ method: 'GET', url: '/healthz' })
    await app.close()
    assert.deepEqual(log.lines, [])
  })
})
