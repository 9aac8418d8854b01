import assert from 'node:assert/strict'
import { setTimeout } from 'node:timers/promises'
import { describe, it } from 'node:test'
import type { NewBook } from '../../src/books/book.ts'
import { Catalogue } from '../../src/books/catalogue.ts'
import type { ImportBatch } from '../../src/books/duplicates.ts'
import type { Principal } from '../../src/auth/principal.ts'
import type { Store } from '../../src/store/store.ts'
import { storeEngines } from '../helpers.ts'

const importer: Principal = { actor: 'ada', username: 'ada', role: 'editor' }

/** The store, with `importRows` books taken at a time by its transactions, and the size of each createMany. */
function gathering(store: Store, importRows: number, calls: number[]): Store {
  const wrapped = Object.create(store) as Store
  wrapped.transaction = (work) =>
    store.transaction((repositories) =>
      work({
        ...repositories,
        books: {
          ...repositories.books,
          importRows,
          createMany: (actor, books) => {
            calls.push(books.length)
            return repositories.books.createMany(actor, books)
          },
        },
      }),
    )
  return wrapped
}

/** Rows 1 to 14 in batches of two; rows 5 and 9 repeat rows 1 and 2. */
function* batches(): Generator<ImportBatch> {
  const book = (row: number): NewBook =>
    row === 5 || row === 9
      ? { title: `Book ${row === 5 ? 1 : 2}`, author: 'Someone', year: 2000 }
      : { title: `Book ${row}`, author: 'Someone', year: 2000 }
  for (let row = 1; row <= 14; row += 2) yield { rows: [row, row + 1], books: [book(row), book(row + 1)] }
}

describe('importing books', () => {
  for (const engine of storeEngines) {
    describe(engine.name, { skip: engine.skip }, () => {
      it('hands the store as many books at a time as it takes, and answers the ids in row order', async (t) => {
        const store = await engine.open()
        t.after(() => store.close())
        const calls: number[] = []
        const catalogue = new Catalogue(gathering(store, 3, calls))
        const read = (async function* () {
          yield* batches()
        })()
        const { ids, duplicates } = await catalogue.importBooks(importer, read, { skipDuplicates: true }, () => Promise.resolve())

        assert.deepEqual(
          duplicates.map(({ row }) => row),
          [5, 9],
        )
        // Seven batches of two, less two duplicates: twelve books, three at a time.
        assert.deepEqual(calls, [3, 3, 3, 3])
        const titles = await Promise.all(ids.map(async (id) => (await store.books.get(id))?.title))
        assert.deepEqual(
          titles,
          [1, 2, 3, 4, 6, 7, 8, 10, 11, 12, 13, 14].map((row) => `Book ${row}`),
        )
      })

      it('takes a row that repeats one this import has stored already for an earlier row, not a stored book', async (t) => {
        const store = await engine.open()
        t.after(() => store.close())
        const catalogue = new Catalogue(gathering(store, 100, []))
        // The lookups go a thousand rows at a time: by row 1,500, row 1 is stored.
        const rows = Array.from({ length: 1500 }, (_, i) => i + 1)
        const book = (row: number): NewBook => ({ title: `Book ${row === 1500 ? 1 : row}`, author: 'Someone', year: 2000 })
        const read = (async function* () {
          for (let start = 0; start < rows.length; start += 100) {
            const part = rows.slice(start, start + 100)
            yield { rows: part, books: part.map(book) }
          }
        })()
        const { ids, duplicates } = await catalogue.importBooks(importer, read, { skipDuplicates: true }, () => Promise.resolve())
        assert.deepEqual(duplicates, [{ row: 1500, id: null }])
        assert.equal(ids.length, 1499)
      })

      it('stores nothing when reading the file fails after books were stored, and passes the failure on', async (t) => {
        const store = await engine.open()
        t.after(() => store.close())
        const calls: number[] = []
        const catalogue = new Catalogue(gathering(store, 2, calls))
        const refused = new Error('refused')
        const read = (async function* () {
          yield* batches()
          throw refused
        })()
        await assert.rejects(
          catalogue.importBooks(importer, read, { skipDuplicates: false }, () => Promise.resolve()),
          refused,
        )
        assert.equal(calls.length, 7)
        // Fourteen books went to the store, ids 1 to 14, and none of them stayed.
        const left = await Promise.all(Array.from({ length: 14 }, (_, i) => store.books.get(i + 1)))
        assert.deepEqual(left, Array(14).fill(undefined))
        assert.equal(await store.changes.latest(), 0)
      })

      it("fails with the store's failure when a statement fails while the next books are read, leaving nothing unhandled", async (t) => {
        const store = await engine.open()
        t.after(() => store.close())
        const unhandled: unknown[] = []
        const note = (reason: unknown) => unhandled.push(reason)
        process.on('unhandledRejection', note)
        t.after(() => process.off('unhandledRejection', note))
        const failure = new Error('the store failed')
        const failing = Object.create(store) as Store
        failing.transaction = (work) =>
          store.transaction((repositories) =>
            work({
              ...repositories,
              books: { ...repositories.books, importRows: 2, createMany: () => setTimeout(10).then(() => Promise.reject(failure)) },
            }),
          )
        // The next batch takes longer to read than the statement takes to fail.
        const read = (async function* () {
          for (const batch of batches()) {
            yield batch
            await setTimeout(50)
          }
        })()
        await assert.rejects(
          new Catalogue(failing).importBooks(importer, read, { skipDuplicates: false }, () => Promise.resolve()),
          failure,
        )
        await setTimeout(10)
        assert.deepEqual(unhandled, [])
      })
    })
  }
})
