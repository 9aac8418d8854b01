import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { SqliteStore } from '../../src/store/sqlite/store.ts'
import { StoreUnavailableError, type LoginFailureRepository, type Store } from '../../src/store/store.ts'
import { buildTestApp, dune, issueToken, listenOnLoopback, TEST_PASSWORD, TEST_USERNAME } from '../helpers.ts'
import { parseResponse, sendRaw } from '../raw-http.ts'

const envelopeOf = (status: number, message: string) => ({ status, message, data: null })

/** A store whose every book operation fails with `error`; logins still work. */
function failingStore(error: () => Error): Store {
  const store = new SqliteStore({ path: ':memory:' })
  const fail = async () => {
    throw error()
  }
  Object.assign(store.books, { create: fail, get: fail, update: fail, delete: fail, restore: fail, purge: fail })
  Object.assign(store.changes, { ofBook: fail, get: fail, after: fail, latest: fail })
  Object.assign(store.trash, { list: fail, expired: fail })
  return Object.assign(store, { ping: fail, reader: { pages: fail } })
}

describe('framework errors keep the envelope', () => {
  let app: FastifyInstance
  let token: string
  before(async () => {
    app = await buildTestApp()
    token = await issueToken(app)
  })
  after(() => app.close())

  for (const [method, url] of [
    ['GET', '/nothing'],
    ['GET', '/index.html'],
    ['POST', '/books/1'],
    ['GET', '/book/1/extra'],
    ['GET', '/BOOKS'],
    ['DELETE', '/token/1'],
  ] as const) {
    test(`404 Not found for ${method} ${url}, without asking for a token`, async () => {
      const res = await app.inject({ method, url })
      assert.equal(res.statusCode, 404)
      assert.equal(res.headers['content-type'], 'application/json; charset=utf-8')
      assert.deepEqual(res.json(), envelopeOf(404, 'Not found'))
    })
  }

  const wrongMethods: Array<[string, string, string]> = [
    ['GET', '/token', 'POST'],
    ['DELETE', '/books', 'GET, HEAD'],
    ['PATCH', '/book/1', 'DELETE, GET, HEAD, PUT'],
    ['POST', '/book/1', 'DELETE, GET, HEAD, PUT'],
    ['PUT', '/book', 'POST'],
    ['OPTIONS', '/books', 'GET, HEAD'],
  ]
  for (const [method, url, allow] of wrongMethods) {
    test(`405 Method not allowed for ${method} ${url}, with Allow: ${allow}`, async () => {
      const res = await app.inject({ method: method as 'GET', url })
      assert.equal(res.statusCode, 405)
      assert.equal(res.headers.allow, allow)
      assert.deepEqual(res.json(), envelopeOf(405, 'Method not allowed'))
    })
  }

  test('413 Payload too large for a body over 64 KiB; 64 KiB itself is read', async () => {
    const padding = (size: number) => JSON.stringify({ ...dune, note: 'x'.repeat(size) })
    const over = await app.inject({ method: 'POST', url: '/book', headers: { authorization: token }, payload: padding(64 * 1024) })
    assert.equal(over.statusCode, 413)
    assert.deepEqual(over.json(), envelopeOf(413, 'Payload too large'))
    const body = padding(0)
    const exact = body.slice(0, -1) + ',"pad":"' + 'y'.repeat(64 * 1024 - body.length - 9) + '"}'
    assert.equal(Buffer.byteLength(exact), 64 * 1024)
    const atLimit = await app.inject({ method: 'POST', url: '/book', headers: { authorization: token }, payload: exact })
    assert.equal(atLimit.statusCode, 201)
  })

  test('413 also for a login body over 64 KiB', async () => {
    const res = await app.inject({ method: 'POST', url: '/token', payload: { username: 'x'.repeat(70 * 1024), password: 'y' } })
    assert.deepEqual(res.json(), envelopeOf(413, 'Payload too large'))
  })

  test('400 Bad request for a URL that cannot be decoded', async () => {
    const res = await app.inject({ method: 'GET', url: '/book/%E0%A4%A', headers: { authorization: token } })
    assert.deepEqual(res.json(), envelopeOf(400, 'Bad request'))
  })
})

describe('store failures', () => {
  test('500 Internal server error with nothing internal in the body', async () => {
    const secret = 'SQLITE_CORRUPT at /var/lib/books.db: SELECT * FROM books'
    const app = await buildTestApp({}, { store: failingStore(() => new Error(secret)) })
    try {
      const token = await issueToken(app)
      for (const [method, url] of [
        ['GET', '/books'],
        ['GET', '/book/1'],
        ['POST', '/book'],
        ['DELETE', '/book/1'],
        ['GET', '/book/1/history'],
        ['GET', '/books/trash'],
        ['GET', '/books/changes'],
        ['GET', '/books/changes?since=latest'],
        ['POST', '/book/1/restore'],
        ['DELETE', '/books/trash/1'],
      ] as const) {
        const res = await app.inject({ method, url, headers: { authorization: token }, payload: method === 'POST' ? dune : undefined })
        assert.equal(res.statusCode, 500, `${method} ${url}`)
        assert.equal(res.body, JSON.stringify(envelopeOf(500, 'Internal server error')))
      }
    } finally {
      await app.close()
    }
  })

  test('503 Service unavailable with Retry-After when the store cannot be reached', async () => {
    const app = await buildTestApp({}, { store: failingStore(() => new StoreUnavailableError(new Error('ECONNREFUSED'))) })
    try {
      const token = await issueToken(app)
      for (const [method, url] of [
        ['GET', '/books'],
        ['GET', '/book/1'],
        ['PUT', '/book/1'],
        ['POST', '/book'],
        ['GET', '/book/1/history'],
        ['GET', '/books/trash'],
        ['GET', '/books/changes'],
        ['POST', '/book/1/revert'],
      ] as const) {
        const payload = url.endsWith('/revert') ? { seq: 1 } : method === 'GET' ? undefined : dune
        const res = await app.inject({ method, url, headers: { authorization: token }, payload })
        assert.equal(res.statusCode, 503, `${method} ${url}`)
        assert.ok(Number(res.headers['retry-after']) > 0)
        assert.deepEqual(res.json(), envelopeOf(503, 'Service unavailable'))
      }
    } finally {
      await app.close()
    }
  })
})

describe('errors carry their answer', () => {
  const withStatus = (statusCode: number, headers?: Record<string, string>) =>
    Object.assign(new Error('internal detail'), { statusCode, ...(headers && { headers }) })

  for (const [error, status, message, retryAfter] of [
    [withStatus(503, { 'retry-after': '7' }), 503, 'Service unavailable', '7'],
    [withStatus(409), 409, 'Conflict', undefined],
    [withStatus(502, { 'retry-after': '7' }), 500, 'Internal server error', undefined],
  ] as const) {
    test(`an error with status ${error.statusCode} is answered ${status}`, async () => {
      const app = await buildTestApp({}, { store: failingStore(() => error) })
      try {
        const res = await app.inject({ method: 'GET', url: '/book/1', headers: { authorization: await issueToken(app) } })
        assert.equal(res.statusCode, status)
        assert.equal(res.headers['retry-after'], retryAfter)
        assert.deepEqual(res.json(), envelopeOf(status, message))
      } finally {
        await app.close()
      }
    })
  }
})

describe('POST /token when the store cannot count failed logins', () => {
  const withLoginFailures = (methods: Partial<LoginFailureRepository>) => {
    const store = new SqliteStore({ path: ':memory:' })
    Object.assign(store.loginFailures, methods)
    return store
  }
  const unavailable = () => Promise.reject(new StoreUnavailableError(new Error('ECONNREFUSED')))
  const login = (app: FastifyInstance, password: string) =>
    app.inject({ method: 'POST', url: '/token', payload: { username: TEST_USERNAME, password } })

  test('answers 503 with Retry-After to every attempt when the failures cannot be read', async () => {
    const app = await buildTestApp({}, { store: withLoginFailures({ recent: unavailable }) })
    try {
      for (const password of [TEST_PASSWORD, 'guess']) {
        const res = await login(app, password)
        assert.equal(res.statusCode, 503)
        assert.ok(Number(res.headers['retry-after']) > 0)
        assert.deepEqual(res.json(), envelopeOf(503, 'Service unavailable'))
      }
    } finally {
      await app.close()
    }
  })

  test('answers 503, not 401, to a wrong pair whose failure cannot be recorded', async () => {
    const app = await buildTestApp({}, { store: withLoginFailures({ record: unavailable }) })
    try {
      const wrong = await login(app, 'guess')
      assert.equal(wrong.statusCode, 503)
      assert.deepEqual(wrong.json(), envelopeOf(503, 'Service unavailable'))
      assert.equal((await login(app, TEST_PASSWORD)).statusCode, 200)
    } finally {
      await app.close()
    }
  })
})

describe('errors of the HTTP parser, on a real socket', () => {
  let app: FastifyInstance
  let port: number
  before(async () => {
    app = await buildTestApp()
    port = await listenOnLoopback(app)
  })
  after(() => app.close())

  const answerTo = async (request: string) => parseResponse(await sendRaw(port, request))

  test('a malformed request gets a 400 envelope', async () => {
    const res = await answerTo('GARBAGE\r\n\r\n')
    assert.equal(res.status, 400)
    assert.deepEqual(JSON.parse(res.body.toString()), envelopeOf(400, 'Bad request'))
  })

  test('headers over the size limit get a 431 envelope', async () => {
    const res = await answerTo(`GET /books HTTP/1.1\r\nHost: x\r\nAuthorization: ${'a'.repeat(20 * 1024)}\r\n\r\n`)
    assert.equal(res.status, 431)
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8')
    assert.deepEqual(JSON.parse(res.body.toString()), envelopeOf(431, 'Request header fields too large'))
  })
})
