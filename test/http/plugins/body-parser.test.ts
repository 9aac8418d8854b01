import assert from 'node:assert/strict'
import { after, before, describe, it, type TestContext } from 'node:test'
import Fastify, { type FastifyInstance } from 'fastify'
import { ignoreContentTypes, parseBodiesAsJson } from '../../../src/http/plugins/body-parser.ts'
import { partValidators } from '../../../src/http/plugins/validation.ts'
import { buildTestApp, dune, issueToken, listenOnLoopback } from '../../helpers.ts'
import { parseResponse, sendRaw } from '../../raw-http.ts'

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

describe('body parsers belong to the routes they serve', () => {
  /** The service's rules on a small app: a JSON scope, a CSV scope with a larger limit, and a route taking no body. */
  async function scopedApp(t: TestContext) {
    const app = Fastify({ bodyLimit: 1024, schemaController: partValidators })
    t.after(() => app.close())
    await app.register(ignoreContentTypes)
    await app.register(async (scope) => {
      parseBodiesAsJson(scope)
      scope.post('/json', { schema: { body: { type: 'object' } } }, async (request) => ({ body: request.body }))
      const integer = { type: 'object', properties: { n: { type: 'integer' } } }
      scope.post('/typed', { schema: { querystring: integer, body: integer } }, async (request) => ({
        query: request.query,
        body: request.body,
      }))
    })
    await app.register(async (scope) => {
      scope.removeAllContentTypeParsers()
      scope.addContentTypeParser('text/csv', { parseAs: 'string' }, (_request, body, done) => done(null, body))
      scope.post('/csv', { bodyLimit: 4096, config: { readsContentType: true } }, async (request) => ({
        contentType: request.headers['content-type'],
        length: (request.body as string).length,
      }))
    })
    app.post('/none', async (request) => ({ body: request.body ?? null }))
    return app
  }

  it('reads JSON whatever the header inside the JSON scope only', async (t) => {
    const app = await scopedApp(t)
    const json = await app.inject({ method: 'POST', url: '/json', headers: { 'content-type': 'text/csv' }, payload: '{"a":1}' })
    assert.deepEqual(json.json(), { body: { a: 1 } })
    const none = await app.inject({ method: 'POST', url: '/none', headers: { 'content-type': ';;;' }, payload: '{"a":1}' })
    assert.deepEqual(none.json(), { body: null })
  })

  it('lets a scope parse by Content-Type under a body limit of its own', async (t) => {
    const app = await scopedApp(t)
    const csv = 'title,author,year\n'.padEnd(2048, 'x')
    const read = await app.inject({ method: 'POST', url: '/csv', headers: { 'content-type': 'text/csv' }, payload: csv })
    assert.deepEqual(read.json(), { contentType: 'text/csv', length: 2048 })
    const elsewhere = await app.inject({ method: 'POST', url: '/json', headers: { 'content-type': 'text/csv' }, payload: csv })
    assert.equal(elsewhere.statusCode, 413)
    const unknown = await app.inject({ method: 'POST', url: '/csv', headers: { 'content-type': 'application/json' }, payload: '{}' })
    assert.equal(unknown.statusCode, 415)
  })

  it('coerces the query string to the types its schema names, and never a body', async (t) => {
    const app = await scopedApp(t)
    const typed = await app.inject({ method: 'POST', url: '/typed?n=42', payload: { n: 7 } })
    assert.deepEqual(typed.json(), { query: { n: 42 }, body: { n: 7 } })
    const text = await app.inject({ method: 'POST', url: '/typed?n=42', payload: { n: '7' } })
    assert.equal(text.statusCode, 400)
  })
})
