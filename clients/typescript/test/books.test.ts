import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ApiError, BookCatalogue } from '../src/index.ts'
import { serviceFor, storeEngines } from './support/service.ts'

const dune = { title: 'Dune', author: 'Frank Herbert', year: 1965 }

for (const engine of storeEngines) {
  describe(`the client's books (${engine.name})`, { skip: engine.skip }, () => {
    it('creates, reads, changes and deletes a book, and takes it back from the trash', async (t) => {
      const catalogue = await (await serviceFor(t, engine)).admin()
      const created = await catalogue.books.create(dune)
      assert.deepEqual(created.book, { id: created.book.id, ...dune })
      const { id } = created.book
      assert.deepEqual(await catalogue.books.get(id), created)
      const updated = await catalogue.books.update(id, { year: 1966 })
      assert.equal(updated.book.year, 1966)
      await catalogue.books.delete(id)
      await assert.rejects(catalogue.books.get(id), { name: 'ApiError', status: 404, message: 'Book not found' })
      const trashed = await catalogue.books.trash().all()
      assert.deepEqual(
        trashed.map(({ id, deleted_by }) => ({ id, deleted_by })),
        [{ id, deleted_by: 'librarian' }],
      )
      assert.deepEqual((await catalogue.books.restore(id)).book, updated.book)
      assert.deepEqual(await catalogue.books.trash().all(), [])
    })

    it('an ETag keeps a change from overwriting another: 412 as an ApiError', async (t) => {
      const catalogue = await (await serviceFor(t, engine)).admin()
      const { book, etag } = await catalogue.books.create(dune)
      assert.match(etag!, /^"/)
      const changed = await catalogue.books.update(book.id, { year: 1970 }, { ifMatch: etag })
      assert.notEqual(changed.etag, etag)
      assert.equal((await catalogue.books.get(book.id)).etag, changed.etag)
      const stale = await catalogue.books.update(book.id, { year: 1980 }, { ifMatch: etag }).catch((err: unknown) => err)
      assert.ok(stale instanceof ApiError)
      assert.equal(stale.status, 412)
      assert.equal(stale.message, 'Precondition failed')
      assert.equal((await catalogue.books.get(book.id)).book.year, 1970)
      const reverted = await catalogue.books.revert(book.id, (await catalogue.books.history(book.id).all()).at(-1)!.seq, {
        ifMatch: changed.etag,
      })
      assert.equal(reverted.book.year, 1965)
      assert.notEqual(reverted.etag, changed.etag)
    })

    it('follows the Link of every page: each book once, in order, with the count', async (t) => {
      const catalogue = await (await serviceFor(t, engine)).admin()
      const titles = ['Hobbit', 'Harry Potter', 'Hamlet', 'Heidi', 'Dune', 'Hyperion', 'Holes']
      for (const [n, title] of titles.entries()) await catalogue.books.create({ title, author: 'Someone', year: 1900 + n })
      const pages = []
      for await (const page of catalogue.books.find({ title: 'h', sort: 'title', limit: 2, count: true }).pages()) pages.push(page)
      assert.deepEqual(
        pages.map((page) => page.items.map((book) => book.title)),
        [
          ['Hamlet', 'Harry Potter'],
          ['Heidi', 'Hobbit'],
          ['Holes', 'Hyperion'],
        ],
      )
      assert.deepEqual(
        pages.map((page) => page.total),
        [6, 6, 6],
      )
      assert.equal(pages.at(-1)!.next, undefined)
      const all = []
      for await (const book of catalogue.books.find({ sort: '-year', limit: 3 })) all.push(book.year)
      assert.deepEqual(all, [1906, 1905, 1904, 1903, 1902, 1901, 1900])
      assert.equal(await catalogue.books.count({ year_from: 1903 }), 4)
    })

    it("reads a book's history page by page, and reverts to one of its changes", async (t) => {
      const catalogue = await (await serviceFor(t, engine)).admin()
      const { id } = (await catalogue.books.create(dune)).book
      for (const year of [1966, 1967, 1968]) await catalogue.books.update(id, { year })
      const changes = []
      for await (const change of catalogue.books.history(id, { limit: 3 })) changes.push(change)
      assert.deepEqual(
        changes.map((change) => [change.kind, change.book?.year]),
        [
          ['updated', 1968],
          ['updated', 1967],
          ['updated', 1966],
          ['created', 1965],
        ],
      )
      const reverted = await catalogue.books.revert(id, changes.at(-1)!.seq)
      assert.equal(reverted.book.year, 1965)
      const history = catalogue.books.history(id, { limit: 2 })
      const first = await history.page()
      assert.deepEqual(
        first.items.map((change) => [change.kind, change.book?.year]),
        [
          ['updated', 1965],
          ['updated', 1968],
        ],
      )
      assert.deepEqual(
        (await history.page(first.next)).items.map((change) => change.book?.year),
        [1967, 1966],
      )
    })

    it('an admin purges a book from the trash for good', async (t) => {
      const catalogue = await (await serviceFor(t, engine)).admin()
      const { id } = (await catalogue.books.create(dune)).book
      await catalogue.books.delete(id)
      await catalogue.books.purge(id)
      assert.deepEqual(await catalogue.books.trash().all(), [])
      await assert.rejects(catalogue.books.restore(id), { status: 404, message: 'Book not found' })
    })

    it('every error envelope is an ApiError with its status and message', async (t) => {
      const service = await serviceFor(t, engine)
      const anonymous = new BookCatalogue({ url: service.url })
      await assert.rejects(anonymous.books.find().all(), { name: 'ApiError', status: 401, message: 'Authorization token required' })
      await assert.rejects(anonymous.login('librarian', 'not the password'), { status: 401, message: 'Invalid credentials' })
      const catalogue = await service.admin()
      await assert.rejects(catalogue.books.create({ title: '', author: 'A', year: 1 }), {
        status: 400,
        message: 'Invalid input',
        data: null,
      })
      await assert.rejects(catalogue.books.find({ year_from: 2000, year_to: 1900 }).all(), { status: 400, message: 'Invalid input' })
      await assert.rejects(catalogue.books.revert(1, 1), { status: 404, message: 'Book not found' })
    })
  })
}
