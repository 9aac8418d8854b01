import assert from 'node:assert/strict'
import { generateKeyPairSync } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { createSigner } from 'fast-jwt'
import { buildApp } from '../../src/app.ts'
import { createTokenService } from '../../src/auth/tokens.ts'
import { SqliteStore } from '../../src/store/sqlite/store.ts'
import { createMetrics } from '../../src/observability/metrics.ts'
import { buildTestApp, issueToken, TEST_SECRET, TEST_USERNAME, testConfig } from '../helpers.ts'

const now = () => Math.floor(Date.now() / 1000)
const sign = (claims: object, options: { algorithm?: string; key?: string } = {}) =>
  createSigner({ key: options.key ?? TEST_SECRET, algorithm: (options.algorithm ?? 'HS256') as 'HS256', noTimestamp: true })(claims)
const valid = () => ({ sub: 'librarian', iat: now(), exp: now() + 900 })
const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url')

describe('token check on the book routes', () => {
  let app: FastifyInstance
  before(async () => {
    app = await buildTestApp()
  })
  after(() => app.close())

  const getBooks = (authorization?: string) =>
    app.inject({ method: 'GET', url: '/books', headers: authorization === undefined ? {} : { authorization } })

  async function assertRefused(authorization: string | undefined, message: string) {
    const res = await getBooks(authorization)
    assert.equal(res.statusCode, 401, `${authorization?.slice(0, 60)}: ${res.body}`)
    assert.deepEqual(res.json(), { status: 401, message, data: null })
  }

  for (const [name, header] of [
    ['missing', undefined],
    ['empty', ''],
    ['blank', '   '],
    ['a bare Bearer scheme', 'Bearer '],
  ] as const) {
    test(`401 Authorization token required: header ${name}`, () => assertRefused(header, 'Authorization token required'))
  }

  test('no cache may keep an answer to a signed-in request, whatever the route and the outcome', async () => {
    const token = await issueToken(app)
    const answers = [
      await getBooks(token),
      await getBooks(),
      await app.inject({ method: 'GET', url: '/book/1', headers: { authorization: token } }),
      await app.inject({
        method: 'POST',
        url: '/book',
        headers: { authorization: token },
        payload: { title: 'Dune', author: 'Frank Herbert', year: 1965 },
      }),
      await app.inject({ method: 'GET', url: '/books/export', headers: { authorization: token } }),
    ]
    for (const res of answers) assert.equal(res.headers['cache-control'], 'no-store', `${res.statusCode} ${res.body.slice(0, 80)}`)
  })

  test('the raw token is accepted, and so is Bearer <token> in any case', async () => {
    const token = await issueToken(app)
    for (const header of [token, `Bearer ${token}`, `bearer ${token}`, `BEARER ${token}`]) {
      assert.equal((await getBooks(header)).statusCode, 200, header.slice(0, 10))
    }
  })

  test('HS384 and HS512 tokens signed with the secret are accepted', async () => {
    for (const algorithm of ['HS384', 'HS512']) {
      assert.equal((await getBooks(sign(valid(), { algorithm }))).statusCode, 200, algorithm)
    }
  })

  const refused: Array<[string, () => string]> = [
    ['garbage', () => 'not-a-token'],
    ['signed with another secret', () => sign(valid(), { key: 'another-secret-of-at-least-32-bytes!!' })],
    ['alg none', () => `${b64({ alg: 'none', typ: 'JWT' })}.${b64(valid())}.`],
    [
      'alg RS256',
      () =>
        createSigner({
          key: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
          algorithm: 'RS256',
        })(valid()),
    ],
    ['no exp claim', () => sign({ sub: 'librarian' })],
    ['expired', () => sign({ ...valid(), iat: now() - 1000, exp: now() - 10 })],
    ['nbf in the future', () => sign({ ...valid(), nbf: now() + 600 })],
    [
      'a tampered payload',
      () => {
        const [header, , signature] = sign(valid()).split('.')
        return `${header}.${b64({ ...valid(), sub: 'admin' })}.${signature}`
      },
    ],
    ['over 8 KiB', () => sign({ ...valid(), padding: 'x'.repeat(9000) })],
  ]
  for (const [name, token] of refused) {
    test(`401 Invalid token: ${name}`, () => assertRefused(token(), 'Invalid token'))
  }

  test('nbf in the past is accepted', async () => {
    assert.equal((await getBooks(sign({ ...valid(), nbf: now() - 60 }))).statusCode, 200)
  })

  test('the check runs before the body is read: no token gets 401 whatever the body', async () => {
    for (const payload of ['{broken', 'x'.repeat(70 * 1024)]) {
      const res = await app.inject({ method: 'POST', url: '/book', headers: { 'content-type': 'application/json' }, payload })
      assert.deepEqual(res.json(), { status: 401, message: 'Authorization token required', data: null })
    }
  })

  test('the check comes before the id: no token on /book/abc gets 401', async () => {
    for (const method of ['GET', 'PUT', 'DELETE'] as const) {
      const res = await app.inject({ method, url: '/book/abc' })
      assert.equal(res.statusCode, 401, method)
    }
  })

  test('every protected route is guarded', async () => {
    const routes = [
      ['POST', '/book'],
      ['GET', '/books'],
      ['GET', '/book/1'],
      ['PUT', '/book/1'],
      ['DELETE', '/book/1'],
    ] as const
    for (const [method, url] of routes) {
      const missing = await app.inject({ method, url })
      assert.equal(missing.json().message, 'Authorization token required', `${method} ${url}`)
      const invalid = await app.inject({ method, url, headers: { authorization: 'x.y.z' } })
      assert.equal(invalid.json().message, 'Invalid token', `${method} ${url}`)
    }
  })
})

describe('secret rotation', () => {
  const oldSecret = 'the-secret-before-rotation-32-bytes-long'
  let app: FastifyInstance
  before(async () => {
    app = await buildTestApp({ secret: TEST_SECRET, previousSecret: oldSecret })
  })
  after(() => app.close())

  test('tokens signed with SECRET_TOKEN_PREVIOUS still verify', async () => {
    const res = await app.inject({ method: 'GET', url: '/books', headers: { authorization: sign(valid(), { key: oldSecret }) } })
    assert.equal(res.statusCode, 200)
  })

  test('SECRET_TOKEN_PREVIOUS never signs: new tokens verify with SECRET_TOKEN alone', async () => {
    const token = await issueToken(app)
    assert.notEqual(createTokenService({ secret: TEST_SECRET }).verify(token), undefined)
    assert.equal(createTokenService({ secret: oldSecret }).verify(token), undefined)
  })
})

describe('the access a route declares', () => {
  let app: FastifyInstance
  const stamps = new Map<string, number>()
  before(async () => {
    const store = new SqliteStore({ path: ':memory:' })
    for (const [username, role] of [
      ['someone', 'editor'],
      ['reading', 'reader'],
    ] as const) {
      const user = await store.accounts.createUser({ username, role, passwordHash: 'none', created: Date.now() })
      stamps.set(username, user!.stamp)
    }
    app = await buildApp(testConfig(), { store, metrics: createMetrics({ processMetrics: false }) })
    // Routes that ask for each role: the check is the one hook's.
    for (const access of ['reader', 'editor', 'admin'] as const) {
      app.post(`/only/${access}`, { config: { access } }, async ({ principal: { actor, username, role } }) => ({
        status: 200,
        message: 'OK',
        data: { actor, username, role },
      }))
    }
    await app.ready()
  })
  after(() => app.close())

  const ask = (path: string, token: string) => app.inject({ method: 'POST', url: path, headers: { authorization: token }, payload: '{' })
  const tokenOf = (sub: string, role: string) => sign({ sub, role, sv: stamps.get(sub), iat: now(), exp: now() + 900 })

  test("a token whose role is below the route's gets 403 Forbidden, before its body is read; one at or above passes", async () => {
    const editor = tokenOf('someone', 'editor')
    assert.deepEqual((await ask('/only/admin', editor)).json(), { status: 403, message: 'Forbidden', data: null })
    assert.equal((await ask('/only/admin', editor)).headers['cache-control'], 'no-store')
    for (const path of ['/only/reader', '/only/editor']) {
      assert.deepEqual((await ask(path, editor)).json().data, { actor: 'someone', username: 'someone', role: 'editor' })
    }
    assert.equal((await ask('/only/editor', tokenOf('reading', 'reader'))).statusCode, 403)
  })

  test('the configured pair acts as admin', async () => {
    const token = await issueToken(app)
    assert.deepEqual((await ask('/only/admin', token)).json().data, { actor: TEST_USERNAME, username: TEST_USERNAME, role: 'admin' })
  })

  test("a token naming another role or stamp than its user's, a user that does not exist, or no role: 401 Invalid token", async () => {
    for (const claims of [
      { sub: 'someone', role: 'admin', sv: stamps.get('someone') },
      { sub: 'someone', role: 'editor', sv: stamps.get('reading') },
      { sub: 'someone', role: 'editor' },
      { sub: 'nobody', role: 'editor', sv: stamps.get('someone') },
      { sub: 'someone', role: 'owner' },
      { sub: 'someone', role: 7 },
      { sub: 'someone' },
      { role: 'admin' },
      { sub: TEST_USERNAME, role: 'reader' },
    ]) {
      const res = await ask('/only/reader', sign({ ...claims, iat: now(), exp: now() + 900 }))
      assert.deepEqual(res.json(), { status: 401, message: 'Invalid token', data: null }, JSON.stringify(claims))
    }
  })
})
