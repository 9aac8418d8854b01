import assert from 'node:assert/strict'
import { statSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { describe, it, type TestContext } from 'node:test'
import fc from 'fast-check'
import { findQueryOf, parseBookQuery, type RawBookQuery } from '../../../src/books/list-parameters.ts'
import { INDEX_STEP, nextStepSize, SEARCH_INDEX_BATCH, SqliteSearchIndex, UPKEEP_STEP_MS } from '../../../src/store/sqlite/search-index.ts'
import { SqliteStore } from '../../../src/store/sqlite/store.ts'
import type { Book, NewBook } from '../../../src/books/book.ts'
import { compareFolded, compareTitles, expectedIds, matches, type ModelQuery } from '../../support/book-search-model.ts'
import { findPage, wholeIds } from '../../support/reads.ts'
import { temporaryDirectory } from '../../support/temporary.ts'
import { holdWriteLock } from '../../support/write-lock.ts'

/** Waits, 10 ms at a time and at most `tries` times, until `done()`: the upkeep thread works after the write that asked. */
async function until(done: () => boolean, tries = 500): Promise<void> {
  for (let n = 0; !done() && n < tries; n++) await new Promise((resolve) => setTimeout(resolve, 10))
}

async function openStore(t: TestContext, searchIndexBatch: number, busyTimeoutMs?: number) {
  const dir = await mkdtemp(join(tmpdir(), 'books-search-index-'))
  const path = join(dir, 'books.db')
  // Reads here are asked what they find, not how fast: a suite that shares two cores among a
  // dozen processes stalls one of the thousands of reads of the property below for seconds now and
  // then, which the service would rightly answer 503.
  const store = new SqliteStore({ path, searchIndexBatch, readers: 1, readDeadlineMs: 60_000, busyTimeoutMs })
  // A second connection reads what the store's own cannot show: the indexes themselves. It waits
  // for the store's writes in the background (the block summaries, the catch-up) to commit.
  const peek = new DatabaseSync(path, { timeout: 10_000 })
  t.after(async () => {
    peek.close()
    await store.close()
    await rm(dir, { recursive: true, force: true })
  })
  const lastIndexed = () => (peek.prepare('SELECT max(id) AS id FROM books WHERE indexed = 1').get()!.id as number | null) ?? 0
  return {
    store,
    peek,
    path,
    /** The newest book the indexes hold, or 0. */
    lastIndexed,
    /** Settles once the indexes hold book `id`, which the store's upkeep thread moves there after the write that asked. */
    indexedUpTo: async (id: number) => {
      await until(() => lastIndexed() >= id)
    },
    /** How many deleted books wait to leave the indexes. */
    leaving: () => peek.prepare('SELECT count(*) AS leaving FROM books_leaving_indexes').get()!.leaving as number,
    /** How many books wait in the tail. */
    tail: () => peek.prepare('SELECT count(*) AS tail FROM books WHERE indexed IS NULL').get()!.tail as number,
    /** The ids that the word index alone holds for a word's beginning. */
    indexedWith: (word: string) =>
      peek
        .prepare('SELECT rowid FROM books_words WHERE books_words MATCH ? ORDER BY rowid')
        .all(`"${word}"*`)
        .map((row) => row.rowid as number),
    /**
     * Throws unless the indexes, once the tail joins them, hold exactly the books: FTS5 compares
     * them with the books themselves. The tail joins them in a transaction that is rolled back.
     */
    checkIndexes: () => {
      peek.exec('BEGIN IMMEDIATE')
      try {
        new SqliteSearchIndex(peek, 1).indexAll()
        peek.exec("INSERT INTO books_words (books_words, rank) VALUES ('integrity-check', 1)")
        peek.exec("INSERT INTO books_text (books_text, rank) VALUES ('integrity-check', 1)")
      } finally {
        peek.exec('ROLLBACK')
      }
    },
  }
}

async function foundIds(store: SqliteStore, raw: RawBookQuery): Promise<number[]> {
  const { found } = await findPage(store, { ...findQueryOf(parseBookQuery(raw), undefined, 1000), count: false })
  return found.map(({ book }) => book.id)
}

/** How many books a query finds, as `count=true` answers. */
async function countOf(store: SqliteStore, raw: RawBookQuery): Promise<number | undefined> {
  return (await findPage(store, { ...findQueryOf(parseBookQuery(raw), undefined, 1), count: true })).total
}

/** Every page of `limit` books, each starting after the last book of the one before. */
async function pagedIds(store: SqliteStore, raw: RawBookQuery, limit: number): Promise<number[]> {
  const ids: number[] = []
  let after: (string | number)[] | undefined
  for (;;) {
    const { found } = await findPage(store, { ...findQueryOf(parseBookQuery(raw), after, limit), count: false })
    ids.push(...found.map(({ book }) => book.id))
    if (found.length < limit) return ids
    after = found.at(-1)!.position
  }
}

/** Sort orders, and how the books come in each: ties by id. */
const SORTS: [string, (a: Book, b: Book) => number][] = [
  ['title', (a, b) => compareTitles(a.title, b.title) || a.id - b.id],
  ['-author', (a, b) => compareFolded(b.author, a.author) || a.id - b.id],
  ['-year,title', (a, b) => b.year - a.year || compareTitles(a.title, b.title) || a.id - b.id],
  ['-id', (a, b) => b.id - a.id],
]

/** Filters, as the model takes them and as a request gives them. */
const FILTERS: [ModelQuery, RawBookQuery][] = [
  [{}, {}],
  [{ year: 2000 }, { year: '2000' }],
  [{ yearFrom: 2000 }, { year_from: '2000' }],
  [{ title: 'am' }, { title: 'am' }],
  [{ author: 'bramb' }, { author: 'bramb' }],
  [{ q: 'am' }, { q: 'am' }],
]

describe("sqlite: the size of the upkeep thread's steps", () => {
  const moved = (books: number) => ({ unindexed: 0, moved: books, emptied: false })

  it('takes as many books as the last step took per the time it aims at', () => {
    assert.equal(nextStepSize(INDEX_STEP, moved(1000), UPKEEP_STEP_MS), 1000)
    assert.equal(nextStepSize(INDEX_STEP, moved(1000), UPKEEP_STEP_MS * 0.8), 1250)
    assert.equal(nextStepSize(1200, { unindexed: 600, moved: 0, emptied: false }, UPKEEP_STEP_MS / 2), 1200)
  })

  it('takes no fewer books than a step on the thread that answers requests, and no more than a batch', () => {
    assert.equal(nextStepSize(SEARCH_INDEX_BATCH, moved(SEARCH_INDEX_BATCH), UPKEEP_STEP_MS * 40), INDEX_STEP)
    assert.equal(nextStepSize(INDEX_STEP, moved(INDEX_STEP), 1), SEARCH_INDEX_BATCH)
  })

  it('keeps its size after a step that found nothing to do', () => {
    assert.equal(nextStepSize(1500, { unindexed: 0, moved: 0, emptied: true }, 0.2), 1500)
  })
})

describe('sqlite: new books enter the search indexes in bulk', () => {
  it('finds every book as soon as it is stored, before and after the indexes take it', async (t) => {
    const { store, lastIndexed, indexedUpTo, indexedWith } = await openStore(t, 3)
    const ids: number[] = []
    for (let n = 1; n <= 7; n++) {
      const book = await store.books.create('tester', {
        title: `Voyage ${n} of the Dawn Treader`,
        author: `C. S. Lewis ${n}`,
        year: 1950 + n,
      })
      ids.push(book.id)
      assert.deepEqual(await foundIds(store, { q: 'voyag dawn' }), ids)
      assert.deepEqual(await foundIds(store, { title: 'treader' }), ids)
      assert.deepEqual(await foundIds(store, { author: `lewis ${n}` }), [book.id])
    }
    // Three books wait outside the indexes; the third goes in with the two before it.
    await indexedUpTo(ids[5]!)
    assert.equal(lastIndexed(), ids[5])
    assert.deepEqual(indexedWith('voyag'), ids.slice(0, 6))
  })

  it('takes deleted books out of the indexes in bulk, neither finding nor counting them meanwhile', async (t) => {
    const { store, indexedUpTo, indexedWith, leaving, checkIndexes } = await openStore(t, 4)
    const create = (n: number) => store.books.create('tester', { title: `Gone ${n}`, author: 'Fleeting', year: 2000 })
    const ids: number[] = []
    for (let n = 0; n < 4; n++) ids.push((await create(n)).id)
    await indexedUpTo(ids[3]!)
    ids.push((await create(4)).id)
    // Two indexed books deleted: with the one in the tail, fewer than a batch wait, and the
    // indexes still name them.
    await store.books.delete('tester', ids[0]!)
    await store.books.delete('tester', ids[1]!)
    assert.equal(leaving(), 2)
    assert.deepEqual(indexedWith('gone'), ids.slice(0, 4))
    assert.deepEqual(await foundIds(store, { q: 'gone', sort: 'id' }), ids.slice(2))
    assert.deepEqual(await foundIds(store, { title: 'gone', sort: 'id' }), ids.slice(2))
    assert.equal(await countOf(store, { q: 'gone' }), 3)
    assert.equal(await countOf(store, { q: 'fleet' }), 3)
    assert.equal(await countOf(store, { title: 'gone' }), 3)
    // A restored book comes back through the tail, found once and counted once, and the indexes
    // take it in only after its old entries are out. With it, a batch waits: a step takes the two
    // deleted books out, and leaves the tail for later.
    await store.books.restore('tester', ids[0]!)
    const found = [ids[0], ids[2], ids[3], ids[4]]
    assert.deepEqual(await foundIds(store, { q: 'gone', sort: 'id' }), found)
    assert.equal(await countOf(store, { q: 'gone' }), 4)
    await until(() => leaving() === 0)
    assert.equal(leaving(), 0)
    assert.deepEqual(indexedWith('gone'), [ids[2], ids[3]])
    assert.deepEqual(await foundIds(store, { q: 'gone', sort: 'id' }), found)
    assert.equal(await countOf(store, { q: 'gone' }), 4)
    checkIndexes()
    // A third deletion, short of a batch, waits; the indexes still name it, and finds and counts leave it out.
    await store.books.delete('tester', ids[3]!)
    assert.equal(leaving(), 1)
    assert.deepEqual(indexedWith('gone'), [ids[2], ids[3]])
    assert.deepEqual(await foundIds(store, { q: 'gone', sort: 'id' }), [ids[0], ids[2], ids[4]])
    assert.equal(await countOf(store, { q: 'gone' }), 3)
    checkIndexes()
  })

  it('indexes restored books once a batch of them waits, as it does new ones', async (t) => {
    const { store, indexedUpTo, leaving, tail } = await openStore(t, 4)
    const ids: number[] = []
    for (let n = 0; n < 4; n++) ids.push((await store.books.create('tester', { title: `Back ${n}`, author: 'Again', year: 2000 })).id)
    await indexedUpTo(ids[3]!)
    for (const id of ids) await store.books.delete('tester', id)
    await until(() => leaving() === 0)
    assert.equal(leaving(), 0)
    for (const id of ids) await store.books.restore('tester', id)
    await until(() => tail() === 0)
    assert.equal(tail(), 0)
    assert.deepEqual(await foundIds(store, { q: 'back', sort: 'id' }), ids)
  })

  it('finds contained text whole and in its own field, whether the indexes hold the books or not', async (t) => {
    for (const batch of [1, 100]) {
      const { store, lastIndexed, indexedUpTo } = await openStore(t, batch)
      const create = (title: string, author: string) => store.books.create('tester', { title, author, year: 2000 })
      // Every trigram of "mann" is in this author, but not "mann" itself; the title holds it.
      await create('Mannheim', 'Ann Mandel')
      const mann = await create('Buddenbrooks', 'Thomas Mann')
      if (batch === 1) await indexedUpTo(mann.id)
      assert.equal(lastIndexed() === mann.id, batch === 1)
      assert.deepEqual(await foundIds(store, { author: 'mann' }), [mann.id])
      assert.deepEqual(await foundIds(store, { author: 'ann man' }), [mann.id - 1])
      assert.deepEqual(await foundIds(store, { title: 'mann' }), [mann.id - 1])
    }
  })

  it('indexes what an import stores once it commits, a step at a time, until the tail is shorter than a batch', async (t) => {
    // An import leaves its books in the tail, found all the same, and the store indexes them after it.
    const { store, lastIndexed, tail, checkIndexes } = await openStore(t, 20)
    const caughtUp = async () => {
      await until(() => tail() < 20, 100)
    }
    const books = (count: number, word: string): NewBook[] =>
      Array.from({ length: count }, (_, n) => ({ title: `${word} ${n}`, author: 'Batch', year: 2000 }))
    const importAll = (...batches: NewBook[][]) =>
      store.transaction(async ({ books: repository }) => {
        const ids: number[] = []
        for (const batch of batches) ids.push(...(await repository.createMany('tester', batch)))
        return ids
      })

    // Past ten batches within the import.
    const first = await importAll(books(150, 'Imported'), books(100, 'Imported'))
    assert.deepEqual(await foundIds(store, { q: 'import', sort: 'id' }), first)
    await caughtUp()
    assert.equal(lastIndexed(), first.at(-1))
    checkIndexes()
    assert.deepEqual(await foundIds(store, { q: 'import', sort: 'id' }), first)
    // Over one batch: indexed after it commits.
    const second = await importAll(books(50, 'Later'))
    await caughtUp()
    assert.equal(lastIndexed(), second.at(-1))
    assert.deepEqual(await foundIds(store, { q: 'later', sort: 'id' }), second)
    // Under one batch: left in the tail, found all the same.
    const third = await importAll(books(10, 'Last'))
    assert.equal(lastIndexed(), second.at(-1))
    assert.deepEqual(await foundIds(store, { q: 'last', sort: 'id' }), third)

    // A rolled-back import leaves the indexes as they were.
    await assert.rejects(
      store.transaction(async ({ books: repository }) => {
        await repository.createMany('tester', books(300, 'Imported'))
        throw new Error('changed my mind')
      }),
      /changed my mind/,
    )
    assert.equal(lastIndexed(), second.at(-1))
    checkIndexes()
    assert.deepEqual(await foundIds(store, { q: 'import', sort: 'id' }), first)
  })

  it('catches up after an import on a thread of its own, which a lock on the file holds instead of this one', async (t) => {
    const { store, peek, lastIndexed, tail, checkIndexes } = await openStore(t, 20, 3000)
    const ids = await store.transaction(({ books }) =>
      books.createMany(
        'tester',
        Array.from({ length: 2000 }, (_, n) => ({ title: `Held ${n}`, author: 'Locked', year: 2000 })),
      ),
    )
    // Another connection's write lock, taken before the catch-up's next step: that step waits for
    // it. Were the step on this thread, it would wait here, and the timer that releases the lock
    // would fire only after the store's busy timeout of 3 s.
    const late = await holdWriteLock(peek, 200)
    assert.ok(late < 1500, `the timer fired ${late} ms late`)
    assert.equal((await store.books.get(ids[0]!))?.title, 'Held 0')
    await until(() => tail() === 0)
    assert.equal(lastIndexed(), ids.at(-1))
    checkIndexes()
    assert.deepEqual(await pagedIds(store, { q: 'held', sort: 'id' }, 1000), ids)
  })

  it("answers a write that finds a step due at once, and steps on the store's upkeep thread", async (t) => {
    const { store, peek, lastIndexed, indexedUpTo } = await openStore(t, 3)
    // A step made slow: moving book 3 into the indexes runs a join of four million pairs of rows.
    peek.exec('CREATE TABLE slow (x INTEGER)')
    peek.exec('INSERT INTO slow WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 2000) SELECT x FROM n')
    const slowly = 'SELECT count(*) FROM slow a, slow b WHERE a.x * b.x = -1'
    peek.exec(`CREATE TRIGGER slow_step AFTER UPDATE OF indexed ON books WHEN NEW.id = 3 BEGIN ${slowly}; END`)
    const timed = (work: () => unknown) => {
      const started = performance.now()
      work()
      return performance.now() - started
    }
    const join = Math.min(
      timed(() => peek.prepare(slowly).get()),
      timed(() => peek.prepare(slowly).get()),
    )
    const create = (n: number) => store.books.create('tester', { title: `Step ${n}`, author: 'Due', year: 2000 })
    await create(1)
    await create(2)
    const started = performance.now()
    const third = await create(3)
    const answered = performance.now() - started
    assert.ok(answered < join / 2, `the write that found a step due took ${answered} ms, the step's join alone ${join} ms`)
    await indexedUpTo(third.id)
    assert.equal(lastIndexed(), third.id)
  })

  it('leaves copying an import into the database file to the catch-up, and a later commit copies it when that fails', async (t) => {
    const { store, peek, path } = await openStore(t, 20)
    // Every step of the catch-up fails, so the catch-up copies nothing into the file.
    peek.exec(`CREATE TRIGGER books_unindexable BEFORE UPDATE OF indexed ON books
      BEGIN SELECT RAISE(ABORT, 'the index is unavailable'); END`)
    const size = () => statSync(path).size
    const before = size()
    // Far more than SQLite's 1,000 pages of log, past which a commit copies it.
    await store.transaction(({ books }) =>
      books.createMany(
        'tester',
        Array.from({ length: 60_000 }, (_, n) => ({ title: `Copied ${n}`, author: 'Later', year: 2000 })),
      ),
    )
    assert.equal(size(), before)
    peek.exec('DROP TRIGGER books_unindexable')
    await store.books.create('tester', { title: 'Copied at last', author: 'Later', year: 2000 })
    assert.ok(size() > before + 1_000_000, `the file grew from ${before} to ${size()} bytes`)
  })

  it('copies the log into the database file around each step of a catch-up, so that writes beside it leave the log short', async (t) => {
    const { store, path, tail } = await openStore(t, SEARCH_INDEX_BATCH)
    const log = () => statSync(`${path}-wal`).size
    const words = ['river', 'stone', 'night', 'garden', 'winter', 'light', 'shadow', 'glass']
    // Books unlike each other: each step writes to pages all over the sort-key indexes.
    const book = (n: number) => ({ title: `${words[n % 8]} ${words[(n >> 3) % 8]} ${n}`, author: `Author ${n % 997}`, year: 2000 })
    await store.transaction(({ books }) =>
      books.createMany(
        'tester',
        Array.from({ length: 30_000 }, (_, n) => book(n)),
      ),
    )
    let longest = log()
    // A write commits while each step's pages are copied, after the step has answered.
    for (let n = 0; tail() >= SEARCH_INDEX_BATCH; n++) {
      await store.books.create('tester', book(n))
      longest = Math.max(longest, log())
    }
    const file = statSync(path).size
    assert.ok(longest < file, `the log grew to ${longest} bytes beside a database file of ${file}`)
  })

  it('stores a book even when indexing the tail fails, and indexes it with a later step', async (t) => {
    const { store, lastIndexed, indexedUpTo, peek, indexedWith } = await openStore(t, 2)
    // The last statement of a step fails: the step is undone whole.
    peek.exec(`CREATE TRIGGER books_unindexable BEFORE UPDATE OF indexed ON books
      BEGIN SELECT RAISE(ABORT, 'the index is unavailable'); END`)
    const ids: number[] = []
    for (let n = 0; n < 4; n++) ids.push((await store.books.create('tester', { title: `Kept ${n}`, author: 'Anyway', year: 2001 })).id)
    assert.equal(lastIndexed(), 0)
    assert.deepEqual(await foundIds(store, { q: 'kept' }), ids)

    assert.deepEqual(indexedWith('kept'), [])
    peek.exec('DROP TRIGGER books_unindexable')
    // The step the fourth book asked for may run before the trigger goes, or after it and take the
    // four books: either way, of two books more at least one asks for a step that takes the fifth.
    for (let n = 4; n < 6; n++) ids.push((await store.books.create('tester', { title: `Kept ${n}`, author: 'Anyway', year: 2001 })).id)
    await indexedUpTo(ids[4]!)
    assert.ok(lastIndexed() >= ids[4]!, `the indexes hold up to book ${lastIndexed()}`)
    assert.deepEqual(indexedWith('kept').slice(0, 5), ids.slice(0, 5))
    assert.deepEqual(await foundIds(store, { q: 'kept' }), ids)
  })

  it('indexes a book whose write waited for a step that failed, with the step that write asks for', async (t) => {
    const { store, lastIndexed, indexedUpTo, peek } = await openStore(t, 2)
    // Steps fail while the catalogue holds fewer than three books.
    peek.exec(`CREATE TRIGGER books_unindexable BEFORE UPDATE OF indexed ON books WHEN (SELECT count(*) FROM books) < 3
      BEGIN SELECT RAISE(ABORT, 'the index is unavailable'); END`)
    const create = (n: number) => store.books.create('tester', { title: `Waited ${n}`, author: 'Patient', year: 2002 })
    await create(1)
    // The second book's commit asks for a step, which holds the write turn until it has failed; the
    // third book's write waits for it, and asks for the next.
    await create(2)
    const third = await create(3)
    await indexedUpTo(third.id)
    assert.equal(lastIndexed(), third.id)
  })

  it('on opening, indexes books that were written into the file directly', async (t) => {
    // Removed when the file's tests are done, after the store below is closed: removed by the first
    // of this test's hooks, it raced the store's threads, which may still write beside the file.
    const dir = temporaryDirectory('books-search-index-')
    const path = join(dir, 'books.db')
    await new SqliteStore({ path }).close()
    const db = new DatabaseSync(path)
    const insert = db.prepare(`INSERT INTO books (title, author, year, title_folded, author_folded, title_words, author_words)
      VALUES (?, ?, ?, ?, ?, ?, ?)`)
    db.exec('BEGIN')
    for (let n = 0; n < 25_000; n++) insert.run(`Loaded ${n}`, 'Bulk', 1999, `loaded ${n}`, 'bulk', `loaded ${n}`, 'bulk')
    db.exec('COMMIT')
    db.close()

    const store = new SqliteStore({ path })
    t.after(() => store.close())
    const peek = new DatabaseSync(path)
    t.after(() => peek.close())
    assert.equal(peek.prepare('SELECT count(*) AS tail FROM books WHERE indexed IS NULL').get()!.tail, 0)
    assert.deepEqual(await foundIds(store, { q: 'loaded 24999' }), [25_000])
  })

  it('keeps finds and counts exact and the indexes whole through any mix of writes, in the tail and out of it', async (t) => {
    const words = ['amber', 'ambit', 'bramble', 'crane', 'árbol', 'zoë']
    const text = fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 3 }).map((parts) => parts.join(' '))
    const write = fc.oneof(
      fc.record({ kind: fc.constant('create' as const), title: text, author: text, year: fc.integer({ min: 1999, max: 2001 }) }),
      fc.record({ kind: fc.constant('update' as const), pick: fc.nat(), title: fc.option(text), author: fc.option(text) }),
      fc.record({ kind: fc.constant('delete' as const), pick: fc.nat() }),
      fc.record({ kind: fc.constant('restore' as const), pick: fc.nat() }),
    )
    const queries: ModelQuery[] = [
      ...words.map((word) => ({ q: word.slice(0, 3) })),
      { q: 'amb cran' },
      { title: 'bramb' },
      { author: 'arbol' },
      { title: 'er c' },
      { author: 'amber' },
      { title: 'ble cr' },
    ]
    await fc.assert(
      fc.asyncProperty(fc.array(write, { minLength: 1, maxLength: 40 }), fc.integer({ min: 1, max: 6 }), async (writes, batch) => {
        const { store, checkIndexes } = await openStore(t, batch)
        const books = new Map<number, Book>()
        const trash = new Map<number, Book>()
        for (const step of writes) {
          const ids = [...books.keys()]
          if (step.kind === 'restore') {
            const trashed = [...trash.keys()]
            if (trashed.length === 0) continue
            const id = trashed[step.pick % trashed.length]!
            await store.books.restore('tester', id)
            books.set(id, trash.get(id)!)
            trash.delete(id)
          } else if (step.kind === 'create') {
            const { revision: _, ...book } = await store.books.create('tester', { title: step.title, author: step.author, year: step.year })
            books.set(book.id, book)
          } else if (ids.length > 0) {
            const id = ids[step.pick % ids.length]!
            if (step.kind === 'delete') {
              await store.books.delete('tester', id)
              trash.set(id, books.get(id)!)
              books.delete(id)
            } else {
              const changes = {
                ...(step.title === null ? {} : { title: step.title }),
                ...(step.author === null ? {} : { author: step.author }),
              }
              await store.books.update('tester', id, changes)
              books.set(id, { ...books.get(id)!, ...changes })
            }
          }
        }
        checkIndexes()
        for (const query of queries) {
          const raw: RawBookQuery = Object.fromEntries(Object.entries(query).map(([name, value]) => [name, String(value)]))
          const expected = expectedIds([...books.values()], query)
          assert.deepEqual(await foundIds(store, raw), expected, JSON.stringify(query))
          assert.equal(await countOf(store, raw), expected.length, `count: ${JSON.stringify(query)}`)
        }
        // Sorted pages merge the indexed books with the tail, and a page may start in either; so
        // does a whole read, whose walk of the indexed books is merged with the tail's in one statement.
        for (const [sort, compare] of SORTS) {
          for (const [filter, given] of FILTERS) {
            const raw: RawBookQuery = { sort, ...given }
            const expected = [...books.values()]
              .filter((book) => matches(book, filter))
              .sort(compare)
              .map((book) => book.id)
            assert.deepEqual(await pagedIds(store, raw, 2), expected, JSON.stringify(raw))
            assert.deepEqual(
              await wholeIds(store, { ...findQueryOf(parseBookQuery(raw), undefined, 2), count: false }),
              expected,
              `whole: ${JSON.stringify(raw)}`,
            )
          }
        }
      }),
      { numRuns: 40 },
    )
  })
})
