import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Refusal } from '../src/errors.ts'
import { stackFrames } from './support/stack-frames.ts'

describe('a refusal', () => {
  it('of a 4xx is made without the stack of where it was made, and one of a 5xx with it', () => {
    assert.equal(stackFrames(new Refusal(404, 'Book not found')), 0)
    assert.equal(stackFrames(new Refusal(412, 'Precondition failed')), 0)
    assert.ok(stackFrames(new Refusal(500, 'Could not generate token')) > 0)
    assert.ok(stackFrames(new Refusal(503, 'Service unavailable')) > 0)
  })

  it('leaves the stacks of every other error as they were', () => {
    const limit = Error.stackTraceLimit
    assert.ok(new Refusal(401, 'Invalid token') instanceof Error)
    assert.equal(Error.stackTraceLimit, limit)
    assert.ok(stackFrames(new Error('elsewhere')) > 0)
  })
})
