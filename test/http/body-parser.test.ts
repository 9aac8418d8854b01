import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { buildTestApp, dune, issueToken, listenOnLoopback } from '../helpers.ts'
import { parseResponse, sendRaw } from '../raw-http.ts'

describe('Content-Type never stops a JSON body', () => {
  let app: FastifyInstance
  let port: number
  let token: string

  before(async () => {
    app = await buildTestApp()
    port = await listenOnLoopback(app)
    token = await issueToken(app)
  })
  after(() => app.close())

  async function send(method: string, path: string, contentType: string, body: string) {
    const head = `${method} ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: ${token}\r\nContent-Type: ${contentType}\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`
    const res = parseResponse(await sendRaw(port, Buffer.concat([Buffer.from(head, 'latin1'), Buffer.from(body)])))
    return { status: res.status, body: JSON.parse(res.body.toString()) }
  }

  for (const contentType of ['', ';;;', 'a b', 'application/json\u00ff', '/', 'text/plain; charset']) {
    it(`parses a body sent with the malformed Content-Type ${JSON.stringify(contentType)}`, async () => {
      const created = await send('POST', '/book', contentType, JSON.stringify(dune))
      assert.equal(created.status, 201)
      assert.deepEqual({ ...created.body.data, id: 0 }, { ...dune, id: 0 })
      const broken = await send('POST', '/book', contentType, '{')
      assert.deepEqual(broken, { status: 400, body: { status: 400, message: 'Invalid input', data: null } })
      const deleted = await send('DELETE', `/book/${created.body.data.id}`, contentType, 'ignored')
      assert.equal(deleted.status, 200)
    })
  }
})
