import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'
import type { InjectOptions } from 'fastify'
import { buildTestApp, dune, issueToken, TEST_PASSWORD, TEST_USERNAME, withToken } from '../../helpers.ts'

const LISTED = 'https://books.example.org'
const FOREIGN = 'https://evil.example.net'
const HOST = 'catalogue.example.org'

async function appFor(t: TestContext) {
  const app = await buildTestApp({ corsOrigins: [LISTED] })
  t.after(() => app.close())
  return app
}

const badLogin = (headers: Record<string, string>): InjectOptions => ({
  method: 'POST',
  url: '/token',
  headers: { host: HOST, 'content-type': 'text/plain', ...headers },
  payload: JSON.stringify({ username: TEST_USERNAME, password: 'wrong' }),
})

const FOREIGN_BROWSERS: Record<string, Record<string, string>> = {
  'Origin of another site': { origin: FOREIGN },
  'Origin and Sec-Fetch-Site: cross-site': { origin: FOREIGN, 'sec-fetch-site': 'cross-site' },
  'Sec-Fetch-Site: cross-site alone': { 'sec-fetch-site': 'cross-site' },
  'Sec-Fetch-Site: same-site from an unlisted sibling': { origin: `https://other.${HOST}`, 'sec-fetch-site': 'same-site' },
  'Origin: null (sandboxed page)': { origin: 'null' },
}

describe('cross-site requests', () => {
  for (const [name, headers] of Object.entries(FOREIGN_BROWSERS)) {
    it(`refuses a login from a page on another site (${name}) with 403 before it counts`, async (t) => {
      const app = await appFor(t)
      for (let i = 0; i < 12; i++) {
        const res = await app.inject(badLogin(headers))
        assert.equal(res.statusCode, 403)
        assert.deepEqual(res.json(), { status: 403, message: 'Forbidden', data: null })
        assert.equal(res.headers['x-content-type-options'], 'nosniff')
      }
      // None of the refused attempts counted: the visitor can still log in.
      const login = await app.inject({ method: 'POST', url: '/token', payload: { username: TEST_USERNAME, password: TEST_PASSWORD } })
      assert.equal(login.statusCode, 200)
    })
  }

  it('refuses every route that changes state, whatever the token, and writes nothing', async (t) => {
    const app = await appFor(t)
    const token = await issueToken(app)
    const created = await app.inject(withToken(token, { method: 'POST', url: '/book', payload: dune }))
    const id = created.json().data.id
    const requests: (InjectOptions & { url: string })[] = [
      { method: 'POST', url: '/book', payload: dune },
      { method: 'PUT', url: `/book/${id}`, payload: { title: 'Changed' } },
      { method: 'DELETE', url: `/book/${id}` },
      { method: 'POST', url: '/token', payload: { username: TEST_USERNAME, password: TEST_PASSWORD } },
    ]
    for (const request of requests) {
      const res = await app.inject(withToken(token, { ...request, headers: { origin: FOREIGN, 'sec-fetch-site': 'cross-site' } }))
      assert.equal(res.statusCode, 403, `${request.method} ${request.url}`)
      assert.deepEqual(res.json(), { status: 403, message: 'Forbidden', data: null })
    }
    const list = await app.inject(withToken(token, { method: 'GET', url: '/books' }))
    assert.deepEqual(list.json().data, [{ id, ...dune }])
  })

  it('lets reads from any page through', async (t) => {
    const app = await appFor(t)
    const token = await issueToken(app)
    const res = await app.inject(
      withToken(token, { method: 'GET', url: '/books', headers: { origin: FOREIGN, 'sec-fetch-site': 'cross-site' } }),
    )
    assert.equal(res.statusCode, 200)
  })

  const ALLOWED: Record<string, Record<string, string>> = {
    'curl and servers: neither header': {},
    'the service’s own page: Sec-Fetch-Site: same-origin': { origin: `https://${HOST}`, 'sec-fetch-site': 'same-origin' },
    'the service’s own page in an older browser: Origin only': { origin: `https://${HOST}` },
    'a listed origin': { origin: LISTED, 'sec-fetch-site': 'cross-site' },
    'a listed origin in an older browser': { origin: LISTED },
    'a request no page made (typed or bookmarked)': { 'sec-fetch-site': 'none' },
  }
  for (const [name, headers] of Object.entries(ALLOWED)) {
    it(`keeps working for ${name}`, async (t) => {
      const app = await appFor(t)
      const login = await app.inject({
        method: 'POST',
        url: '/token',
        headers: { host: HOST, ...headers },
        payload: { username: TEST_USERNAME, password: TEST_PASSWORD },
      })
      assert.equal(login.statusCode, 200)
      const wrong = await app.inject(badLogin(headers))
      assert.equal(wrong.statusCode, 401)
      const token = login.json().data.token
      const created = await app.inject(
        withToken(token, { method: 'POST', url: '/book', headers: { host: HOST, ...headers }, payload: dune }),
      )
      assert.equal(created.statusCode, 201)
    })
  }
})
