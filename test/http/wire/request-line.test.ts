import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { buildTestApp, listenOnLoopback } from '../../helpers.ts'
import { parseResponse, sendRaw } from '../../raw-http.ts'

const BAD_REQUEST = { status: 400, message: 'Bad request', data: null }

describe('the request line and Host', () => {
  let app: FastifyInstance
  let port: number
  before(async () => {
    app = await buildTestApp()
    port = await listenOnLoopback(app)
  })
  after(() => app.close())

  const refused: Record<string, string> = {
    'a request line without an HTTP version': 'GET /healthz\r\n\r\n',
    'duplicate Host headers': 'GET /healthz HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\nConnection: close\r\n\r\n',
    'duplicate Host headers in HTTP/1.0': 'GET /healthz HTTP/1.0\r\nHost: a.example\r\nhost: a.example\r\n\r\n',
    'an HTTP/1.1 request without Host': 'GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n',
    'a POST without Host': 'POST /token HTTP/1.1\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}',
  }
  for (const [name, request] of Object.entries(refused)) {
    it(`refuses ${name} with the 400 envelope, nosniff, and closes`, async () => {
      const res = parseResponse(await sendRaw(port, request))
      assert.equal(res.status, 400)
      assert.equal(res.headers['content-type'], 'application/json; charset=utf-8')
      assert.equal(res.headers['x-content-type-options'], 'nosniff')
      assert.equal(res.headers.connection, 'close')
      assert.deepEqual(JSON.parse(res.body.toString()), BAD_REQUEST)
    })
  }

  const accepted: Record<string, string> = {
    'an HTTP/1.1 request with one Host': 'GET /healthz HTTP/1.1\r\nHost: a.example\r\nConnection: close\r\n\r\n',
    'an HTTP/1.0 request without Host': 'GET /healthz HTTP/1.0\r\n\r\n',
  }
  for (const [name, request] of Object.entries(accepted)) {
    it(`answers ${name}`, async () => {
      const res = parseResponse(await sendRaw(port, request))
      assert.equal(res.status, 200)
    })
  }
})
