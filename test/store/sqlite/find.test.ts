import assert from 'node:assert/strict'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { test } from 'node:test'
import type { NewBook } from '../../../src/books/book.ts'
import type { FindQuery } from '../../../src/books/find.ts'
import { SqliteFinder } from '../../../src/store/sqlite/find.ts'
import { SqliteSearchIndex } from '../../../src/store/sqlite/search-index.ts'
import { SqliteStore } from '../../../src/store/sqlite/store.ts'
import { expectedIds } from '../../support/book-search-model.ts'
import { temporaryDirectory } from '../../support/temporary.ts'

test('a whole read by relevance gives its first page from the top tier before it ranks the other matches', async () => {
  const path = join(temporaryDirectory('books-find-'), 'books.db')
  const store = new SqliteStore({ path })
  // Ids from 1. The find's guard asks about every 1024th book it reads (src/store/sqlite/find.ts):
  // those books hold the words, but their titles do not begin with them, so only a ranking of every
  // match reads them.
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
  try {
    new SqliteSearchIndex(db).indexAll()
    let asked = 0
    db.function('book_in_time', { deterministic: false, directOnly: true }, () => ++asked)
    const finder = new SqliteFinder(db)
    const query: FindQuery = { filter: { words: ['the', 'old'] }, order: { relevance: true }, limit: 10 }
    const expected = expectedIds(stored, { q: 'the old' })

    const rows = finder.rows(query, 10)
    const read: number[] = []
    for (let i = 0; i < 10; i++) read.push(rows.next().value![0])
    assert.equal(asked, 0, 'the first page read no book outside the top tier')
    for (let next = rows.next(); next.done !== true; next = rows.next()) read.push(next.value[0])
    assert.ok(asked > 0)
    assert.deepEqual(read, expected)

    // A first page larger than the top tier: every match is ranked at once, in the same order.
    assert.deepEqual(
      [...finder.rows(query, 5000)].map(([id]) => id),
      expected,
    )
  } finally {
    db.close()
  }
})
