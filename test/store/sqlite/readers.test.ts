import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { closeSync, openSync } from 'node:fs'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { describe, test, type TestContext } from 'node:test'
import { setTimeout } from 'node:timers/promises'
import type { NewBook } from '../../../src/books/book.ts'
import type { FindQuery } from '../../../src/books/find.ts'
import { ReaderCore } from '../../../src/store/sqlite/reader-core.ts'
import { workerReaders } from '../../../src/store/sqlite/readers.ts'
import { SqliteStore, type SqliteOptions } from '../../../src/store/sqlite/store.ts'
import { StoreUnavailableError, type Store } from '../../../src/store/store.ts'
import { openSqliteFile } from '../../helpers.ts'
import { findPage } from '../../support/reads.ts'
import { removeDirectory, temporaryDirectory } from '../../support/temporary.ts'

const BOOKS = 20_000

/** A store on a file of BOOKS books, whose finds run on one reader's thread. */
async function storeOf(t: TestContext, options: Omit<SqliteOptions, 'path'>): Promise<Store> {
  const store = await openSqliteFile({ readers: 1, ...options })
  t.after(() => store.close())
  const books: NewBook[] = Array.from({ length: BOOKS }, (_, i) => ({ title: `Title ${i}`, author: `Author ${i % 100}`, year: 2000 }))
  await store.books.createMany('tester', books)
  return store
}

/** How a read fails once its client ended it, whether its step was running or waiting. */
const endedByItsClient = (err: unknown) =>
  err instanceof StoreUnavailableError && /ended before it was answered/.test((err.cause as Error).message)

/** A contained text no title holds, sorted by title and counted: every title is read. */
const noTitle: FindQuery = {
  filter: { titleContains: 'qx' },
  order: { relevance: false, keys: [{ field: 'title', descending: false }] },
  limit: 20,
  count: true,
}

test("a whole read on a reader's thread gives every book once, in order, a page at a time", async (t) => {
  const store = await storeOf(t, {})
  const pages = await store.reader.pages(
    { filter: { yearFrom: 2000 }, order: { relevance: false, keys: [{ field: 'year', descending: false }] }, limit: 200 },
    { whole: true },
  )
  const ids: number[] = []
  const sizes: number[] = []
  for await (const page of pages) {
    sizes.push(page.length)
    ids.push(...page.map(({ book }) => book.id))
  }
  assert.deepEqual(
    ids,
    Array.from({ length: BOOKS }, (_, i) => i + 1),
  )
  assert.ok(sizes.length >= BOOKS / 200 && sizes.every((size) => size <= 200), `pages of ${sizes.join(', ')} books`)
})

test('a find past the read deadline is stopped and fails as unavailable', async (t) => {
  const store = await storeOf(t, { readDeadlineMs: 1 })
  await assert.rejects(
    store.reader.pages(noTitle),
    (err) => err instanceof StoreUnavailableError && /longer than 1 ms/.test((err.cause as Error).message),
  )
})

test('a find whose client goes stops what it reads, and what waits to be read is never read', async (t) => {
  const store = await storeOf(t, {})
  const alone = { ...noTitle, count: false }
  // Its client gone while the one reader thread reads it: stopped.
  const running = new AbortController()
  const reading = store.reader.pages(alone, { client: 'a', signal: running.signal })
  running.abort()
  await assert.rejects(reading, endedByItsClient)
  // Its client gone while it waits behind another client's find: never sent to the thread.
  const first = store.reader.pages(alone, { client: 'a' })
  const waiting = new AbortController()
  const waited = store.reader.pages(alone, { client: 'b', signal: waiting.signal })
  waiting.abort()
  await assert.rejects(waited, StoreUnavailableError)
  for await (const page of await first) assert.deepEqual(page, [])
  // A client already gone starts nothing.
  await assert.rejects(store.reader.pages(alone, { signal: waiting.signal }), StoreUnavailableError)
})

test('a step whose reader thread never answers is given up half a second after its deadline', { timeout: 10_000 }, async (t) => {
  // Opening a named pipe to read waits for a writer: the reader's thread is held at its first
  // connection, where no deadline of its own can stop it.
  const dir = temporaryDirectory()
  const pipe = join(dir, 'held.db')
  execFileSync('mkfifo', [pipe])
  const memory = new DatabaseSync(':memory:')
  const core = new ReaderCore({ pages: memory, open: () => memory, release: () => {}, snapshots: false })
  const reader = workerReaders(
    { path: pipe, busyTimeoutMs: 100 },
    1,
    { deadlineMs: 100, rankingDeadlineMs: 100 },
    { core, outside: (step) => Promise.resolve(step()) },
  )
  t.after(async () => {
    // A writer lets the thread's open return, so that the thread can end.
    closeSync(openSync(pipe, 'w'))
    await reader.end()
    memory.close()
    removeDirectory(dir)
  })
  const started = performance.now()
  await assert.rejects(
    reader.pages(noTitle),
    (err) => err instanceof StoreUnavailableError && /longer than 100 ms/.test((err.cause as Error).message),
  )
  const waited = performance.now() - started
  assert.ok(waited >= 500 && waited < 5000, `given up after ${Math.round(waited)} ms`)
})

/** A store on a file of `books`, stored as an import stores them, with two reader threads. */
async function indexedStore(t: TestContext, books: NewBook[], options: Omit<SqliteOptions, 'path'> = {}) {
  const dir = temporaryDirectory()
  const path = join(dir, 'books.db')
  const store = new SqliteStore({ path, readers: 2, readDeadlineMs: 60_000, searchIndexBatch: 1_000, ...options })
  const peek = new DatabaseSync(path, { readOnly: true, timeout: 10_000 })
  t.after(async () => {
    peek.close()
    await store.close()
    removeDirectory(dir)
  })
  // As an import stores them: the search indexes take them in once the transaction commits.
  await store.transaction((repositories) => repositories.books.createMany('tester', books))
  const tail = () => peek.prepare('SELECT count(*) AS tail FROM books WHERE indexed IS NULL').get()!.tail as number
  // The search indexes leave the books of less than a batch in the tail, each checked directly.
  for (let n = 0; tail() >= 1_000 && n < 1_000; n++) await setTimeout(10)
  assert.ok(tail() < 1_000, 'the search indexes hold all but the last batch')
  // A reader of this thread, as the store's threads read, whose pages are never split.
  const core = new ReaderCore({ pages: peek, open: () => peek, release: () => {}, snapshots: false })
  return { store, core }
}

describe('a page by relevance that ranks many matches', () => {
  /**
   * Books that `the of` matches in different ways (whole words or beginnings, in the title or by
   * author), three in four of them, with the best of all, the title "The Of", only among the
   * newest ids.
   */
  const book = (i: number): NewBook => {
    const name = 'abcdefghijklm'.slice(0, (i % 13) + 1)
    if (i >= 4_500 && i < 4_510) return { title: 'The Of', author: name, year: 2000 }
    const ways: [string, string][] = [
      [`The Tale of ${name}`, 'Anon'],
      [`Of Mice ${name}`, `Theodore ${name}`],
      [`Theory of ${name}`, 'Anon'],
      [`Untitled ${name}`, 'Other Author'],
    ]
    const [title, author] = ways[i % 4]!
    return { title, author, year: 2000 }
  }
  const byRelevance = (words: string[]): FindQuery => ({ filter: { words }, order: { relevance: true }, limit: 20 })

  test('is read in parts by ranges of ids, one part for each thread that may read it', async (t) => {
    const { core } = await indexedStore(
      t,
      Array.from({ length: 6_000 }, (_, i) => book(i)),
    )
    const start = (query: FindQuery, parts?: number) => core.start(1, { query, whole: false, json: false, parts }, 60_000)
    assert.deepEqual(start(byRelevance(['the', 'of']), 2).parts, [
      { afterId: undefined, upToId: 3_000 },
      { afterId: 3_000, upToId: undefined },
    ])
    assert.deepEqual(start(byRelevance(['the', 'of']), 3).parts?.length, 3)
    // Read whole: on one thread, or for too few matches to be worth it.
    assert.equal(start(byRelevance(['the', 'of'])).parts, undefined)
    assert.equal(start(byRelevance(['the', 'of', 'a'])).parts, undefined)
    // The first page of a single common word is found by a walk that reads a page or so.
    assert.equal(start(byRelevance(['the']), 2).parts, undefined)
  })

  test('gives, page after page, the books that a read of the whole would', async (t) => {
    const { store, core } = await indexedStore(
      t,
      Array.from({ length: 6_000 }, (_, i) => book(i)),
    )
    // Newer books, the best of all among them, which the search indexes may not hold yet.
    await store.books.createMany('tester', [book(4_500), book(8), book(9)])
    let query = byRelevance(['the', 'of'])
    for (let page = 1; page <= 3; page++) {
      const { found } = await findPage(store, query)
      const whole = core.start(page, { query, whole: false, json: false }, 60_000).page
      assert.ok('rows' in whole)
      assert.deepEqual(
        found.map(({ book, position }) => [book.id, book.title, book.author, book.year, ...position]),
        whole.rows,
        `page ${page}`,
      )
      query = { ...query, after: found.at(-1)!.position }
    }
  })
})

describe('a whole read by relevance', () => {
  // Half the titles begin with "the": a walk through the top tier finds the first page, and the
  // read's second step ranks every other match.
  const books = Array.from({ length: BOOKS }, (_, i) => ({
    title: i % 2 === 0 ? `The Tale ${i}` : `Tales of the ${i}`,
    author: 'Anon',
    year: 2000,
  }))
  const theWhole: FindQuery = { filter: { words: ['the'] }, order: { relevance: true }, limit: 100 }

  test('ranks every match after its first page within a deadline of its own', async (t) => {
    // Ranking the others, which reads every match, outlasts a millisecond; the first page has a
    // page's deadline, here a minute.
    const { store } = await indexedStore(t, books, { rankingDeadlineMs: 1 })
    const pages = (await store.reader.pages(theWhole, { whole: true }))[Symbol.asyncIterator]()
    assert.equal((await pages.next()).value?.length, 100)
    await assert.rejects(
      pages.next(),
      (err) => err instanceof StoreUnavailableError && /longer than 1 ms/.test((err.cause as Error).message),
    )
  })

  test('ended by its client while it ranks, stops ranking rather than give the next page', async (t) => {
    const { store } = await indexedStore(t, books, { rankingDeadlineMs: 60_000 })
    const pages = (await store.reader.pages(theWhole, { whole: true }))[Symbol.asyncIterator]()
    assert.equal((await pages.next()).value?.length, 100)
    const ranking = pages.next()
    ranking.catch(() => {})
    await pages.return?.()
    await assert.rejects(ranking, endedByItsClient)
  })
})
