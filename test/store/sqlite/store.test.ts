import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { DatabaseSync } from 'node:sqlite'
import { describe, test } from 'node:test'
import { loadMigrations } from '../../../src/store/migrations.ts'
import { SqliteStore } from '../../../src/store/sqlite/store.ts'
import { StoreUnavailableError } from '../../../src/store/store.ts'
import type { FindQuery } from '../../../src/books/find.ts'
import { temporaryDirectory } from '../../support/temporary.ts'
import { wholeIds } from '../../support/reads.ts'

const dune = { title: 'Dune', author: 'Frank Herbert', year: 1965 }

function tempFile() {
  return join(temporaryDirectory('books-sqlite-'), 'nested', 'books.db')
}

describe('SQLite store', () => {
  test('creates the folder and applies every migration once, recording it', async () => {
    const path = tempFile()
    await new SqliteStore({ path }).close()
    await new SqliteStore({ path }).close()
    const db = new DatabaseSync(path)
    const applied = db
      .prepare('SELECT version FROM schema_migrations ORDER BY version')
      .all()
      .map((row) => row.version)
    db.close()
    assert.deepEqual(
      applied,
      loadMigrations('sqlite').map((migration) => migration.version),
    )
  })

  test('a whole read that its first page holds exactly ends with that page; a longer one reads on', async () => {
    const store = new SqliteStore({ path: tempFile(), readers: 1 })
    try {
      const ids = await store.books.createMany(
        'tester',
        Array.from({ length: 10 }, () => dune),
      )
      const byId = { relevance: false as const, keys: [{ field: 'id' as const, descending: false }] }
      for (const limit of [10, 9, 3]) {
        const pages = await store.reader.pages({ filter: {}, order: byId, limit }, { whole: true })
        assert.equal(pages.complete, limit === 10, `pages of ${limit}`)
        const read: number[] = []
        for await (const page of pages) read.push(...page.map(({ book }) => book.id))
        assert.deepEqual(read, ids)
      }
    } finally {
      await store.close()
    }
  })

  test('a whole list by id longer than a first page of 255 comes whole, after a shorter one and before it', async () => {
    const store = new SqliteStore({ path: tempFile(), readers: 1 })
    try {
      const byId = { relevance: false as const, keys: [{ field: 'id' as const, descending: false }] }
      const wholeList = () => wholeIds(store, { filter: {}, order: byId, limit: 1000 })
      const short = await store.books.createMany('tester', [dune])
      assert.deepEqual(await wholeList(), short)
      const long = [
        ...short,
        ...(await store.books.createMany(
          'tester',
          Array.from({ length: 300 }, () => dune),
        )),
      ]
      assert.deepEqual(await wholeList(), long)
      assert.deepEqual(await wholeList(), long)
    } finally {
      await store.close()
    }
  })

  test(
    'readers read the file through a memory map, which the process then shows among its mappings',
    { skip: process.platform !== 'linux' && 'reads /proc' },
    async () => {
      const path = tempFile()
      const mapped = () =>
        readFileSync('/proc/self/maps', 'utf8')
          .split('\n')
          .some((line) => line.endsWith(` ${path}`))
      // Closed, the store leaves its books in the file itself, where a reader then finds them, not in the log.
      const writer = new SqliteStore({ path, readers: 1 })
      await writer.books.createMany('tester', [dune])
      await writer.close()
      assert.equal(mapped(), false)
      const store = new SqliteStore({ path, readers: 1 })
      try {
        // Sorted by title, a whole read is a reader's: one by id may run where reads by id do.
        const byTitle = { relevance: false as const, keys: [{ field: 'title' as const, descending: false }] }
        assert.equal((await wholeIds(store, { filter: {}, order: byTitle, limit: 1000 })).length, 1)
        assert.equal(mapped(), true)
      } finally {
        await store.close()
      }
    },
  )

  test('reads books while a transaction holds the writes, without what it has not committed', { timeout: 10_000 }, async () => {
    const store = new SqliteStore({ path: tempFile(), readers: 1 })
    try {
      const [committed] = await store.books.createMany('tester', [dune])
      const byId = { relevance: false as const, keys: [{ field: 'id' as const, descending: true }] }
      const byTitle = { relevance: false as const, keys: [{ field: 'title' as const, descending: false }] }
      const ids = async (query: FindQuery, whole: boolean) => {
        const read: number[] = []
        for await (const page of await store.reader.pages(query, { whole })) read.push(...page.map(({ book }) => book.id))
        return read
      }
      await store.transaction(async ({ books }) => {
        await books.create('tester', { ...dune, title: 'Dune Messiah' })
        // Each read is answered while the transaction is open, from what was committed before it.
        for (const whole of [false, true]) {
          assert.deepEqual(await ids({ filter: {}, order: byId, limit: 10 }, whole), [committed])
          assert.deepEqual(await ids({ filter: {}, order: byTitle, limit: 10 }, whole), [committed])
        }
      })
    } finally {
      await store.close()
    }
  })

  test('keeps books across reopening, and never reuses the id of a deleted newest book', async () => {
    const path = tempFile()
    let store = new SqliteStore({ path })
    const kept = await store.books.create('tester', dune)
    const newest = await store.books.create('tester', dune)
    assert.equal(await store.books.delete('tester', newest.id), 'deleted')
    await store.close()
    store = new SqliteStore({ path })
    // Rows come back without a prototype; the book made by create has one.
    const stored = await store.books.get(kept.id)
    assert.ok(stored !== undefined)
    assert.deepEqual({ ...stored }, kept)
    assert.ok((await store.books.create('tester', dune)).id > newest.id)
    await store.close()
  })

  test('the schema refuses what validation refuses, as a last line of defence', async () => {
    const store = new SqliteStore({ path: ':memory:' })
    for (const book of [
      { ...dune, year: 10000 },
      { ...dune, title: '' },
      { ...dune, author: 'x'.repeat(501) },
    ]) {
      await assert.rejects(store.books.create('tester', book))
    }
    await store.close()
  })

  test('a database locked by another process is reported as unavailable, not as a failure', async () => {
    const path = tempFile()
    const store = new SqliteStore({ path, busyTimeoutMs: 50 })
    const other = new DatabaseSync(path)
    other.exec('BEGIN EXCLUSIVE')
    try {
      await assert.rejects(store.books.create('tester', dune), StoreUnavailableError)
    } finally {
      other.exec('ROLLBACK')
      other.close()
    }
    assert.equal((await store.books.create('tester', dune)).title, 'Dune')
    await store.close()
  })

  test('a duplicate look-up of a thousand rows lets other work run between its parts', async (t) => {
    const store = new SqliteStore({ path: ':memory:' })
    t.after(() => store.close())
    const [stored] = await store.books.createMany('admin', [{ title: 'Dune', author: 'Frank Herbert', year: 1965 }])
    const wanted = Array.from({ length: 1000 }, (_, n) => ({ title: `Book ${n}`, author: 'Nobody', year: 2000 }))
    wanted[999] = { title: 'DUNE', author: 'frank herbert', year: 1965 }
    let turns = 0
    let done = false
    const turn = () => {
      turns++
      if (!done) setImmediate(turn)
    }
    setImmediate(turn)
    const found = await store.books.sameAs(wanted)
    done = true
    assert.equal(found[999], stored)
    assert.equal(found.filter((id) => id !== undefined).length, 1)
    // Each turn is a moment in which the service answers other requests.
    assert.ok(turns >= 20, `only ${turns} turns passed during the look-up`)
  })

  test('pages a long history from a seq of another book, passing over its newer changes a run at a time', async () => {
    const store = new SqliteStore({ path: tempFile(), readers: 1 })
    try {
      const book = await store.books.create('tester', dune)
      const other = await store.books.create('tester', { title: 'Solaris', author: 'Stanisław Lem', year: 1961 })
      const update = (year: number) => store.books.update('tester', book.id, { year })
      for (let year = 1; year <= 1000; year++) await update(year)
      await store.books.update('tester', other.id, { year: 1962 })
      const between = (await store.changes.ofBook(other.id, undefined, 1))![0]!.seq
      // More changes after it than a history read passes over in one turn.
      for (let year = 1001; year <= 6000; year++) await update(year)
      const page = (await store.changes.ofBook(book.id, between, 3))!
      assert.deepEqual(
        page.map(({ book }) => book?.year),
        [1000, 999, 998],
      )
      assert.deepEqual(await store.changes.ofBook(book.id, 1, 3), [])
    } finally {
      await store.close()
    }
  })

  test('keeps no process alive once its reads and writes are done, even unclosed', async () => {
    // A program that opens a store on a file, imports enough books for the upkeep thread to index
    // them, writes two more (the second waits for the thread's step), finds a page and reads a
    // whole list, and never closes it.
    const dir = temporaryDirectory('books-sqlite-')
    const program = join(dir, 'unclosed.mjs')
    writeFileSync(
      program,
      `import { SqliteStore } from ${JSON.stringify(fileURLToPath(new URL('../../../src/store/sqlite/store.ts', import.meta.url)))}
      const store = new SqliteStore({ path: ${JSON.stringify(join(dir, 'books.db'))} })
      await store.books.createMany('tester', Array.from({ length: 5000 }, (_, n) => ({ title: 'Book ' + n, author: 'Anonymous', year: 2000 })))
      await store.books.create('tester', ${JSON.stringify(dune)})
      await store.books.create('tester', { title: 'Solaris', author: 'Stanisław Lem', year: 1961 })
      let books = 0
      for await (const page of await store.reader.pages({ filter: { words: ['dune'] }, order: { relevance: true }, limit: 10 })) books += page.length
      const byYear = { filter: { yearFrom: 1900 }, order: { relevance: false, keys: [{ field: 'year', descending: false }] }, limit: 10 }
      for await (const page of await store.reader.pages(byYear, { whole: true })) books += page.length
      console.log(books)`,
    )
    const child = spawn(process.execPath, [program], { stdio: ['ignore', 'pipe', 'inherit'] })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
    const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null]
    clearTimeout(timer)
    assert.equal(output.trim(), '5003')
    assert.deepEqual({ code, signal }, { code: 0, signal: null }, 'the process did not end on its own within 10 s')
  })
})
