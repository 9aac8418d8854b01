import assert from 'node:assert/strict'
import { afterEach, beforeEach, describe, it } from 'node:test'
import type { FindQuery } from '../../src/books/find.ts'
import { StoreUnavailableError, type Repositories, type Store } from '../../src/store/store.ts'
import type { NewBook } from '../../src/books/book.ts'
import { dune, storeEngines } from '../helpers.ts'
import { findPage, listById } from '../support/reads.ts'

const catalogue: NewBook[] = [
  dune,
  { title: 'Solaris', author: 'Stanisław Lem', year: 1961 },
  { title: 'Kindred', author: 'Octavia E. Butler', year: 1979 },
  { title: 'Ficciones', author: 'Jorge Luis Borges', year: 1944 },
  { title: 'Beowulf', author: 'Unknown', year: -9999 },
]

/** What a client would see of a value: rows of some engines have a null prototype. */
function asJson(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value ?? null))
}

for (const engine of storeEngines) {
  describe(`${engine.name} store`, { skip: engine.skip }, () => {
    let store: Store

    beforeEach(async () => {
      store = await engine.open()
    })
    afterEach(async () => {
      await store.close()
    })

    async function createAll() {
      const created = []
      for (const book of catalogue) created.push(await store.books.create('tester', book))
      return created
    }

    it('creates a book with a numeric id and revision 1, and gets it back', async () => {
      const created = await store.books.create('tester', dune)
      assert.equal(typeof created.id, 'number')
      assert.deepEqual(asJson(created), { id: created.id, ...dune, revision: 1 })
      assert.deepEqual(asJson(await store.books.get(created.id)), asJson(created))
    })

    it('stores text exactly as given, up to 500 characters', async () => {
      const book = { title: '😀'.repeat(500), author: '  Ĳssel — «naïve»  ', year: 9999 }
      const created = await store.books.create('tester', book)
      assert.deepEqual(asJson(await store.books.get(created.id)), { id: created.id, ...book, revision: 1 })
    })

    it('refuses what the contract forbids, as an error that is not "unavailable"', async () => {
      for (const bad of [
        { ...dune, title: '' },
        { ...dune, author: 'x'.repeat(501) },
        { ...dune, year: 10000 },
        { ...dune, year: -10000 },
      ]) {
        await assert.rejects(store.books.create('tester', bad), (err) => !(err instanceof StoreUnavailableError))
      }
      assert.deepEqual(asJson(await listById(store, 0, 10)), [])
    })

    it('finds nothing for an id that was never assigned', async () => {
      assert.equal(await store.books.get(1), undefined)
      assert.equal(await store.books.get(Number.MAX_SAFE_INTEGER), undefined)
    })

    it('assigns ascending ids and never reuses the id of a deleted newest book', async () => {
      const first = await store.books.create('tester', dune)
      const second = await store.books.create('tester', dune)
      assert.ok(second.id > first.id)
      assert.equal(await store.books.delete('tester', second.id), 'deleted')
      const third = await store.books.create('tester', dune)
      assert.ok(third.id > second.id)
    })

    it('lists books ascending by id, a page at a time, without revisions', async () => {
      const created = (await createAll()).map(({ revision: _, ...book }) => book)
      assert.deepEqual(asJson(await listById(store, 0, 1000)), created)
      assert.deepEqual(asJson(await listById(store, 0, 2)), created.slice(0, 2))
      assert.deepEqual(asJson(await listById(store, created[1]!.id, 2)), created.slice(2, 4))
      assert.deepEqual(asJson(await listById(store, created[3]!.id, 2)), created.slice(4))
      assert.deepEqual(asJson(await listById(store, created[4]!.id, 2)), [])
    })

    it('reads every page of a whole read as the JSON of what a page read gives', async () => {
      const created = await createAll()
      const awkward = await store.books.create('tester', { title: 'Quote " and \\ and \n', author: 'é 😀 \u2028', year: 0 })
      for (const [after, limit, descending] of [
        [0, 100, false],
        [0, 2, false],
        [created[1]!.id, 2, false],
        [awkward.id, 10, false],
        [0, 2, true],
        [created[1]!.id, 3, true],
      ] as const) {
        const pages = await store.reader.pages(
          { filter: { afterId: after }, order: { relevance: false, keys: [{ field: 'id', descending }] }, limit },
          { whole: true, json: true },
        )
        const books: unknown[] = []
        for await (const page of pages) {
          const rows = JSON.parse(page.json) as { id: number }[]
          assert.equal(page.size, rows.length)
          assert.deepEqual(page.last, rows.length === 0 ? undefined : [rows.at(-1)!.id])
          books.push(...rows)
        }
        const expected = asJson(await listById(store, after, 1000)) as unknown[]
        assert.deepEqual(books, descending ? expected.reverse() : expected)
      }
    })

    it('reads a whole list by id of more books than a first page of 255 as JSON, every book once', async () => {
      const ids = await store.books.createMany(
        'tester',
        Array.from({ length: 300 }, () => dune),
      )
      const pages = await store.reader.pages(
        { filter: {}, order: { relevance: false, keys: [{ field: 'id', descending: false }] }, limit: 1000 },
        { whole: true, json: true },
      )
      const read: number[] = []
      for await (const page of pages) read.push(...(JSON.parse(page.json) as { id: number }[]).map((book) => book.id))
      assert.deepEqual(read, ids)
    })

    it('updates only the given members and raises the revision', async () => {
      const { id } = await store.books.create('tester', dune)
      const result = await store.books.update('tester', id, { year: 1966 })
      const expected = { id, ...dune, year: 1966, revision: 2 }
      assert.deepEqual(asJson(result), { outcome: 'updated', book: expected })
      assert.deepEqual(asJson(await store.books.get(id)), expected)
      const again = await store.books.update('tester', id, { title: 'Dune Messiah', author: 'F. Herbert' })
      assert.deepEqual(asJson(again), {
        outcome: 'updated',
        book: { id, title: 'Dune Messiah', author: 'F. Herbert', year: 1966, revision: 3 },
      })
    })

    it('updates when the revision is one of the expected ones', async () => {
      const { id } = await store.books.create('tester', dune)
      const result = await store.books.update('tester', id, { year: 1970 }, [7, 1])
      assert.deepEqual(asJson(result), { outcome: 'updated', book: { id, ...dune, year: 1970, revision: 2 } })
    })

    it('changes nothing and reports "stale" when the revision is not expected', async () => {
      const { id } = await store.books.create('tester', dune)
      await store.books.update('tester', id, { year: 1966 })
      assert.deepEqual(await store.books.update('tester', id, { year: 1970 }, [1]), { outcome: 'stale' })
      assert.deepEqual(await store.books.update('tester', id, { year: 1970 }, []), { outcome: 'stale' })
      assert.deepEqual(asJson(await store.books.get(id)), { id, ...dune, year: 1966, revision: 2 })
    })

    it('reports "missing" for a book that does not exist, with or without expected revisions', async () => {
      const { id } = await store.books.create('tester', dune)
      await store.books.delete('tester', id)
      assert.deepEqual(await store.books.update('tester', id, { year: 1970 }), { outcome: 'missing' })
      assert.deepEqual(await store.books.update('tester', id, { year: 1970 }, [1]), { outcome: 'missing' })
    })

    it('lets exactly one of two updates expecting the same revision win', async () => {
      const { id } = await store.books.create('tester', dune)
      const outcomes = await Promise.all([
        store.books.update('tester', id, { year: 1970 }, [1]),
        store.books.update('tester', id, { year: 1980 }, [1]),
      ])
      assert.deepEqual(outcomes.map((result) => result.outcome).sort(), ['stale', 'updated'])
      assert.equal((await store.books.get(id))?.revision, 2)
    })

    it('deletes a book once', async () => {
      const [kept, deleted] = await createAll()
      assert.equal(await store.books.delete('tester', deleted!.id), 'deleted')
      assert.equal(await store.books.get(deleted!.id), undefined)
      assert.equal(await store.books.delete('tester', deleted!.id), 'missing')
      assert.deepEqual(asJson(await store.books.get(kept!.id)), asJson(kept))
    })

    it('finds the smallest id of a stored book that a book repeats, folded, and with `below` only those below it', async () => {
      const [first, second] = await Promise.all([store.books.create('tester', dune), store.books.create('tester', dune)])
      const [older, newer] = [first!.id, second!.id].sort((a, b) => a - b)
      const repeat = { title: 'DUNE', author: 'frank herbert', year: 1965 }
      const other = { ...dune, year: 1966 }
      assert.deepEqual(await store.books.sameAs([repeat, other]), [older, undefined])
      assert.deepEqual(await store.books.sameAs([repeat], newer! + 1), [older])
      assert.deepEqual(await store.books.sameAs([repeat], older), [undefined])
      await store.books.delete('tester', older!)
      assert.deepEqual(await store.books.sameAs([repeat], newer), [undefined])
      assert.deepEqual(await store.books.sameAs([repeat]), [newer])
    })

    it('gives the newest failed logins of a key after a time, newest first, at most as many as asked', async () => {
      for (const at of [1000, 2000, 3000, 3000, 4000]) await store.loginFailures.record('203.0.113.7', at, 0)
      await store.loginFailures.record('203.0.113.8', 5000, 0)
      assert.deepEqual(await store.loginFailures.recent('203.0.113.7', 1000, 10), [4000, 3000, 3000, 2000])
      assert.deepEqual(await store.loginFailures.recent('203.0.113.7', 0, 2), [4000, 3000])
      assert.deepEqual(await store.loginFailures.recent('198.51.100.1', 0, 10), [])
    })

    it('deletes the failed logins of every key up to the expiry time given with a new one', async () => {
      await store.loginFailures.record('203.0.113.7', 1000, 0)
      await store.loginFailures.record('203.0.113.7', 2000, 0)
      await store.loginFailures.record('203.0.113.8', 3000, 0)
      await store.loginFailures.record('198.51.100.1', 4000, 2000)
      assert.deepEqual(await store.loginFailures.recent('203.0.113.7', 0, 10), [])
      assert.deepEqual(await store.loginFailures.recent('203.0.113.8', 0, 10), [3000])
      assert.deepEqual(await store.loginFailures.recent('198.51.100.1', 0, 10), [4000])
    })

    it('commits every write of a transaction together, and answers what its work returned', async () => {
      const existing = await store.books.create('tester', dune)
      const result = await store.transaction(async ({ books, loginFailures }) => {
        const created = await books.create('tester', catalogue[1]!)
        await books.update('tester', existing.id, { year: 1966 })
        await loginFailures.record('203.0.113.7', 1000, 0)
        return created.id
      })
      assert.deepEqual(asJson(await store.books.get(result)), { id: result, ...catalogue[1], revision: 1 })
      assert.equal((await store.books.get(existing.id))?.year, 1966)
      assert.deepEqual(await store.loginFailures.recent('203.0.113.7', 0, 10), [1000])
    })

    it('keeps none of the writes of a transaction whose work fails, and passes the failure on', async () => {
      const existing = await store.books.create('tester', dune)
      const failure = new Error('the work failed')
      let createdId = 0
      let seenOutside: [Promise<unknown>, Promise<unknown>] | undefined
      await assert.rejects(
        store.transaction(async ({ books, loginFailures }) => {
          createdId = (await books.create('tester', catalogue[1]!)).id
          assert.equal((await books.get(createdId))?.title, catalogue[1]!.title)
          await books.update('tester', existing.id, { year: 1966 })
          await books.delete('tester', existing.id)
          await loginFailures.record('203.0.113.7', 1000, 0)
          // Asked for outside while the transaction is open: they must not see its writes.
          seenOutside = [store.books.get(createdId), listById(store, 0, 100)]
          throw failure
        }),
        failure,
      )
      assert.equal(asJson(await seenOutside![0]), null)
      assert.deepEqual(asJson(await seenOutside![1]), [{ id: existing.id, ...dune }])
      assert.equal(await store.books.get(createdId), undefined)
      assert.deepEqual(asJson(await store.books.get(existing.id)), asJson(existing))
      assert.deepEqual(await store.loginFailures.recent('203.0.113.7', 0, 10), [])
    })

    it('finds the books a transaction wrote by their words once it commits', async () => {
      const existing = await store.books.create('tester', dune)
      const byWords = (words: string[]): FindQuery => ({ filter: { words }, order: { relevance: true }, limit: 10, count: true })
      const titles = async (words: string[]) => {
        const { found, total } = await findPage(store, byWords(words))
        return { titles: found.map(({ book }) => book.title), total }
      }
      await store.transaction(async ({ books }) => {
        await books.create('tester', catalogue[1]!)
        await books.update('tester', existing.id, { title: 'Children of Dune', author: 'Brian Herbert' })
      })
      assert.deepEqual(await titles(['solar']), { titles: ['Solaris'], total: 1 })
      assert.deepEqual(await titles(['childr', 'brian']), { titles: ['Children of Dune'], total: 1 })
      assert.deepEqual(await titles(['lem']), { titles: ['Solaris'], total: 1 })
      assert.deepEqual(await titles(['frank']), { titles: [], total: 0 })
    })

    it('stores a batch that is found like books stored one by one: by words, contained text and sort', async () => {
      const ids = await store.transaction(({ books }) => books.createMany('tester', catalogue))
      const find = async (query: Omit<FindQuery, 'limit'>) =>
        (await findPage(store, { ...query, limit: 10 })).found.map(({ book }) => book.id)
      assert.deepEqual(await find({ filter: { words: ['stanislaw'] }, order: { relevance: true } }), [ids[1]])
      assert.deepEqual(
        await find({ filter: { authorContains: 'luis bo' }, order: { relevance: false, keys: [{ field: 'id', descending: false }] } }),
        [ids[3]],
      )
      assert.deepEqual(await find({ filter: {}, order: { relevance: false, keys: [{ field: 'title', descending: false }] } }), [
        ids[4],
        ids[0],
        ids[3],
        ids[2],
        ids[1],
      ])
    })

    it('finds by words in another order the books whose author alone holds them, among those whose title does', async () => {
      // Two titles hold the word, so a walk along the titles finds a page; the author's book lies between them.
      await store.transaction(({ books }) =>
        books.createMany('tester', [
          { title: 'Pine Cedar', author: 'Ann Lee', year: 2001 },
          { title: 'Birch', author: 'Pinecone Press', year: 2002 },
          { title: 'Alder Pine', author: 'Ann Lee', year: 2003 },
          { title: 'Cedar', author: 'Pi Nelson', year: 2004 },
        ]),
      )
      const { found } = await findPage(store, {
        filter: { words: ['pine'] },
        order: { relevance: false, keys: [{ field: 'title', descending: false }] },
        limit: 2,
      })
      assert.deepEqual(
        found.map(({ book }) => book.title),
        ['Alder Pine', 'Birch'],
      )
    })

    it('keeps the search columns of books created and changed together, each by its own changes', async () => {
      const [a, b] = await Promise.all([store.books.create('tester', dune), store.books.create('tester', catalogue[1]!)])
      await Promise.all([
        store.books.update('tester', a.id, { title: 'Dune Messiah' }),
        store.books.update('tester', b.id, { author: 'Stanisław Lem, translated' }),
        store.books.create('tester', catalogue[2]!),
      ])
      const byWords = async (words: string[]) =>
        (await findPage(store, { filter: { words }, order: { relevance: true }, limit: 10 })).found.map(({ book }) => book.title)
      assert.deepEqual(await byWords(['messiah', 'frank']), ['Dune Messiah'])
      assert.deepEqual(await byWords(['solaris', 'translat']), ['Solaris'])
      assert.deepEqual(await byWords(['octavia']), ['Kindred'])
    })

    it('answers the operations asked for outside a transaction while it is open', async () => {
      const outside: Promise<unknown>[] = []
      await store.transaction(async ({ books }) => {
        outside.push(store.books.create('tester', catalogue[2]!), store.loginFailures.record('203.0.113.7', 1000, 0))
        await books.create('tester', catalogue[1]!)
      })
      await Promise.all(outside)
      assert.deepEqual((await listById(store, 0, 10)).map((book) => book.title).sort(), [catalogue[1]!.title, catalogue[2]!.title].sort())
      assert.deepEqual(await store.loginFailures.recent('203.0.113.7', 0, 10), [1000])
    })

    it('refuses the repositories of a transaction once it has settled', async () => {
      let kept: Repositories | undefined
      await store.transaction(async (repositories) => {
        kept = repositories
      })
      await assert.rejects(kept!.books.create('tester', dune), /The transaction has ended/)
      assert.deepEqual(await listById(store, 0, 10), [])
    })

    it('answers a ping', async () => {
      await store.ping()
    })
  })
}
