import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { createTokenService } from '../../src/auth/tokens.ts'
import { buildTestApp, TEST_PASSWORD, TEST_SECRET, TEST_USERNAME } from '../helpers.ts'

function decodePart(part: string) {
  return JSON.parse(Buffer.from(part, 'base64url').toString('utf8'))
}

describe('POST /token', () => {
  let app: FastifyInstance
  before(async () => {
    app = await buildTestApp()
  })
  after(() => app.close())

  const login = (payload: unknown, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
    app.inject({ method: 'POST', url: '/token', headers, payload: typeof payload === 'string' ? payload : JSON.stringify(payload) })

  test('200 Token generated successfully with an HS256 JWT: typ JWT, sub, iat, exp = iat + 900', async () => {
    const before = Math.floor(Date.now() / 1000)
    const res = await login({ username: TEST_USERNAME, password: TEST_PASSWORD })
    assert.equal(res.statusCode, 200)
    const body = res.json()
    assert.deepEqual(Object.keys(body).sort(), ['data', 'message', 'status'])
    assert.equal(body.status, 200)
    assert.equal(body.message, 'Token generated successfully')
    assert.deepEqual(Object.keys(body.data), ['token'])
    const [header, payload, signature] = body.data.token.split('.')
    assert.deepEqual(decodePart(header), { alg: 'HS256', typ: 'JWT' })
    const claims = decodePart(payload)
    assert.equal(claims.sub, TEST_USERNAME)
    assert.ok(claims.iat >= before && claims.iat <= Math.ceil(Date.now() / 1000))
    assert.equal(claims.exp, claims.iat + 900)
    assert.ok(signature.length > 0)
  })

  test('the token response is never cached', async () => {
    const res = await login({ username: TEST_USERNAME, password: TEST_PASSWORD })
    assert.equal(res.headers['cache-control'], 'no-store')
  })

  test('the issued token opens the book routes', async () => {
    const token = (await login({ username: TEST_USERNAME, password: TEST_PASSWORD })).json().data.token
    const res = await app.inject({ method: 'GET', url: '/books', headers: { authorization: token } })
    assert.equal(res.statusCode, 200)
  })

  test('credentials in a body sent without Content-Type or as a form still work', async () => {
    const body = JSON.stringify({ username: TEST_USERNAME, password: TEST_PASSWORD })
    for (const headers of [{}, { 'content-type': 'application/x-www-form-urlencoded' }] as Record<string, string>[]) {
      const res = await login(body, headers)
      assert.equal(res.statusCode, 200, res.body)
    }
  })

  const wrong: Array<[string, object]> = [
    ['wrong password', { username: TEST_USERNAME, password: 'wrong' }],
    ['wrong username', { username: 'someone', password: TEST_PASSWORD }],
    ['both wrong', { username: 'someone', password: 'wrong' }],
    ['empty strings', { username: '', password: '' }],
    ['the password with a different case', { username: TEST_USERNAME, password: TEST_PASSWORD.toUpperCase() }],
    ['a prefix of the password', { username: TEST_USERNAME, password: TEST_PASSWORD.slice(0, -1) }],
  ]
  for (const [name, credentials] of wrong) {
    test(`401 Invalid credentials: ${name}`, async () => {
      const res = await login(credentials)
      assert.equal(res.statusCode, 401)
      assert.deepEqual(res.json(), { status: 401, message: 'Invalid credentials', data: null })
    })
  }

  const unparsable: Array<[string, unknown]> = [
    ['an empty body', ''],
    ['malformed JSON', '{"username":'],
    ['an array', '[]'],
    ['a string', '"admin"'],
    ['null', 'null'],
    ['username missing', { password: TEST_PASSWORD }],
    ['password missing', { username: TEST_USERNAME }],
    ['username not a string', { username: 1, password: TEST_PASSWORD }],
    ['password not a string', { username: TEST_USERNAME, password: null }],
    ['password an object', { username: TEST_USERNAME, password: { $ne: '' } }],
  ]
  for (const [name, payload] of unparsable) {
    test(`400 Invalid request payload: ${name}`, async () => {
      const res = await login(payload)
      assert.equal(res.statusCode, 400)
      assert.deepEqual(res.json(), { status: 400, message: 'Invalid request payload', data: null })
    })
  }

  test('500 Could not generate token when signing fails', async () => {
    const tokens = createTokenService({ secret: TEST_SECRET })
    const failing = await buildTestApp(
      {},
      {
        tokens: {
          verify: tokens.verify,
          sign: () => {
            throw new Error('signing key unavailable')
          },
        },
      },
    )
    try {
      const res = await failing.inject({ method: 'POST', url: '/token', payload: { username: TEST_USERNAME, password: TEST_PASSWORD } })
      assert.equal(res.statusCode, 500)
      assert.deepEqual(res.json(), { status: 500, message: 'Could not generate token', data: null })
    } finally {
      await failing.close()
    }
  })
})
