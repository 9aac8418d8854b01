import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createTokenService } from '../../src/auth/tokens.ts'
import { stackFrames } from '../support/stack-frames.ts'

const SECRET = 'a-secret-of-at-least-thirty-two-bytes-long'

describe('refusing a token', () => {
  const tokens = createTokenService({ secret: SECRET, previousSecret: 'the-secret-before-the-last-rotation-0123' })
  const valid = tokens.sign('librarian', 'editor', { authTime: Math.floor(Date.now() / 1000) })
  const [header, payload] = valid.split('.')

  for (const [what, token] of [
    ['malformed', 'abc.def.ghi'],
    ['signed with another secret', `${header}.${payload}.${Buffer.alloc(32, 7).toString('base64url')}`],
    ['cut short', `${header}.${payload}`],
  ] as const) {
    it(`makes its error without the stack of where it was made: ${what}`, () => {
      const limit = Error.stackTraceLimit
      assert.throws(
        () => tokens.verify(token),
        (err) => stackFrames(err) === 0,
      )
      assert.equal(Error.stackTraceLimit, limit)
      assert.ok(stackFrames(new Error('elsewhere')) > 0)
    })
  }

  it('still accepts the tokens it signs', () => {
    assert.equal(tokens.verify(valid).sub, 'librarian')
  })
})
