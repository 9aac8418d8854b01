import assert from 'node:assert/strict'
import { test } from 'node:test'
import { rememberVerified } from '../../src/auth/verified-tokens.ts'
import { TOKEN_LIFETIME_SECONDS, type TokenClaims } from '../../src/auth/tokens.ts'
import { buildTestApp, issueToken, withToken } from '../helpers.ts'

/** A verifier that accepts tokens named `ok:<exp>` and counts its calls. */
function countingVerifier() {
  const calls: string[] = []
  const verify = (token: string): TokenClaims | undefined => {
    calls.push(token)
    return token.startsWith('ok:') ? { exp: Number(token.slice(3)) } : undefined
  }
  return { calls, verify }
}

test('a verified token is verified once until it expires', () => {
  const { calls, verify } = countingVerifier()
  let now = 1_000_000
  const check = rememberVerified(verify, { now: () => now })
  assert.deepEqual(check('ok:2000'), { exp: 2000 })
  assert.deepEqual(check('ok:2000'), { exp: 2000 })
  now = 2_000_000
  check('ok:2000')
  assert.equal(calls.length, 1)
  now = 2_000_001
  check('ok:2000')
  assert.equal(calls.length, 2)
})

test('an expired token is refused whenever the verifier refuses it, cached or not', () => {
  let now = 1_000_000
  let expired = false
  const check = rememberVerified((token) => (expired ? undefined : { exp: Number(token.slice(3)) }), { now: () => now })
  check('ok:1500')
  now = 1_500_001
  expired = true
  assert.equal(check('ok:1500'), undefined)
})

test('a refused token is not remembered', () => {
  const { calls, verify } = countingVerifier()
  const check = rememberVerified(verify, { now: () => 0 })
  assert.equal(check('forged'), undefined)
  assert.equal(check('forged'), undefined)
  assert.equal(calls.length, 2)
})

test('when full, the oldest token is forgotten first', () => {
  const { calls, verify } = countingVerifier()
  const check = rememberVerified(verify, { capacity: 2, now: () => 0 })
  check('ok:1')
  check('ok:2')
  check('ok:3')
  assert.equal(calls.length, 3)
  check('ok:3')
  check('ok:2')
  assert.equal(calls.length, 3)
  check('ok:1')
  assert.equal(calls.length, 4)
})

test('through the service, a token used before it expired is refused after', async (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: Date.now() })
  const app = await buildTestApp()
  t.after(() => app.close())
  const token = await issueToken(app)
  const read = () => app.inject(withToken(token, { method: 'GET', url: '/books' }))
  assert.equal((await read()).statusCode, 200)
  t.mock.timers.tick((TOKEN_LIFETIME_SECONDS - 1) * 1000)
  assert.equal((await read()).statusCode, 200)
  t.mock.timers.tick(2000)
  const res = await read()
  assert.equal(res.statusCode, 401)
  assert.deepEqual(res.json(), { status: 401, message: 'Invalid token', data: null })
})
