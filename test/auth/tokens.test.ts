import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createSigner } from 'fast-jwt'
import { createTokenService } from '../../src/auth/tokens.ts'

const SECRET = 'a-secret-of-at-least-thirty-two-bytes-long'
const PREVIOUS_SECRET = 'the-secret-before-the-last-rotation-0123'

describe('refusing a token', () => {
  const tokens = createTokenService({ secret: SECRET, previousSecret: PREVIOUS_SECRET })
  const valid = tokens.sign('librarian', 'editor', { authTime: Math.floor(Date.now() / 1000) })
  const [header, payload, signature] = valid.split('.') as [string, string, string]
  const expiredBy = (key: string) => createSigner({ key, expiresIn: 60_000, clockTimestamp: Date.now() - 3_600_000 })({ sub: 'librarian' })

  for (const [what, token] of [
    ['malformed', 'abc.def.ghi'],
    ['no token at all', 'not-a-token'],
    ['signed with another secret', `${header}.${payload}.${Buffer.alloc(32, 7).toString('base64url')}`],
    ['its signature altered', `${header}.${payload}.${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`],
    ['its payload altered', `${header}.${Buffer.from('{"sub":"admin","exp":9999999999}').toString('base64url')}.${signature}`],
    ['cut short', `${header}.${payload}`],
  ] as const) {
    it(`refuses one not signed with its keys without making an error: ${what}`, (t) => {
      const captured = t.mock.method(Error, 'captureStackTrace')
      assert.equal(tokens.verify(token), undefined)
      assert.equal(captured.mock.callCount(), 0)
    })
  }

  for (const [what, key] of [
    ['its secret', SECRET],
    ['the previous secret', PREVIOUS_SECRET],
  ] as const) {
    it(`refuses an expired token signed with ${what}, its errors made without the stack of where they were made`, (t) => {
      const limit = Error.stackTraceLimit
      const limits: number[] = []
      const capture = Error.captureStackTrace.bind(Error)
      t.mock.method(Error, 'captureStackTrace', (target: object, constructor?: () => void) => {
        limits.push(Error.stackTraceLimit)
        capture(target, constructor)
      })
      assert.equal(tokens.verify(expiredBy(key)), undefined)
      assert.ok(limits.length > 0, 'the full check ran')
      assert.deepEqual(new Set(limits), new Set([0]))
      assert.equal(Error.stackTraceLimit, limit)
    })
  }

  it('still accepts the tokens it signs, and those the previous secret signed', () => {
    assert.equal(tokens.verify(valid)?.sub, 'librarian')
    const before = createSigner({ key: PREVIOUS_SECRET, expiresIn: 60_000 })({ sub: 'archivist' })
    assert.equal(tokens.verify(before)?.sub, 'archivist')
  })
})
