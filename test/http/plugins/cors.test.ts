import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { buildTestApp, issueToken, withToken } from '../../helpers.ts'

const ORIGIN = 'https://books.example.org'
const preflight = (url: string, origin: string) => ({
  method: 'OPTIONS' as const,
  url,
  headers: { origin, 'access-control-request-method': 'PUT', 'access-control-request-headers': 'authorization, if-match' },
})

describe('CORS', () => {
  it('is off when no origins are configured: no CORS headers, OPTIONS is 405', async () => {
    const app = await buildTestApp()
    const token = await issueToken(app)
    const get = await app.inject(withToken(token, { method: 'GET', url: '/books', headers: { origin: ORIGIN } }))
    assert.equal(get.statusCode, 200)
    assert.equal(get.headers['access-control-allow-origin'], undefined)
    const options = await app.inject(preflight('/book/1', ORIGIN))
    assert.equal(options.statusCode, 405)
    assert.equal(options.headers['access-control-allow-origin'], undefined)
    assert.deepEqual(options.json(), { status: 405, message: 'Method not allowed', data: null })
    await app.close()
  })

  it('answers a preflight from a listed origin on every route, before any token check', async () => {
    const app = await buildTestApp({ corsOrigins: [ORIGIN] })
    for (const url of ['/book/1', '/books', '/book', '/token', '/books/changes']) {
      const res = await app.inject(preflight(url, ORIGIN))
      assert.equal(res.statusCode, 204, url)
      assert.equal(res.headers['access-control-allow-origin'], ORIGIN)
      assert.match(String(res.headers['access-control-allow-methods']), /PUT/)
      assert.match(String(res.headers['access-control-allow-headers']), /Authorization/)
      assert.match(String(res.headers['access-control-allow-headers']), /If-Match/)
      // A page that resumes the changes where it left off says so.
      assert.match(String(res.headers['access-control-allow-headers']), /Last-Event-ID/)
      // The typed client sends every write with a key, so that retrying it is safe.
      assert.match(String(res.headers['access-control-allow-headers']), /Idempotency-Key/)
      assert.equal(res.headers['x-content-type-options'], 'nosniff')
    }
    await app.close()
  })

  it('lets a listed origin read the seq of a snapshot, to follow the changes from there', async () => {
    const app = await buildTestApp({ corsOrigins: [ORIGIN] })
    const token = await issueToken(app)
    const res = await app.inject(withToken(token, { method: 'GET', url: '/books', headers: { origin: ORIGIN } }))
    assert.equal(res.headers['x-change-seq'], '0')
    assert.match(String(res.headers['access-control-expose-headers']), /X-Change-Seq/)
    await app.close()
  })

  it('lets a listed origin read the count of a find, and the file name of an export', async () => {
    const app = await buildTestApp({ corsOrigins: [ORIGIN] })
    const token = await issueToken(app)
    const found = await app.inject(withToken(token, { method: 'GET', url: '/books?count=true&limit=1', headers: { origin: ORIGIN } }))
    assert.equal(found.headers['x-total-count'], '0')
    assert.match(String(found.headers['access-control-expose-headers']), /X-Total-Count/)
    const exported = await app.inject(withToken(token, { method: 'GET', url: '/books/export?format=csv', headers: { origin: ORIGIN } }))
    assert.match(String(exported.headers['content-disposition']), /attachment/)
    assert.match(String(exported.headers['access-control-expose-headers']), /Content-Disposition/)
    await app.close()
  })

  it('lets a listed origin read answers and their ETag', async () => {
    const app = await buildTestApp({ corsOrigins: [ORIGIN] })
    const token = await issueToken(app)
    const res = await app.inject(
      withToken(token, { method: 'POST', url: '/book', headers: { origin: ORIGIN }, payload: { title: 'T', author: 'A', year: 1 } }),
    )
    assert.equal(res.statusCode, 201)
    assert.equal(res.headers['access-control-allow-origin'], ORIGIN)
    assert.match(String(res.headers['access-control-expose-headers']), /ETag/)
    assert.equal(res.headers['access-control-allow-credentials'], undefined)
    await app.close()
  })

  it('gives an origin that is not listed no CORS headers', async () => {
    const app = await buildTestApp({ corsOrigins: [ORIGIN] })
    const res = await app.inject(preflight('/books', 'https://evil.example.net'))
    assert.equal(res.statusCode, 405)
    assert.equal(res.headers['access-control-allow-origin'], undefined)
    const token = await issueToken(app)
    const get = await app.inject(withToken(token, { method: 'GET', url: '/books', headers: { origin: 'https://evil.example.net' } }))
    assert.equal(get.headers['access-control-allow-origin'], undefined)
    await app.close()
  })

  it('leaves an OPTIONS request that is no preflight to the 405 answer with Allow', async () => {
    const app = await buildTestApp({ corsOrigins: [ORIGIN] })
    const res = await app.inject({ method: 'OPTIONS', url: '/book/1', headers: { origin: ORIGIN } })
    assert.equal(res.statusCode, 405)
    assert.equal(res.headers.allow, 'DELETE, GET, HEAD, PUT')
    assert.deepEqual(res.json(), { status: 405, message: 'Method not allowed', data: null })
    await app.close()
  })
})
