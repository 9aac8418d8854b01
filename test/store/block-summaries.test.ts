import assert from 'node:assert/strict'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { describe, it, type TestContext } from 'node:test'
import pg from 'pg'
import { findQueryOf, parseBookQuery, type RawBookQuery } from '../../src/books/list-parameters.ts'
import { openStore } from '../../src/store/open.ts'
import { summariseBlock } from '../../src/store/postgres/block-summaries.ts'
import { SqliteStore, sqlitePath } from '../../src/store/sqlite/store.ts'
import type { Store } from '../../src/store/store.ts'
import type { Book, NewBook } from '../../src/books/book.ts'
import { storeEngines } from '../helpers.ts'
import { compareFolded, compareTitles, matches, type ModelQuery } from '../support/book-search-model.ts'
import { findPage } from '../support/reads.ts'
import { temporaryDirectory } from '../support/temporary.ts'
import { holdWriteLock } from '../support/write-lock.ts'

/** A store on a fresh database, and a look at its blocks waiting for a summary. */
async function openEngine(t: TestContext, engine: (typeof storeEngines)[number]) {
  const { dbUrl, drop } = await engine.freshDatabase()
  const store = await openStore({ dbUrl, dbPoolSize: 4, dbConnectTimeoutMs: 2000, dbQueryTimeoutMs: 4000 })
  let waiting: () => Promise<number[]>
  /** The summarised blocks that name `gram` in `field` (0 the title, 1 the author). */
  let holding: (field: number, gram: string) => Promise<number[]>
  let peek: { close(): unknown }
  if (dbUrl.startsWith('sqlite:')) {
    const db = new DatabaseSync(sqlitePath(dbUrl))
    waiting = async () =>
      db
        .prepare('SELECT block FROM blocks_to_summarise ORDER BY block')
        .all()
        .map((row) => row.block as number)
    holding = async (field, gram) =>
      db
        .prepare('SELECT block FROM block_grams WHERE field = ? AND gram = ? ORDER BY block')
        .all(field, gram)
        .map((row) => row.block as number)
    peek = db
  } else {
    const client = new pg.Client(dbUrl)
    await client.connect()
    waiting = async () => (await client.query('SELECT block FROM blocks_to_summarise ORDER BY block')).rows.map((row) => Number(row.block))
    holding = async (field, gram) =>
      (await client.query('SELECT block FROM block_grams WHERE field = $1 AND gram = $2 ORDER BY block', [field, gram])).rows.map((row) =>
        Number(row.block),
      )
    peek = { close: () => client.end() }
  }
  t.after(async () => {
    await peek.close()
    await store.close()
    await drop()
  })
  return { store, dbUrl, waiting, holding }
}

/** Polls until `look` answers `expected`: the summaries look again every second. */
async function eventually<T>(look: () => Promise<T>, expected: T, what: string): Promise<void> {
  const until = Date.now() + 20_000
  for (;;) {
    const seen = await look()
    try {
      assert.deepEqual(seen, expected, what)
      return
    } catch (err) {
      if (Date.now() > until) throw err
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** Polls until only the newest block, which new books are still filling, waits for its summary. */
async function summarised(waiting: () => Promise<number[]>, newest: number): Promise<void> {
  const until = Date.now() + 20_000
  for (;;) {
    const blocks = await waiting()
    if (blocks.every((block) => block >= newest)) return
    if (Date.now() > until) throw new Error(`Blocks still waiting: ${blocks.join(', ')}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/**
 * Four blocks of books (ids 1 to 3,500: blocks 0 to 3) of common words, with a few rare
 * characters and pairs of characters in the titles and authors of a few books. On SQLite the
 * books above 2,000 or so stay in the tail that the search indexes have not taken yet, which
 * finds read whole: the blocks matter below.
 */
function catalogue(): NewBook[] {
  const words = ['amber', 'crane', 'bramble', 'tide', 'moon']
  const rare = new Map<number, Partial<NewBook>>([
    [10, { title: 'Jinx Quixotic' }],
    [1500, { title: 'Aqxa', author: 'Wu Zhou' }],
    [2100, { author: 'Ölwz Bärn' }],
    [1800, { title: 'Smile 😀漢 now' }],
    [3300, { title: 'The Qxy Book' }],
  ])
  return Array.from({ length: 3500 }, (_, i) => ({
    title: `${words[i % 5]} ${words[(i * 7) % 5]} ${i}`,
    author: `${words[(i * 3) % 5]} ${words[(i + 1) % 5]}`,
    year: 1900 + (i % 100),
    ...rare.get(i + 1),
  }))
}

const QUERIES: (ModelQuery & { sort?: string })[] = [
  { title: 'qx' },
  { title: 'qx', sort: 'title' },
  { title: 'q', sort: '-year' },
  { title: 'x' },
  { author: 'wz' },
  { author: 'ö', sort: 'author' },
  { author: 'zh', title: 'aq' },
  { title: 'xq' },
  { title: 'mo', yearFrom: 1990 },
  { title: '😀漢' },
  { title: '漢' },
  { title: '😀', sort: 'title' },
]

/** Checks every query's page and count against the books, as section 9 of docs/api.md reads them. */
async function checkFinds(store: Store, books: Map<number, Book>, label: string): Promise<void> {
  for (const { sort, ...query } of QUERIES) {
    const raw: RawBookQuery = {
      ...Object.fromEntries(Object.entries(query).map(([name, value]) => [name === 'yearFrom' ? 'year_from' : name, String(value)])),
      ...(sort === undefined ? {} : { sort }),
    }
    const matching = [...books.values()].filter((book) => matches(book, query))
    if (sort === 'title') matching.sort((a, b) => compareTitles(a.title, b.title) || a.id - b.id)
    else if (sort === '-year') matching.sort((a, b) => b.year - a.year || a.id - b.id)
    else if (sort === 'author') matching.sort((a, b) => compareFolded(a.author, b.author) || a.id - b.id)
    else matching.sort((a, b) => a.id - b.id)
    const { found, total } = await findPage(store, { ...findQueryOf(parseBookQuery(raw), undefined, 20), count: true })
    const what = `${label}: ${JSON.stringify(raw)}`
    assert.deepEqual(
      found.map(({ book }) => book.id),
      matching.slice(0, 20).map((book) => book.id),
      what,
    )
    assert.equal(total, matching.length, what)
  }
}

for (const engine of storeEngines) {
  describe(`${engine.name}: finds of one or two characters read the blocks that hold them`, { skip: engine.skip }, () => {
    it('finds exactly the books that hold them, before the blocks are summarised, after, and after books change', async (t) => {
      const { store, waiting } = await openEngine(t, engine)
      const ids = await store.transaction((repositories) => repositories.books.createMany('tester', catalogue()))
      const books = new Map<number, Book>(catalogue().map((book, i) => [ids[i]!, { id: ids[i]!, ...book }]))
      assert.deepEqual([ids[0], ids.at(-1)], [1, 3500])
      assert.ok(QUERIES.some((query) => [...books.values()].filter((book) => matches(book, query)).length > 20))
      await checkFinds(store, books, 'waiting')

      await summarised(waiting, 3)
      await checkFinds(store, books, 'summarised')

      // Into summarised blocks: a pair no book held, by a change and by a book back from the trash.
      const changed = (await store.books.update('tester', 1100, { title: 'Axqy' })) as { outcome: 'updated'; book: Book }
      assert.equal(changed.outcome, 'updated')
      books.set(1100, { ...books.get(1100)!, title: 'Axqy' })
      assert.equal(await store.books.delete('tester', 1500), 'deleted')
      books.delete(1500)
      await checkFinds(store, books, 'changed')
      assert.ok((await store.books.restore('tester', 1500)) !== undefined)
      books.set(1500, { ...catalogue()[1499]!, id: 1500 })
      await checkFinds(store, books, 'restored')

      await summarised(waiting, 3)
      await checkFinds(store, books, 'summarised again')
    })

    it("through summaries that forget the text of books deleted or changed, and learn a restored book's again", async (t) => {
      const { store, waiting, holding } = await openEngine(t, engine)
      const ids = await store.transaction((repositories) => repositories.books.createMany('tester', catalogue()))
      const books = new Map<number, Book>(catalogue().map((book, i) => [ids[i]!, { id: ids[i]!, ...book }]))
      await summarised(waiting, 3)
      // Book 1500 alone holds "aq" in its title and "zh" in its author, book 10 alone "nx".
      assert.deepEqual(await holding(0, 'aq'), [1])
      assert.deepEqual(await holding(1, 'zh'), [1])
      assert.deepEqual(await holding(0, 'nx'), [0])
      const common = await holding(0, 'am')
      assert.deepEqual(common, [0, 1, 2])

      assert.equal(await store.books.delete('tester', 1500), 'deleted')
      books.delete(1500)
      assert.equal((await store.books.update('tester', 10, { title: 'Plain' }))?.outcome, 'updated')
      books.set(10, { ...books.get(10)!, title: 'Plain' })
      await eventually(() => holding(0, 'aq'), [], 'the title of a deleted book')
      await eventually(() => holding(0, 'nx'), [], 'the title a book had before it changed')
      assert.deepEqual(await holding(1, 'zh'), [])
      assert.deepEqual(await holding(0, 'am'), common)
      await checkFinds(store, books, 'forgotten')

      assert.ok((await store.books.restore('tester', 1500)) !== undefined)
      books.set(1500, { ...catalogue()[1499]!, id: 1500 })
      await eventually(() => holding(0, 'aq'), [1], 'the title of a restored book')
      await checkFinds(store, books, 'restored')
    })

    it('through summaries that forget the text of a book purged before they saw it deleted', async (t) => {
      const { store, waiting, holding } = await openEngine(t, engine)
      await store.transaction((repositories) => repositories.books.createMany('tester', catalogue()))
      await summarised(waiting, 3)
      assert.deepEqual(await holding(0, 'aq'), [1])

      // In one transaction, so that no look of the summaries comes between: the trash they read
      // the deletions from never holds the book.
      await store.transaction(async ({ books }) => {
        assert.equal(await books.delete('tester', 1500), 'deleted')
        assert.equal(await books.purge('tester', 1500), true)
      })
      await eventually(() => holding(0, 'aq'), [], 'the title of a purged book')
      assert.deepEqual(await holding(1, 'zh'), [])
    })

    if (engine.name === 'postgres') {
      it('goes on when the server ends the connection of a look for blocks under way', async (t) => {
        const { store, dbUrl } = await openEngine(t, engine)
        const locker = new pg.Client(dbUrl)
        await locker.connect()
        try {
          await locker.query('BEGIN')
          await locker.query('LOCK TABLE blocks_to_summarise IN ACCESS EXCLUSIVE MODE')
          // The store looks for waiting blocks every second: its next look waits for the lock.
          let pid: number | undefined
          for (const until = Date.now() + 10_000; pid === undefined;) {
            const { rows } = await locker.query<{ pid: number }>(
              "SELECT pid FROM pg_locks WHERE relation = 'blocks_to_summarise'::regclass AND NOT granted",
            )
            pid = rows[0]?.pid
            if (pid !== undefined) break
            assert.ok(Date.now() < until, 'no look for blocks waited for the lock')
            await new Promise((resolve) => setTimeout(resolve, 50))
          }
          await locker.query('SELECT pg_terminate_backend($1)', [pid])
          await locker.query('COMMIT')
        } finally {
          await locker.end()
        }
        const created = await store.books.create('tester', { title: 'Aqx', author: 'Wu', year: 2000 })
        const { found } = await findPage(store, findQueryOf(parseBookQuery({ title: 'qx' }), undefined, 20))
        assert.deepEqual(
          found.map(({ book }) => book.id),
          [created.id],
        )
      })

      it('never summarises a block while a transaction that changed it is open', async (t) => {
        const { store, dbUrl, waiting } = await openEngine(t, engine)
        await store.transaction((repositories) => repositories.books.createMany('tester', catalogue()))
        await summarised(waiting, 3)
        // Only this test's clients summarise from here on.
        await store.close()
        const [writer, other, summariser] = [new pg.Client(dbUrl), new pg.Client(dbUrl), new pg.Client(dbUrl)]
        await Promise.all([writer.connect(), other.connect(), summariser.connect()])
        // Ended before the schema is dropped, which would wait for the writer's transaction.
        try {
          await other.query("UPDATE books SET title = 'Plain', title_folded = 'plain' WHERE id = 1050")
          await writer.query('BEGIN')
          await writer.query("UPDATE books SET title = 'Zxqj', title_folded = 'zxqj' WHERE id = 1100")
          assert.deepEqual(await waiting(), [1, 3])
          // A summary of block 1 now would miss the open change, and take the block off the list.
          assert.equal(await summariseBlock(summariser), false)
          await writer.query('COMMIT')
          assert.equal(await summariseBlock(summariser), true)
          assert.deepEqual(await waiting(), [3])
        } finally {
          await Promise.all([writer.end(), other.end(), summariser.end()])
        }
        const reopened = await openStore({ dbUrl, dbPoolSize: 4, dbConnectTimeoutMs: 2000, dbQueryTimeoutMs: 4000 })
        t.after(() => reopened.close())
        const { found } = await findPage(reopened, findQueryOf(parseBookQuery({ title: 'xq' }), undefined, 20))
        assert.deepEqual(
          found.map(({ book }) => book.id),
          [1100],
        )
      })
    }
  })
}

describe('sqlite: the summaries of blocks', () => {
  it("are made on the store's upkeep thread, which a lock on the file holds instead of this one", async (t) => {
    const path = join(temporaryDirectory('books-summaries-'), 'books.db')
    // A tail this long never starts a catch-up, which would hold the store's writes itself.
    const store = new SqliteStore({ path, searchIndexBatch: 100_000 })
    const peek = new DatabaseSync(path, { timeout: 10_000 })
    t.after(async () => {
      peek.close()
      await store.close()
    })
    const waiting = () => peek.prepare('SELECT count(*) AS blocks FROM blocks_to_summarise WHERE block < 3').get()!.blocks as number
    await store.transaction(({ books }) => books.createMany('tester', catalogue()))
    // Another connection's write lock, held past the summaries' next look (every second). Were
    // their steps on this thread, the first would wait here for the lock, and the timer that
    // releases it would fire only after the store's busy timeout of 4 s.
    const held = holdWriteLock(peek, 1500)
    assert.ok(waiting() > 1, 'blocks wait for their summaries while the lock is held')
    const late = await held
    assert.ok(late < 1000, `the timer fired ${late} ms late`)
    for (let tries = 0; waiting() > 0 && tries < 400; tries++) await new Promise((resolve) => setTimeout(resolve, 50))
    assert.equal(waiting(), 0)
  })
})
