import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { closeSync, openSync } from 'node:fs'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { test, type TestContext } from 'node:test'
import type { NewBook } from '../../../src/books/book.ts'
import type { FindQuery } from '../../../src/books/find.ts'
import { ReaderCore } from '../../../src/store/sqlite/reader-core.ts'
import { workerReaders } from '../../../src/store/sqlite/readers.ts'
import type { SqliteOptions } from '../../../src/store/sqlite/store.ts'
import { StoreUnavailableError, type Store } from '../../../src/store/store.ts'
import { openSqliteFile } from '../../helpers.ts'
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

test('a step whose reader thread never answers is given up half a second after its deadline', { timeout: 10_000 }, async (t) => {
  // Opening a named pipe to read waits for a writer: the reader's thread is held at its first
  // connection, where no deadline of its own can stop it.
  const dir = temporaryDirectory()
  const pipe = join(dir, 'held.db')
  execFileSync('mkfifo', [pipe])
  const memory = new DatabaseSync(':memory:')
  const core = new ReaderCore({ pages: memory, open: () => memory, release: () => {}, snapshots: false })
  const reader = workerReaders({ path: pipe, busyTimeoutMs: 100 }, 1, 100, { core, outside: (step) => Promise.resolve(step()) })
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
