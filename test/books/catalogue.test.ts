import assert from 'node:assert/strict'
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
        const read = async function* () {
          yield* batches()
        }
        const { ids, duplicates } = await catalogue.importBooks(importer, read, { skipDuplicates: true }, () => Promise.resolve())

        assert.deepEqual(
          duplicates.map(({ row }) => row),
          [5, 9],
        )
        // Seven batches of two, less two duplicates: gathered by three, the last one what is left.
        assert.deepEqual(calls, [4, 3, 3, 2])
        const titles = await Promise.all(ids.map(async (id) => (await store.books.get(id))?.title))
        assert.deepEqual(
          titles,
          [1, 2, 3, 4, 6, 7, 8, 10, 11, 12, 13, 14].map((row) => `Book ${row}`),
        )
      })
    })
  }
})
