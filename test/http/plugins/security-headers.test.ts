import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { buildTestApp, issueToken, listenOnLoopback, TEST_PASSWORD, TEST_USERNAME } from '../../helpers.ts'
import { parseResponse, sendRaw, type RawResponse } from '../../raw-http.ts'

/** Anything that tells an attacker what runs behind the service. */
const REVEALING = /fastify|node\.?js|express|undici|v\d+\.\d+\.\d+/i

describe('security headers', () => {
  let app: FastifyInstance
  let port: number
  let token: string

  before(async () => {
    app = await buildTestApp()
    port = await listenOnLoopback(app)
    token = await issueToken(app)
  })
  after(() => app.close())

  const request = (head: string, body = '') =>
    `${head}\r\nHost: localhost\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`

  const cases: Array<[string, () => string, number]> = [
    ['a login', () => request('POST /token HTTP/1.1', JSON.stringify({ username: TEST_USERNAME, password: TEST_PASSWORD })), 200],
    ['a created book', () => request(`POST /book HTTP/1.1\r\nAuthorization: ${token}`, '{"title":"T","author":"A","year":1}'), 201],
    ['a missing token', () => request('GET /books HTTP/1.1'), 401],
    ['an unknown path', () => request('GET /nowhere HTTP/1.1'), 404],
    ['a missing method', () => request('PATCH /books HTTP/1.1'), 405],
    ['an invalid body', () => request(`POST /book HTTP/1.1\r\nAuthorization: ${token}`, '{'), 400],
    ['a body over the limit', () => request(`POST /book HTTP/1.1\r\nAuthorization: ${token}`, 'x'.repeat(70_000)), 413],
    ['a request the parser refuses', () => 'GET /books HTTP/1.1\r\nBad Header\r\n\r\n', 400],
    ['oversized headers', () => request(`GET /books HTTP/1.1\r\nX-Filler: ${'x'.repeat(20_000)}`), 431],
    ['a CONNECT request', () => 'CONNECT localhost:443 HTTP/1.1\r\nHost: localhost:443\r\n\r\n', 400],
    ['an unknown expectation', () => request('GET /books HTTP/1.1\r\nExpect: coffee'), 417],
    ['a URL that cannot be decoded', () => request('GET /% HTTP/1.1'), 400],
  ]

  for (const [name, build, status] of cases) {
    it(`answers ${name} with nosniff and nothing that names the software`, async () => {
      const res: RawResponse = parseResponse(await sendRaw(port, build()))
      assert.equal(res.status, status)
      assert.equal(res.headers['x-content-type-options'], 'nosniff')
      assert.equal(res.headers['content-security-policy'], "default-src 'none'; frame-ancestors 'none'")
      assert.equal(res.headers['x-powered-by'], undefined)
      assert.equal(res.headers.server, undefined)
      for (const [header, value] of Object.entries(res.headers)) {
        assert.doesNotMatch(`${header}: ${value}`, REVEALING)
      }
      assert.doesNotMatch(res.body.toString('utf8'), REVEALING)
      const body = JSON.parse(res.body.toString('utf8'))
      assert.equal(body.status, status)
    })
  }
})
