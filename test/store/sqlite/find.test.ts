import assert from 'node:assert/strict'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { test, type TestContext } from 'node:test'
import type { Book, NewBook } from '../../../src/books/book.ts'
import type { FindQuery, SortField } from '../../../src/books/find.ts'
import { SqliteFinder } from '../../../src/store/sqlite/find.ts'
import { SqliteSearchIndex } from '../../../src/store/sqlite/search-index.ts'
import { SqliteStore } from '../../../src/store/sqlite/store.ts'
import { compareFolded, compareTitles, expectedIds } from '../../support/book-search-model.ts'
import { temporaryDirectory } from '../../support/temporary.ts'

/**
 * 2,048 books, ids from 1, every one indexed, on a connection of the test's own. The find's guard
 * asks about every 1024th book a statement reads (src/store/sqlite/find.ts): those two books hold
 * "the old", but their titles do not begin with it, so only a ranking of every match reads them.
 */
async function catalogue(t: TestContext): Promise<{ db: DatabaseSync; stored: Book[] }> {
  const path = join(temporaryDirectory('books-find-'), 'books.db')
  const store = new SqliteStore({ path })
  const books: NewBook[] = Array.from({ length: 2048 }, (_, i) => {
    if ((i + 1) % 1024 === 0) return { title: 'Zebra Crossing', author: 'Theodora Old', year: 2000 }
    if (i % 7 === 0) return { title: `Theory of the Old ${i}`, author: 'Anonymous', year: 2000 }
    return { title: `The Old ${'x'.repeat(1 + (i % 30))}`, author: 'Anonymous', year: 2000 }
  })
  const ids = await store.books.createMany('tester', books)
  await store.close()
  const stored = books.map((book, i) => ({ ...book, id: ids[i]!, revision: 1 }))
  assert.equal(stored[1023]!.id, 1024)
  const db = new DatabaseSync(path)
  t.after(() => db.close())
  new SqliteSearchIndex(db).indexAll()
  return { db, stored }
}

const theOld: FindQuery = { filter: { words: ['the', 'old'] }, order: { relevance: true }, limit: 10 }

test('a whole read by relevance gives its first page from the top tier before it ranks the other matches', async (t) => {
  const { db, stored } = await catalogue(t)
  let asked = 0
  db.function('book_in_time', { deterministic: false, directOnly: true }, () => ++asked)
  const finder = new SqliteFinder(db)
  const expected = expectedIds(stored, { q: 'the old' })

  const rows = finder.rows(theOld, 10)
  const read: number[] = []
  for (let i = 0; i < 10; i++) read.push(rows.next().value![0])
  assert.equal(asked, 0, 'the first page read no book outside the top tier')
  for (let next = rows.next(); next.done !== true; next = rows.next()) read.push(next.value[0])
  assert.ok(asked > 0)
  assert.deepEqual(read, expected)

  // A first page larger than the top tier: every match is ranked at once, in the same order.
  assert.deepEqual(
    [...finder.rows(theOld, 5000)].map(([id]) => id),
    expected,
  )
})

test('a whole read sorted by a key gives its first books before it reads the other matches', async (t) => {
  const { db, stored } = await catalogue(t)
  let asked = 0
  db.function('book_in_time', { deterministic: false, directOnly: true }, () => ++asked)
  const finder = new SqliteFinder(db)
  const matching = new Set(expectedIds(stored, { q: 'the old' }))
  const byKey: Record<Exclude<SortField, 'id'>, (a: Book, b: Book) => number> = {
    title: (a, b) => compareTitles(a.title, b.title),
    author: (a, b) => compareFolded(a.author, b.author),
    year: (a, b) => a.year - b.year,
  }

  // In each order, the books the guard asks about come after the first page (see catalogue).
  for (const field of ['title', 'author', 'year', 'id'] as const) {
    asked = 0
    const query: FindQuery = {
      filter: { words: ['the', 'old'] },
      order: { relevance: false, keys: [{ field, descending: false }] },
      limit: 10,
    }
    const rows = finder.rows(query, 10)
    const read: number[] = []
    for (let i = 0; i < 10; i++) read.push(rows.next().value![0])
    assert.equal(asked, 0, `sorted by ${field}, the first page read no book after it`)
    for (let next = rows.next(); next.done !== true; next = rows.next()) read.push(next.value[0])
    const compare = field === 'id' ? () => 0 : byKey[field]
    const expected = stored.filter((book) => matching.has(book.id)).sort((a, b) => compare(a, b) || a.id - b.id)
    assert.deepEqual(
      read,
      expected.map((book) => book.id),
    )
  }
})

test("a whole read stopped part way, as one out of time is, leaves the connection's next read of its shape whole", async (t) => {
  const { db, stored } = await catalogue(t)
  const finder = new SqliteFinder(db)
  db.function('book_in_time', { deterministic: false, directOnly: true }, () => {
    throw new Error('out of time')
  })
  // Each whole read runs in a transaction of its own.
  db.exec('BEGIN')
  const stopped = finder.rows(theOld, 10)
  for (let i = 0; i < 10; i++) stopped.next()
  assert.throws(() => stopped.next(), /out of time/)
  db.exec('COMMIT')

  db.function('book_in_time', { deterministic: false, directOnly: true }, () => 1)
  db.exec('BEGIN')
  assert.deepEqual(
    [...finder.rows(theOld, 10)].map(([id]) => id),
    expectedIds(stored, { q: 'the old' }),
  )
  db.exec('COMMIT')
})
