import assert from 'node:assert/strict'
import { after, before, beforeEach, describe, test } from 'node:test'
import type { FastifyInstance, InjectOptions } from 'fastify'
import { assertEnvelope, buildTestApp, dune, issueToken, storeEngines, withToken } from '../helpers.ts'

for (const engine of storeEngines) {
  describe(`book routes on ${engine.name}`, { skip: engine.skip }, () => {
    let app: FastifyInstance
    let token: string
    const call = (options: InjectOptions) => app.inject(withToken(token, options))
    const create = async (book: object = dune) => {
      const res = await call({ method: 'POST', url: '/book', payload: book })
      return assertEnvelope(res, 201, 'Book created successfully')
    }

    before(async () => {
      app = await buildTestApp({}, { store: await engine.open() })
      token = await issueToken(app)
    })
    after(() => app.close())
    beforeEach(async () => {
      const all = await call({ method: 'GET', url: '/books' })
      for (const book of all.json().data) await call({ method: 'DELETE', url: `/book/${book.id}` })
    })

    describe('POST /book', () => {
      test('201 with the stored book and its new id', async () => {
        const res = await call({ method: 'POST', url: '/book', payload: dune })
        const book = assertEnvelope(res, 201, 'Book created successfully')
        assert.ok(Number.isSafeInteger(book.id) && book.id > 0)
        assert.deepEqual(book, { id: book.id, ...dune })
        assert.equal(res.headers.location, `/book/${book.id}`)
        assert.match(String(res.headers.etag), /^"[^"]+"$/)
      })

      test('a record exists after a successful create', async () => {
        const book = await create()
        assertEnvelope(await call({ method: 'GET', url: `/book/${book.id}` }), 200, 'Book retrieved successfully', book)
      })

      test('text is stored exactly as sent', async () => {
        const title = '  Ünïcödé 📚 title\twith\nspaces  '
        const book = await create({ title, author: '李白', year: 701 })
        const res = await call({ method: 'GET', url: `/book/${book.id}` })
        assert.equal(res.json().data.title, title)
        assert.equal(res.json().data.author, '李白')
      })

      test('an id in the body is ignored and unknown members are dropped', async () => {
        const book = await create({ ...dune, id: 424242, publisher: 'Chilton' })
        assert.notEqual(book.id, 424242)
        assert.deepEqual(Object.keys(book).sort(), ['author', 'id', 'title', 'year'])
      })

      test('__proto__ members never reach an object', async () => {
        const res = await call({
          method: 'POST',
          url: '/book',
          headers: { 'content-type': 'application/json' },
          payload: '{"title":"T","author":"A","year":1,"__proto__":{"year":"polluted","admin":true}}',
        })
        const book = assertEnvelope(res, 201, 'Book created successfully')
        assert.equal(book.year, 1)
        assert.equal(({} as Record<string, unknown>).admin, undefined)
      })

      test('limits: 500 characters (code points) and years -9999 to 9999 are accepted', async () => {
        await create({ title: 'x'.repeat(500), author: '😀'.repeat(500), year: -9999 })
        await create({ ...dune, year: 9999 })
        await create({ ...dune, year: 0 })
        await create({ ...dune, year: 2000.0 })
      })

      const invalid: Array<[string, unknown]> = [
        ['title missing', { author: 'A', year: 1 }],
        ['author missing', { title: 'T', year: 1 }],
        ['year missing', { title: 'T', author: 'A' }],
        ['empty object', {}],
        ['title empty', { ...dune, title: '' }],
        ['title blank', { ...dune, title: ' \t\n ' }],
        ['author blank (Unicode space)', { ...dune, author: '\u3000\u00a0' }],
        ['title of 501 characters', { ...dune, title: 'x'.repeat(501) }],
        ['author of 501 astral characters', { ...dune, author: '😀'.repeat(501) }],
        ['title with NUL', { ...dune, title: 'a\u0000b' }],
        ['title with a lone high surrogate', { ...dune, title: 'a\ud800b' }],
        ['author with a lone low surrogate', { ...dune, author: '\udc00' }],
        ['title not a string', { ...dune, title: 42 }],
        ['title null', { ...dune, title: null }],
        ['year as a string', { ...dune, year: '1965' }],
        ['year fractional', { ...dune, year: 1965.5 }],
        ['year below -9999', { ...dune, year: -10000 }],
        ['year above 9999', { ...dune, year: 10000 }],
        ['year null', { ...dune, year: null }],
        ['year boolean', { ...dune, year: true }],
        ['an array', [dune]],
        ['a string', 'Dune'],
        ['a number', 1965],
        ['null', null],
      ]
      for (const [name, payload] of invalid) {
        test(`400 Invalid input: ${name}`, async () => {
          const res = await call({
            method: 'POST',
            url: '/book',
            headers: { 'content-type': 'application/json' },
            payload: JSON.stringify(payload),
          })
          assertEnvelope(res, 400, 'Invalid input', null)
        })
      }

      const unparsable: Array<[string, string | Buffer]> = [
        ['an empty body', ''],
        ['whitespace', '   '],
        ['malformed JSON', '{"title": "Dune",'],
        ['JSON with a trailing comma', '{"title":"T","author":"A","year":1,}'],
        // Decoded leniently, these bytes would be a valid book titled U+FFFD.
        [
          'bytes that are not UTF-8',
          Buffer.concat([Buffer.from('{"title":"'), Buffer.from([0xff]), Buffer.from('","author":"A","year":1}')]),
        ],
      ]
      for (const [name, payload] of unparsable) {
        test(`400 Invalid input: ${name}`, async () => {
          const res = await call({ method: 'POST', url: '/book', headers: { 'content-type': 'application/json' }, payload })
          assertEnvelope(res, 400, 'Invalid input', null)
        })
      }

      test('400 Invalid input for a request with no body at all', async () => {
        assertEnvelope(await call({ method: 'POST', url: '/book' }), 400, 'Invalid input', null)
      })

      for (const contentType of [undefined, 'application/x-www-form-urlencoded', 'text/plain', 'application/json; charset=utf-8']) {
        test(`the body is read as JSON with Content-Type ${contentType ?? '(none)'}`, async () => {
          const headers: Record<string, string> = contentType ? { 'content-type': contentType } : {}
          const res = await call({ method: 'POST', url: '/book', headers, payload: JSON.stringify(dune) })
          assertEnvelope(res, 201, 'Book created successfully')
        })
      }
    })

    describe('GET /books', () => {
      test('an empty array when there are no books', async () => {
        assertEnvelope(await call({ method: 'GET', url: '/books' }), 200, 'Books retrieved successfully', [])
      })

      test('every stored book, ascending by id', async () => {
        const created = []
        for (let i = 0; i < 5; i++) created.push(await create({ ...dune, title: `Book ${i}` }))
        const data = assertEnvelope(await call({ method: 'GET', url: '/books' }), 200, 'Books retrieved successfully')
        assert.deepEqual(data, created)
      })
    })

    describe('GET /book/{id}', () => {
      test('200 with the book', async () => {
        const book = await create()
        const res = await call({ method: 'GET', url: `/book/${book.id}` })
        assertEnvelope(res, 200, 'Book retrieved successfully', book)
        assert.match(String(res.headers.etag), /^"[^"]+"$/)
      })

      test('404 Book not found for an id no book has', async () => {
        assertEnvelope(await call({ method: 'GET', url: '/book/987654' }), 404, 'Book not found', null)
      })
    })

    describe('ids', () => {
      const notIds = [
        'abc',
        '-1',
        '0',
        '01',
        '+1',
        '1.5',
        '1e3',
        '0x10',
        '%20',
        '%201',
        '1%20',
        '9007199254740992',
        '99999999999999999999',
        '1'.repeat(400),
      ]
      for (const method of ['GET', 'PUT', 'DELETE'] as const) {
        for (const id of notIds) {
          test(`${method} /book/${id.slice(0, 24)} matches no book: 404 Book not found`, async () => {
            const res = await call({ method, url: `/book/${id}`, payload: method === 'PUT' ? { year: 1 } : undefined })
            assertEnvelope(res, 404, 'Book not found', null)
          })
        }
      }

      test('the largest id, 2^53 - 1, is an id', async () => {
        assertEnvelope(await call({ method: 'GET', url: '/book/9007199254740991' }), 404, 'Book not found', null)
      })

      test('ids are assigned ascending and never reused, also after the newest is deleted', async () => {
        const first = await create()
        const second = await create()
        assert.ok(second.id > first.id)
        assertEnvelope(await call({ method: 'DELETE', url: `/book/${second.id}` }), 200, 'Book deleted successfully', null)
        const third = await create()
        assert.ok(third.id > second.id, `id ${third.id} reused`)
      })
    })

    describe('PUT /book/{id}', () => {
      test('members present overwrite, members absent keep their stored values', async () => {
        const book = await create()
        const res = await call({ method: 'PUT', url: `/book/${book.id}`, payload: { year: 1966, title: 'Dune Messiah' } })
        const updated = { ...book, year: 1966, title: 'Dune Messiah' }
        assertEnvelope(res, 200, 'Book updated successfully', updated)
        assertEnvelope(await call({ method: 'GET', url: `/book/${book.id}` }), 200, 'Book retrieved successfully', updated)
      })

      test('a full body replaces every member', async () => {
        const book = await create()
        const replacement = { title: 'Emma', author: 'Jane Austen', year: 1815 }
        const res = await call({ method: 'PUT', url: `/book/${book.id}`, payload: replacement })
        assertEnvelope(res, 200, 'Book updated successfully', { id: book.id, ...replacement })
      })

      test('{} is valid and changes nothing', async () => {
        const book = await create()
        const before = await call({ method: 'GET', url: `/book/${book.id}` })
        const res = await call({ method: 'PUT', url: `/book/${book.id}`, payload: {} })
        assertEnvelope(res, 200, 'Book updated successfully', book)
        assert.equal(res.headers.etag, before.headers.etag)
      })

      test('an id in the body is ignored', async () => {
        const book = await create()
        const res = await call({ method: 'PUT', url: `/book/${book.id}`, payload: { id: book.id + 1000, year: 2000 } })
        assertEnvelope(res, 200, 'Book updated successfully', { ...book, year: 2000 })
      })

      test('404 Book not found for an id no book has, before the body is read', async () => {
        const missing = { method: 'PUT' as const, url: '/book/987654', headers: { 'content-type': 'application/json' } }
        assertEnvelope(await call({ ...missing, payload: { year: 1 } }), 404, 'Book not found', null)
        assertEnvelope(await call({ ...missing, payload: '{broken' }), 404, 'Book not found', null)
        assertEnvelope(await call({ ...missing, payload: { year: 'x' } }), 404, 'Book not found', null)
      })

      const invalid: Array<[string, string]> = [
        ['malformed JSON', '{"year":'],
        ['an empty body', ''],
        ['not an object', '[1]'],
        ['null for a member', '{"title":null}'],
        ['a blank title', '{"title":"   "}'],
        ['a title of 501 characters', JSON.stringify({ title: 'x'.repeat(501) })],
        ['a year out of range', '{"year":10000}'],
        ['a fractional year', '{"year":1.5}'],
        ['a year as a string', '{"year":"1966"}'],
        ['a NUL in the author', '{"author":"a\\u0000"}'],
        ['a lone surrogate in the title', '{"title":"\\udfff"}'],
      ]
      for (const [name, payload] of invalid) {
        test(`400 Invalid input: ${name}, and the book is unchanged`, async () => {
          const book = await create()
          const res = await call({ method: 'PUT', url: `/book/${book.id}`, headers: { 'content-type': 'application/json' }, payload })
          assertEnvelope(res, 400, 'Invalid input', null)
          assertEnvelope(await call({ method: 'GET', url: `/book/${book.id}` }), 200, 'Book retrieved successfully', book)
        })
      }

      test('the ETag changes with every change', async () => {
        const book = await create()
        const first = await call({ method: 'GET', url: `/book/${book.id}` })
        const put = await call({ method: 'PUT', url: `/book/${book.id}`, payload: { year: 1970 } })
        assert.notEqual(put.headers.etag, first.headers.etag)
        const second = await call({ method: 'GET', url: `/book/${book.id}` })
        assert.equal(second.headers.etag, put.headers.etag)
      })

      test('If-Match with the current ETag updates', async () => {
        const book = await create()
        const etag = (await call({ method: 'GET', url: `/book/${book.id}` })).headers.etag as string
        const res = await call({ method: 'PUT', url: `/book/${book.id}`, headers: { 'if-match': etag }, payload: { year: 1 } })
        assertEnvelope(res, 200, 'Book updated successfully', { ...book, year: 1 })
      })

      test('If-Match listing the current ETag among others updates; * updates', async () => {
        const book = await create()
        const etag = (await call({ method: 'GET', url: `/book/${book.id}` })).headers.etag as string
        const listed = await call({
          method: 'PUT',
          url: `/book/${book.id}`,
          headers: { 'if-match': `"zzz", ${etag}` },
          payload: { year: 2 },
        })
        assertEnvelope(listed, 200, 'Book updated successfully', { ...book, year: 2 })
        const star = await call({ method: 'PUT', url: `/book/${book.id}`, headers: { 'if-match': '*' }, payload: { year: 3 } })
        assertEnvelope(star, 200, 'Book updated successfully', { ...book, year: 3 })
      })

      test('412 Precondition failed for a stale If-Match, and nothing changes', async () => {
        const book = await create()
        const stale = (await call({ method: 'GET', url: `/book/${book.id}` })).headers.etag as string
        await call({ method: 'PUT', url: `/book/${book.id}`, payload: { title: 'Changed' } })
        for (const payload of [{ year: 2001 }, {}]) {
          const res = await call({ method: 'PUT', url: `/book/${book.id}`, headers: { 'if-match': stale }, payload })
          assertEnvelope(res, 412, 'Precondition failed', null)
        }
        const weak = await call({ method: 'PUT', url: `/book/${book.id}`, headers: { 'if-match': `W/${stale}` }, payload: { year: 2001 } })
        assertEnvelope(weak, 412, 'Precondition failed', null)
        const current = await call({ method: 'GET', url: `/book/${book.id}` })
        assert.deepEqual(current.json().data, { ...book, title: 'Changed' })
      })
    })

    describe('DELETE /book/{id}', () => {
      test('200 with data null, then lookups of that id fail with 404', async () => {
        const book = await create()
        assertEnvelope(await call({ method: 'DELETE', url: `/book/${book.id}` }), 200, 'Book deleted successfully', null)
        assertEnvelope(await call({ method: 'GET', url: `/book/${book.id}` }), 404, 'Book not found', null)
        assertEnvelope(await call({ method: 'PUT', url: `/book/${book.id}`, payload: { year: 1 } }), 404, 'Book not found', null)
        assert.deepEqual((await call({ method: 'GET', url: '/books' })).json().data, [])
      })

      test('404 Book not found for an id that never existed or is already deleted', async () => {
        assertEnvelope(await call({ method: 'DELETE', url: '/book/987654' }), 404, 'Book not found', null)
        const book = await create()
        await call({ method: 'DELETE', url: `/book/${book.id}` })
        assertEnvelope(await call({ method: 'DELETE', url: `/book/${book.id}` }), 404, 'Book not found', null)
      })

      test('a body sent with DELETE is ignored', async () => {
        const book = await create()
        const res = await call({
          method: 'DELETE',
          url: `/book/${book.id}`,
          headers: { 'content-type': 'application/json' },
          payload: '{broken',
        })
        assertEnvelope(res, 200, 'Book deleted successfully', null)
      })
    })
  })
}
