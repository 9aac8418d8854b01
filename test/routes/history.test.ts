import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { FastifyInstance, InjectOptions } from 'fastify'
import type { Store } from '../../src/store/store.ts'
import { assertEnvelope, buildTestApp, dune, issueToken, storeEngines, TEST_USERNAME, withToken } from '../helpers.ts'

const solaris = { title: 'Solaris', author: 'Stanisław Lem', year: 1961 }

interface ChangeAnswer {
  seq: number
  book_id: number
  kind: string
  actor: string
  at: string
  book: { id: number; title: string; author: string; year: number } | null
}

for (const engine of storeEngines) {
  describe(`history, trash and restore (${engine.name})`, { skip: engine.skip }, () => {
    async function start(t: { after(fn: () => unknown): void }, store?: Store, retentionDays = 30) {
      const app = await buildTestApp({ trashRetentionDays: retentionDays }, { store: store ?? (await engine.open()) })
      t.after(() => app.close())
      const token = await issueToken(app)
      const call = (options: InjectOptions) => app.inject(withToken(token, options))
      const create = async (book: object) =>
        assertEnvelope(await call({ method: 'POST', url: '/book', payload: book }), 201, 'Book created successfully') as { id: number }
      return { app, call, create }
    }

    async function historyOf(call: (options: InjectOptions) => Promise<{ json(): { data: ChangeAnswer[] } }>, id: number) {
      return (await call({ method: 'GET', url: `/book/${id}/history` })).json().data
    }

    it('GET /book/{id}/history: every change newest first, with seq, kind, actor, RFC 3339 time and the values left', async (t) => {
      const { call, create } = await start(t)
      const { id } = await create(dune)
      await call({ method: 'PUT', url: `/book/${id}`, payload: { year: 1966 } })
      const res = await call({ method: 'GET', url: `/book/${id}/history` })
      const changes = assertEnvelope(res, 200, 'History retrieved successfully') as ChangeAnswer[]
      assert.equal(res.headers.link, undefined)
      assert.deepEqual(
        changes.map(({ book_id, kind, actor, book }) => ({ book_id, kind, actor, book })),
        [
          { book_id: id, kind: 'updated', actor: TEST_USERNAME, book: { id, ...dune, year: 1966 } },
          { book_id: id, kind: 'created', actor: TEST_USERNAME, book: { id, ...dune } },
        ],
      )
      for (const change of changes) {
        assert.deepEqual(Object.keys(change).sort(), ['actor', 'at', 'book', 'book_id', 'kind', 'seq'])
        assert.match(change.at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
        assert.ok(Math.abs(Date.parse(change.at) - Date.now()) < 60_000)
      }
      assert.ok(changes[0]!.seq > changes[1]!.seq)
    })

    it('pages the history by limit, with a Link to the next page until the last', async (t) => {
      const { call, create } = await start(t)
      const { id } = await create(dune)
      for (let year = 1; year <= 4; year++) await call({ method: 'PUT', url: `/book/${id}`, payload: { year } })
      const all = await historyOf(call, id)
      assert.equal(all.length, 5)
      const seen: number[] = []
      let url: string | undefined = `/book/${id}/history?limit=2`
      let pages = 0
      while (url !== undefined) {
        const res = await call({ method: 'GET', url })
        const page = assertEnvelope(res, 200, 'History retrieved successfully') as ChangeAnswer[]
        seen.push(...page.map((change) => change.seq))
        pages++
        const link = res.headers.link as string | undefined
        url = link === undefined ? undefined : /^<([^>]+)>; rel="next"$/.exec(link)![1]
      }
      assert.equal(pages, 3)
      assert.deepEqual(
        seen,
        all.map((change) => change.seq),
      )
    })

    it('refuses a limit or a before that is not a whole number in range: 400 Invalid input', async (t) => {
      const { call, create } = await start(t)
      const { id } = await create(dune)
      for (const query of ['limit=0', 'limit=1001', 'limit=1.5', 'limit=x', 'before=x', 'before=-1']) {
        assertEnvelope(await call({ method: 'GET', url: `/book/${id}/history?${query}` }), 400, 'Invalid input', null)
        assertEnvelope(await call({ method: 'GET', url: `/books/trash?${query}` }), 400, 'Invalid input', null)
      }
    })

    it('answers 404 Book not found for the history of an id never used, not a number, or purged', async (t) => {
      const { call, create } = await start(t)
      const { id } = await create(dune)
      for (const path of [`/book/${id + 1}/history`, '/book/abc/history', '/book/99999999999999999999/history']) {
        assertEnvelope(await call({ method: 'GET', url: path }), 404, 'Book not found', null)
      }
      await call({ method: 'DELETE', url: `/book/${id}` })
      assert.deepEqual(
        (await historyOf(call, id)).map((change) => change.kind),
        ['deleted', 'created'],
      )
      assertEnvelope(await call({ method: 'DELETE', url: `/books/trash/${id}` }), 200, 'Book purged successfully', null)
      assertEnvelope(await call({ method: 'GET', url: `/book/${id}/history` }), 404, 'Book not found', null)
    })

    it('DELETE moves a book to the trash: gone from get, lists, searches, counts and exports', async (t) => {
      const { call, create } = await start(t)
      const { id } = await create(dune)
      await create(solaris)
      assertEnvelope(await call({ method: 'DELETE', url: `/book/${id}` }), 200, 'Book deleted successfully', null)
      assertEnvelope(await call({ method: 'GET', url: `/book/${id}` }), 404, 'Book not found', null)
      assertEnvelope(await call({ method: 'DELETE', url: `/book/${id}` }), 404, 'Book not found', null)
      assertEnvelope(await call({ method: 'PUT', url: `/book/${id}`, payload: { year: 1 } }), 404, 'Book not found', null)
      const list = await call({ method: 'GET', url: '/books?q=dune&count=true' })
      assert.deepEqual(list.json().data, [])
      assert.equal(list.headers['x-total-count'], '0')
      const exported = await call({ method: 'GET', url: '/books/export?format=ndjson' })
      assert.deepEqual(
        exported.body
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line).title),
        ['Solaris'],
      )
    })

    it('DELETE honours If-Match: 412 with the book kept when it changed, deleted when it did not', async (t) => {
      const { call, create } = await start(t)
      const { id } = await create(dune)
      const updated = await call({ method: 'PUT', url: `/book/${id}`, payload: { year: 1 } })
      assertEnvelope(await call({ method: 'DELETE', url: `/book/${id}`, headers: { 'if-match': '"1"' } }), 412, 'Precondition failed', null)
      assertEnvelope(await call({ method: 'GET', url: `/book/${id}` }), 200, 'Book retrieved successfully')
      assertEnvelope(
        await call({ method: 'DELETE', url: `/book/${id}`, headers: { 'if-match': String(updated.headers.etag) } }),
        200,
        'Book deleted successfully',
        null,
      )
    })

    it('GET /books/trash: deleted books, latest deletion first, with when and by whom, paged', async (t) => {
      const { call, create } = await start(t)
      const a = await create(dune)
      const b = await create(solaris)
      const c = await create({ ...dune, title: 'Kindred' })
      for (const { id } of [b, a, c]) await call({ method: 'DELETE', url: `/book/${id}` })
      const res = await call({ method: 'GET', url: '/books/trash?limit=2' })
      const page = assertEnvelope(res, 200, 'Trash retrieved successfully') as Record<string, unknown>[]
      assert.deepEqual(
        page.map((book) => Object.keys(book).sort()),
        [0, 1].map(() => ['author', 'deleted_at', 'deleted_by', 'id', 'title', 'year']),
      )
      assert.deepEqual(
        page.map(({ id, title, deleted_by }) => ({ id, title, deleted_by })),
        [
          { id: c.id, title: 'Kindred', deleted_by: TEST_USERNAME },
          { id: a.id, title: 'Dune', deleted_by: TEST_USERNAME },
        ],
      )
      assert.match(String(page[0]!.deleted_at), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      const next = /^<([^>]+)>; rel="next"$/.exec(String(res.headers.link))![1]!
      const rest = await call({ method: 'GET', url: next })
      assert.deepEqual(
        (assertEnvelope(rest, 200, 'Trash retrieved successfully') as { id: number }[]).map((book) => book.id),
        [b.id],
      )
      assert.equal(rest.headers.link, undefined)
    })

    it('POST /book/{id}/restore: the book with its old id, found again by every read, and an ETag', async (t) => {
      const { call, create } = await start(t)
      const { id } = await create(dune)
      await call({ method: 'DELETE', url: `/book/${id}` })
      const res = await call({ method: 'POST', url: `/book/${id}/restore` })
      assertEnvelope(res, 200, 'Book restored successfully', { id, ...dune })
      assert.equal(res.headers.etag, '"2"')
      assertEnvelope(await call({ method: 'GET', url: `/book/${id}` }), 200, 'Book retrieved successfully', { id, ...dune })
      const found = await call({ method: 'GET', url: '/books?q=dune&count=true' })
      assert.deepEqual(found.json().data, [{ id, ...dune }])
      assert.equal(found.headers['x-total-count'], '1')
      const exported = await call({ method: 'GET', url: '/books/export' })
      assert.match(exported.body, /Dune,Frank Herbert,1965/)
      assert.deepEqual(
        (await historyOf(call, id)).map(({ kind, book }) => ({ kind, book })),
        [
          { kind: 'restored', book: { id, ...dune } },
          { kind: 'deleted', book: { id, ...dune } },
          { kind: 'created', book: { id, ...dune } },
        ],
      )
      assertEnvelope(await call({ method: 'GET', url: '/books/trash' }), 200, 'Trash retrieved successfully', [])
    })

    it('restore answers 404 Book not found for a book not in the trash', async (t) => {
      const { call, create } = await start(t)
      const { id } = await create(dune)
      for (const path of [`/book/${id}/restore`, `/book/${id + 1}/restore`, '/book/abc/restore']) {
        assertEnvelope(await call({ method: 'POST', url: path }), 404, 'Book not found', null)
      }
    })

    it('restores a book once when asked twice at once: one 200, one 404, one restored change', async (t) => {
      const { call, create } = await start(t)
      const { id } = await create(dune)
      await call({ method: 'DELETE', url: `/book/${id}` })
      const answers = await Promise.all([0, 1].map(() => call({ method: 'POST', url: `/book/${id}/restore` })))
      assert.deepEqual(answers.map((res) => res.statusCode).sort(), [200, 404])
      assert.deepEqual(
        (await historyOf(call, id)).map((change) => change.kind),
        ['restored', 'deleted', 'created'],
      )
    })

    it('POST /book/{id}/revert: the values of that change, recorded as updated, If-Match as for PUT', async (t) => {
      const { call, create } = await start(t)
      const { id } = await create(dune)
      await call({ method: 'PUT', url: `/book/${id}`, payload: { title: 'Dune!', year: 2000 } })
      const [, created] = await historyOf(call, id)
      assertEnvelope(
        await call({ method: 'POST', url: `/book/${id}/revert`, payload: { seq: created!.seq }, headers: { 'if-match': '"1"' } }),
        412,
        'Precondition failed',
        null,
      )
      const res = await call({ method: 'POST', url: `/book/${id}/revert`, payload: { seq: created!.seq }, headers: { 'if-match': '"2"' } })
      assertEnvelope(res, 200, 'Book updated successfully', { id, ...dune })
      assert.equal(res.headers.etag, '"3"')
      const [latest] = await historyOf(call, id)
      assert.deepEqual({ kind: latest!.kind, book: latest!.book }, { kind: 'updated', book: { id, ...dune } })
    })

    it('revert refuses a seq that is not a change of this book: 400 Invalid input; a missing book: 404', async (t) => {
      const { call, create } = await start(t)
      const { id } = await create(dune)
      const other = await create(solaris)
      const [ofOther] = await historyOf(call, other.id)
      const [own] = await historyOf(call, id)
      for (const payload of [{ seq: ofOther!.seq }, { seq: own!.seq + 1000 }, { seq: 'x' }, { seq: 1.5 }, { seq: -1 }, {}, [own!.seq]]) {
        assertEnvelope(await call({ method: 'POST', url: `/book/${id}/revert`, payload }), 400, 'Invalid input', null)
      }
      assertEnvelope(
        await call({ method: 'POST', url: `/book/${other.id + 1}/revert`, payload: { seq: own!.seq } }),
        404,
        'Book not found',
        null,
      )
      await call({ method: 'DELETE', url: `/book/${id}` })
      assertEnvelope(await call({ method: 'POST', url: `/book/${id}/revert`, payload: { seq: own!.seq } }), 404, 'Book not found', null)
    })

    it('DELETE /books/trash/{id}: gone for good, one purged change, 404 when not in the trash', async (t) => {
      const { call, create } = await start(t)
      const { id } = await create(dune)
      assertEnvelope(await call({ method: 'DELETE', url: `/books/trash/${id}` }), 404, 'Book not found', null)
      await call({ method: 'DELETE', url: `/book/${id}` })
      assertEnvelope(await call({ method: 'DELETE', url: `/books/trash/${id}` }), 200, 'Book purged successfully', null)
      assertEnvelope(await call({ method: 'DELETE', url: `/books/trash/${id}` }), 404, 'Book not found', null)
      assertEnvelope(await call({ method: 'POST', url: `/book/${id}/restore` }), 404, 'Book not found', null)
      assertEnvelope(await call({ method: 'GET', url: '/books/trash' }), 200, 'Trash retrieved successfully', [])
      // The id is never given again.
      const next = await create(dune)
      assert.ok(next.id > id)
    })

    it('purges books kept longer than TRASH_RETENTION_DAYS by itself, as system:retention', async (t) => {
      const store = await engine.open()
      const kept = await store.books.create('ada', dune)
      await store.books.delete('ada', kept.id)
      const app: FastifyInstance = (await start(t, store, 0)).app
      const token = await issueToken(app)
      for (let tries = 0; ; tries++) {
        const res = await app.inject(withToken(token, { method: 'GET', url: `/book/${kept.id}/history` }))
        if (res.statusCode === 404) break
        assert.ok(tries < 100, 'purged within a second')
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
      const later = await store.books.create('ada', solaris)
      const [latest] = (await store.changes.ofBook(later.id, undefined, 1))!
      const purged = await store.changes.get(latest!.seq - 1)
      assert.deepEqual(purged && { bookId: purged.bookId, kind: purged.kind, actor: purged.actor }, {
        bookId: kept.id,
        kind: 'purged',
        actor: 'system:retention',
      })
    })

    it('keeps books in the trash within TRASH_RETENTION_DAYS', async (t) => {
      const store = await engine.open()
      const kept = await store.books.create('ada', dune)
      await store.books.delete('ada', kept.id)
      const { call } = await start(t, store, 1)
      await new Promise((resolve) => setTimeout(resolve, 100))
      assert.deepEqual(
        ((await call({ method: 'GET', url: '/books/trash' })).json().data as { id: number }[]).map((book) => book.id),
        [kept.id],
      )
    })
  })
}
