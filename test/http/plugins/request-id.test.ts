import assert from 'node:assert/strict'
import type { IncomingMessage } from 'node:http'
import { describe, it } from 'node:test'
import { requestIdFor } from '../../../src/http/plugins/request-id.ts'

const withHeader = (value: string | string[] | undefined) => ({ headers: { 'x-request-id': value } }) as unknown as IncomingMessage

describe('request id', () => {
  it('keeps a plain id of up to 128 characters', () => {
    assert.equal(requestIdFor(withHeader('abc-123_X.y:z')), 'abc-123_X.y:z')
    assert.equal(requestIdFor(withHeader('a'.repeat(128))), 'a'.repeat(128))
  })

  it('replaces a missing, repeated, empty, long or unsafe id with a fresh one', () => {
    const ids = [undefined, ['a', 'b'], '', 'a'.repeat(129), 'with space', 'new\nline', 'quote"'].map((value) =>
      requestIdFor(withHeader(value)),
    )
    for (const id of ids) assert.match(id, /^[0-9a-f-]{36}$/)
    assert.equal(new Set(ids).size, ids.length)
  })
})
