import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createCursors } from '../../src/books/cursor.ts'

const secret = 'a-test-secret-of-at-least-thirty-two-bytes'
const query = 'q=harr+pott&limit=20'

describe('cursors', () => {
  const cursors = createCursors({ secret })

  it('give back the position they hold, for the query they were issued for', () => {
    const position = ['the hobbit', 1937, 42]
    const cursor = cursors.issue(query, position)
    assert.match(cursor, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/)
    assert.deepEqual(cursors.open(query, cursor), position)
  })

  it('are refused for any other query', () => {
    const cursor = cursors.issue(query, [7, 42])
    for (const other of ['q=harr+pott&limit=21', 'q=harr&limit=20', '', `${query}&count=true`]) {
      assert.equal(cursors.open(other, cursor), undefined, other)
    }
  })

  it('are refused when any character is changed', () => {
    const cursor = cursors.issue(query, [7, 42])
    for (let i = 0; i < cursor.length; i++) {
      for (const replacement of ['A', 'b', '-', '_', '.', '']) {
        const altered = cursor.slice(0, i) + replacement + cursor.slice(i + 1)
        if (altered !== cursor) assert.equal(cursors.open(query, altered), undefined, altered)
      }
    }
  })

  it('cannot be forged by writing a position and signing it with another key', () => {
    const forged = createCursors({ secret: 'another-secret-of-at-least-thirty-two-bytes' }).issue(query, [0, 0])
    assert.equal(cursors.open(query, forged), undefined)
    const [, signature] = cursors.issue(query, [7, 42]).split('.')
    const payload = Buffer.from(JSON.stringify([0, 0])).toString('base64url')
    assert.equal(cursors.open(query, `${payload}.${signature}`), undefined)
  })

  it('refuse text that is no cursor at all', () => {
    for (const junk of ['', '.', 'abc', 'a.b.c', '%%%.%%%', 'W10.', '.W10']) assert.equal(cursors.open(query, junk), undefined, junk)
  })

  it('issued before the secret was rotated still open; the previous secret never issues', () => {
    const old = createCursors({ secret: 'the-old-secret-of-at-least-thirty-two-bytes' })
    const rotated = createCursors({ secret, previousSecret: 'the-old-secret-of-at-least-thirty-two-bytes' })
    assert.deepEqual(rotated.open(query, old.issue(query, [1, 2])), [1, 2])
    assert.deepEqual(cursors.open(query, rotated.issue(query, [1, 2])), [1, 2])
  })
})
