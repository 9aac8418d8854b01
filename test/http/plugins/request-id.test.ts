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

  it('makes random version 4 UUIDs, none repeated across many batches', () => {
    const ids = Array.from({ length: 5000 }, () => requestIdFor(withHeader(undefined)))
    for (const id of ids) assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    assert.equal(new Set(ids).size, ids.length)
    // Every hexadecimal digit turns up in every free place: the batches are filled, not left blank.
    for (const place of [0, 9, 15, 20, 35]) assert.equal(new Set(ids.map((id) => id[place])).size, 16, `place ${place}`)
  })
})
