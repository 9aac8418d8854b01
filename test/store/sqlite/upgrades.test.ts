import assert from 'node:assert/strict'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { describe, it, type TestContext } from 'node:test'
import pg from 'pg'
import { fold, indexWords, searchKeys } from '../../../src/books/folding.ts'
import { findQueryOf, parseBookQuery, type RawBookQuery } from '../../../src/books/list-parameters.ts'
import { loadMigrations, type Migration } from '../../../src/store/migrations.ts'
import { PostgresStore } from '../../../src/store/postgres/store.ts'
import { SqliteStore } from '../../../src/store/sqlite/store.ts'
import type { Store } from '../../../src/store/store.ts'
import type { NewBook } from '../../../src/books/book.ts'
import { storeEngines } from '../../helpers.ts'
import { createTestSchema } from '../../support/postgres.ts'
import { expectedIds } from '../../support/book-search-model.ts'
import { findPage } from '../../support/reads.ts'
import { droppedWhenSuiteEnds, temporaryDirectory } from '../../support/temporary.ts'

/** The last migration of the version before finding books existed. */
const BEFORE_FINDING = 2

/** Books as that version wrote them: three members, nothing else. */
const OLD_BOOKS = Array.from({ length: 2500 }, (_, n) => ({ title: `Old Title ${n}`, author: `Author ${n % 10}`, year: 1900 + (n % 100) }))
OLD_BOOKS[1234] = { title: 'Cien años de soledad', author: 'Gabriel García Márquez', year: 1967 }

async function find(store: Store, raw: RawBookQuery) {
  const query = parseBookQuery(raw)
  const { found, total } = await findPage(store, { ...findQueryOf(query, undefined, 10), count: true })
  return { titles: found.map(({ book }) => book.title), total }
}

async function checkSearchable(store: Store) {
  assert.deepEqual(await find(store, { q: 'garcia marq' }), { titles: ['Cien años de soledad'], total: 1 })
  assert.deepEqual((await find(store, { title: 'ANOS' })).titles, ['Cien años de soledad'])
  assert.deepEqual(await find(store, { q: 'old titl 2499' }), { titles: ['Old Title 2499'], total: 1 })
  assert.equal((await find(store, { author: 'author 7' })).total, 250)
  assert.deepEqual((await find(store, { sort: '-title', year: '1999' })).titles.slice(0, 2), ['Old Title 999', 'Old Title 99'])
  // Books written after the upgrade are found with the old ones.
  await store.books.create('tester', { title: 'Soledad Nueva', author: 'Someone', year: 2024 })
  assert.deepEqual((await find(store, { q: 'soled' })).titles, ['Soledad Nueva', 'Cien años de soledad'])
}

const dropAtEnd = droppedWhenSuiteEnds()

/** A PostgreSQL store made at the `applied` migrations and filled by `fill`, then opened, which migrates the rest. */
async function postgresAt(t: TestContext, applied: (migration: Migration) => boolean, fill: (client: pg.Client) => Promise<void>) {
  const schema = await createTestSchema()
  dropAtEnd(schema)
  const client = new pg.Client({ connectionString: schema.url })
  await client.connect()
  try {
    await client.query('CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL)')
    for (const migration of loadMigrations('postgres').filter(applied)) {
      await client.query(migration.sql)
      await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name])
    }
    await fill(client)
  } finally {
    await client.end()
  }
  const store = await PostgresStore.open({ url: schema.url, poolSize: 2, connectTimeoutMs: 2000, queryTimeoutMs: 4000 })
  t.after(() => store.close())
  return { store, url: schema.url }
}

/**
 * An SQLite file as the version with migrations up to `version` left it, open to write books into;
 * or with the migrations that `applied` picks.
 */
async function sqliteAt(
  version: number,
  applied = (migration: Migration) => migration.version <= version,
): Promise<{ path: string; db: DatabaseSync }> {
  // Removed when the file's tests are done, after the stores opened on it are closed by their hooks.
  const dir = temporaryDirectory('books-upgrade-')
  const path = join(dir, 'books.db')
  const db = new DatabaseSync(path)
  // What migration 003 calls to fill the search columns of the books already stored.
  db.function('book_fold', (value) => fold(String(value)))
  db.function('book_words', (value) => indexWords(fold(String(value))).join(' '))
  db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL)')
  for (const migration of loadMigrations('sqlite').filter(applied)) {
    db.exec(migration.sql)
    db.prepare('INSERT INTO schema_migrations (version, name) VALUES (?, ?)').run(migration.version, migration.name)
  }
  return { path, db }
}

/** Stores `books` with their search columns, as the versions since finding books write them. */
function insertBooks(db: DatabaseSync, books: NewBook[]): void {
  const insert = db.prepare(`INSERT INTO books (title, author, year, title_folded, author_folded, title_words, author_words)
    VALUES (?, ?, ?, ?, ?, ?, ?)`)
  for (const book of books) {
    const keys = searchKeys(book)
    insert.run(book.title, book.author, book.year, keys.titleFolded, keys.authorFolded, keys.titleWords, keys.authorWords)
  }
}

/** The same on PostgreSQL. */
async function insertBooksInto(client: pg.Client, books: NewBook[]): Promise<void> {
  for (const book of books) {
    const keys = searchKeys(book)
    await client.query(
      `INSERT INTO books (title, author, year, title_folded, author_folded, title_words, author_words)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [book.title, book.author, book.year, keys.titleFolded, keys.authorFolded, keys.titleWords, keys.authorWords],
    )
  }
}

describe('a database made before finding books upgrades in place', () => {
  it('on sqlite, every existing book becomes searchable', async (t) => {
    const { path, db } = await sqliteAt(BEFORE_FINDING)
    const insert = db.prepare('INSERT INTO books (title, author, year) VALUES (?, ?, ?)')
    db.exec('BEGIN')
    for (const book of OLD_BOOKS) insert.run(book.title, book.author, book.year)
    db.exec('COMMIT')
    db.close()

    const store = new SqliteStore({ path })
    t.after(() => store.close())
    await checkSearchable(store)
  })

  it(
    'on postgres, every existing book becomes searchable',
    { skip: storeEngines.find((engine) => engine.name === 'postgres')!.skip },
    async (t) => {
      const { store } = await postgresAt(
        t,
        ({ version }) => version <= BEFORE_FINDING,
        async (client) => {
          await client.query('INSERT INTO books (title, author, year) SELECT * FROM unnest($1::text[], $2::text[], $3::int[])', [
            OLD_BOOKS.map((book) => book.title),
            OLD_BOOKS.map((book) => book.author),
            OLD_BOOKS.map((book) => book.year),
          ])
        },
      )
      await checkSearchable(store)
    },
  )
})

describe('a database whose books were indexed one by one upgrades in place', () => {
  it('on sqlite, its books stay in the indexes and new ones join them in bulk', async (t) => {
    const { path, db } = await sqliteAt(11)
    const insert = db.prepare(`INSERT INTO books (title, author, year, title_folded, author_folded, title_words, author_words)
      VALUES (?, ?, ?, ?, ?, ?, ?)`)
    db.exec('BEGIN')
    const vanished = { title: 'Vanished', author: 'Nobody', year: 2000 }
    for (const book of [...OLD_BOOKS, vanished]) {
      const keys = searchKeys(book)
      insert.run(book.title, book.author, book.year, keys.titleFolded, keys.authorFolded, keys.titleWords, keys.authorWords)
    }
    db.exec('COMMIT')
    // The newest book gone, so that the highest id ever given is not a book's.
    db.prepare('DELETE FROM books WHERE id = ?').run(OLD_BOOKS.length + 1)
    db.close()

    const store = new SqliteStore({ path })
    t.after(() => store.close())
    const peek = new DatabaseSync(path)
    t.after(() => peek.close())
    assert.equal(peek.prepare('SELECT count(*) AS indexed FROM books WHERE indexed = 1').get()!.indexed, OLD_BOOKS.length)
    assert.equal(peek.prepare('SELECT count(*) AS tail FROM books WHERE indexed IS NULL').get()!.tail, 0)
    peek.exec("INSERT INTO books_words (books_words, rank) VALUES ('integrity-check', 1)")
    peek.exec("INSERT INTO books_text (books_text, rank) VALUES ('integrity-check', 1)")
    assert.deepEqual(await find(store, { q: 'vanish' }), { titles: [], total: 0 })
    await checkSearchable(store)
  })
})

/**
 * The migration that files leading articles after the rest. A store made before it holds every
 * migration around it, some numbered after it: it comes in below the newest.
 */
const FILING = 19
const beforeFiling = (migration: Migration) => migration.version !== FILING

const UNFILED = [
  'The Hobbit',
  'Ivanhoe',
  'Harry Potter and the Goblet of Fire',
  'An Instance of the Fingerpost',
  'A Tale of Two Cities',
  'Theory of Everything',
]
const FILED = [
  'Harry Potter and the Goblet of Fire',
  'The Hobbit',
  'An Instance of the Fingerpost',
  'Ivanhoe',
  'A Tale of Two Cities',
  'Theory of Everything',
]

async function checkFiled(store: Store) {
  assert.deepEqual((await find(store, { sort: 'title', author: 'filer' })).titles, FILED)
  assert.deepEqual((await find(store, { sort: '-title', author: 'filer' })).titles, [...FILED].reverse())
  // A title changed after the upgrade is filed by its new words.
  const [hobbit] = (await findPage(store, { ...findQueryOf(parseBookQuery({ q: 'hobbit' }), undefined, 1), count: false })).found
  await store.books.update('tester', hobbit!.book.id, { title: 'A Zoo' })
  assert.deepEqual((await find(store, { sort: '-title', author: 'filer' })).titles.slice(0, 2), ['A Zoo', 'Theory of Everything'])
}

/** Moves the whole tail into the search indexes, as the service did on the files these migrations left. */
function indexTail(db: DatabaseSync) {
  db.exec(`INSERT INTO books_words (rowid, title_words, author_words)
      SELECT id, title_words, author_words FROM books WHERE indexed IS NULL ORDER BY id;
    INSERT INTO books_text (rowid, title_folded, author_folded)
      SELECT id, title_folded, author_folded FROM books WHERE indexed IS NULL ORDER BY id;
    UPDATE books SET indexed = 1 WHERE indexed IS NULL`)
}

describe('a database made before titles were filed upgrades in place', () => {
  it('on sqlite, the books it holds, indexed or not yet, sort by their filing titles', async (t) => {
    const { path, db } = await sqliteAt(Infinity, beforeFiling)
    const insert = db.prepare(`INSERT INTO books (title, author, year, title_folded, author_folded, title_words, author_words)
      VALUES (?, ?, ?, ?, ?, ?, ?)`)
    db.exec('BEGIN')
    for (const [n, title] of UNFILED.entries()) {
      const book = { title, author: 'Filer', year: 1900 + n }
      const keys = searchKeys(book)
      insert.run(book.title, book.author, book.year, keys.titleFolded, keys.authorFolded, keys.titleWords, keys.authorWords)
      // The first half in the indexes, the rest in the tail, as a store that stopped before indexing them leaves it.
      if (n === UNFILED.length / 2 - 1) indexTail(db)
    }
    db.exec('COMMIT')
    db.close()

    const store = new SqliteStore({ path })
    t.after(() => store.close())
    await checkFiled(store)
  })

  it(
    'on postgres, the books it holds sort by their filing titles',
    { skip: storeEngines.find((engine) => engine.name === 'postgres')!.skip },
    async (t) => {
      // Everything before filing, as the version that came before it left it: a later migration
      // applied ahead of its time could leave what the books written here are given (their
      // lexemes, since migration 026) to the service.
      const { store } = await postgresAt(
        t,
        ({ version }) => version < FILING,
        async (client) => {
          for (const [n, title] of UNFILED.entries()) {
            const keys = searchKeys({ title, author: 'Filer' })
            await client.query(
              `INSERT INTO books (title, author, year, title_folded, author_folded, title_words, author_words)
             VALUES ($1, 'Filer', $2, $3, $4, $5, $6)`,
              [title, 1900 + n, keys.titleFolded, keys.authorFolded, keys.titleWords, keys.authorWords],
            )
          }
        },
      )
      await checkFiled(store)
    },
  )
})

/** The last migration before title lengths were indexed for finding by relevance. */
const BEFORE_TITLE_LENGTHS = 21

/** Titles that begin with "the", of many lengths, and others that hold it elsewhere. */
const RANKED = Array.from({ length: 60 }, (_, n) => ({
  title: n % 3 === 0 ? `Theory of the Thing ${n}` : `The ${'Long '.repeat(n % 7)}Thing ${n}`,
  author: n % 4 === 0 ? 'The Author' : 'Someone Else',
  year: 1950 + n,
}))

/** Every page of `q=the`, three books a page, follows the order of the whole. */
async function checkRanked(store: Store) {
  const ids: number[] = []
  let after: (string | number)[] | undefined
  for (let page = 0; page <= RANKED.length / 3; page++) {
    const { found } = await findPage(store, { ...findQueryOf(parseBookQuery({ q: 'the' }), undefined, 3), after })
    ids.push(...found.map(({ book }) => book.id))
    after = found.at(-1)?.position
    if (found.length < 3) break
  }
  const all = RANKED.map((book, i) => ({ ...book, id: i + 1 }))
  assert.deepEqual(ids, expectedIds(all, { q: 'the' }))
}

describe('a database made before title lengths were indexed upgrades in place', () => {
  it('on sqlite, its books come by relevance page by page', async (t) => {
    const { path, db } = await sqliteAt(BEFORE_TITLE_LENGTHS)
    db.exec('BEGIN')
    insertBooks(db, RANKED)
    indexTail(db)
    db.exec('COMMIT')
    db.close()

    const store = new SqliteStore({ path })
    t.after(() => store.close())
    await checkRanked(store)
  })

  it(
    'on postgres, its books come by relevance page by page',
    { skip: storeEngines.find((engine) => engine.name === 'postgres')!.skip },
    async (t) => {
      const { store } = await postgresAt(
        t,
        ({ version }) => version <= BEFORE_TITLE_LENGTHS,
        async (client) => {
          await insertBooksInto(client, RANKED)
        },
      )
      await checkRanked(store)
    },
  )
})

describe('a database whose history was indexed by book upgrades in place', () => {
  it('on sqlite, each book keeps its history, through the trash too, and adds to it', async (t) => {
    const { path, db } = await sqliteAt(25)
    const insert = db.prepare(`INSERT INTO books (title, author, year, revision, title_folded, author_folded, title_words, author_words)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
    const record = db.prepare(`INSERT INTO book_changes (book_id, kind, actor, at, title, author, year, revision)
      VALUES (?, ?, 'ada', 1, ?, ?, ?, ?)`)
    const stored = (title: string, year: number, revision: number) => {
      const { titleFolded, authorFolded, titleWords, authorWords } = searchKeys({ title, author: 'Someone' })
      return Number(insert.run(title, 'Someone', year, revision, titleFolded, authorFolded, titleWords, authorWords).lastInsertRowid)
    }
    db.exec('BEGIN')
    const unchanged = stored('Unchanged', 1950, 1)
    const kept = stored('Kept', 2000, 2)
    const trashed = stored('Trashed', 1990, 2)
    record.run(kept, 'created', 'Kept', 'Someone', 1999, 1)
    record.run(trashed, 'created', 'Trashed', 'Someone', 1980, 1)
    record.run(kept, 'updated', 'Kept', 'Someone', 2000, 2)
    record.run(trashed, 'updated', 'Trashed', 'Someone', 1990, 2)
    const deleted = Number(record.run(trashed, 'deleted', 'Trashed', 'Someone', 1990, 2).lastInsertRowid)
    db.prepare(
      `INSERT INTO trashed_books (id, title, author, year, revision, title_folded, author_folded, title_words, author_words,
         deleted_at, deleted_by, deleted_seq)
       SELECT id, title, author, year, revision, title_folded, author_folded, title_words, author_words, 1, 'ada', ? FROM books WHERE id = ?`,
    ).run(deleted, trashed)
    db.prepare('DELETE FROM books WHERE id = ?').run(trashed)
    db.exec('COMMIT')
    db.close()

    const store = new SqliteStore({ path })
    t.after(() => store.close())
    const years = async (id: number) => (await store.changes.ofBook(id, undefined, 10))!.map(({ kind, book }) => `${kind} ${book?.year}`)
    assert.deepEqual(await years(unchanged), [])
    assert.deepEqual(await years(kept), ['updated 2000', 'created 1999'])
    assert.deepEqual(await years(trashed), ['deleted 1990', 'updated 1990', 'created 1980'])
    assert.equal((await store.books.update('ada', kept, { year: 2001 })).outcome, 'updated')
    await store.books.restore('ada', trashed)
    await store.books.update('ada', unchanged, { year: 1951 })
    assert.deepEqual(await years(kept), ['updated 2001', 'updated 2000', 'created 1999'])
    assert.deepEqual(await years(trashed), ['restored 1990', 'deleted 1990', 'updated 1990', 'created 1980'])
    assert.deepEqual(await years(unchanged), ['updated 1951'])
  })
})

/** The last migration of the version whose block summaries only grew. */
const BEFORE_SUMMARIES_FORGOT = 27

/**
 * Three blocks of books (ids 1 to 2,100) as that version left them after book 5 was deleted and book
 * 1,050 retitled: block 0 summarised with the deleted book's "qx", block 1 with the old title's
 * "zz", both with "pl", and no block waiting for its summary.
 */
const SUMMARIES_BOOKS = Array.from({ length: 2100 }, (_, n) => ({ title: `Plain ${n}`, author: 'Someone', year: 2000 }))
const SUMMARIES_STATEMENTS = [
  `INSERT INTO block_grams (field, gram, block) VALUES (0, 'qx', 0), (0, 'zz', 1), (0, 'pl', 0), (0, 'pl', 1)`,
  'DELETE FROM blocks_to_summarise',
  `INSERT INTO book_changes (seq, book_id, kind, actor, at, title, author, year, revision)
   VALUES (1, 5, 'deleted', 'ada', 1, 'Qxa', 'Someone', 2000, 1), (2, 1050, 'updated', 'ada', 1, 'Plain 1049', 'Someone', 2000, 2)`,
  'DELETE FROM books WHERE id = 5',
]

describe('a database whose block summaries only grew upgrades in place', () => {
  async function checkForgotten(holding: (gram: string) => Promise<number[]>) {
    for (const [gram, blocks] of [
      ['qx', []],
      ['zz', []],
      ['pl', [0, 1]],
    ] as const) {
      const until = Date.now() + 20_000
      while (JSON.stringify(await holding(gram)) !== JSON.stringify(blocks) && Date.now() < until) {
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      assert.deepEqual(await holding(gram), blocks, gram)
    }
  }

  it('on sqlite, the blocks of books changed or deleted are summarised again', async (t) => {
    const { path, db } = await sqliteAt(BEFORE_SUMMARIES_FORGOT)
    db.exec('BEGIN')
    insertBooks(db, SUMMARIES_BOOKS)
    for (const statement of SUMMARIES_STATEMENTS) db.exec(statement)
    db.exec('COMMIT')

    const store = new SqliteStore({ path })
    t.after(() => store.close())
    const holding = db.prepare('SELECT block FROM block_grams WHERE field = 0 AND gram = ? ORDER BY block')
    await checkForgotten(async (gram) => holding.all(gram).map((row) => row.block as number))
    db.close()
  })

  it(
    'on postgres, the blocks of books changed or deleted are summarised again',
    { skip: storeEngines.find((engine) => engine.name === 'postgres')!.skip },
    async (t) => {
      const { url } = await postgresAt(
        t,
        ({ version }) => version <= BEFORE_SUMMARIES_FORGOT,
        async (client) => {
          await insertBooksInto(client, SUMMARIES_BOOKS)
          for (const statement of SUMMARIES_STATEMENTS) await client.query(statement)
          await client.query('UPDATE change_seq SET last = 2')
        },
      )
      const peek = new pg.Client({ connectionString: url })
      await peek.connect()
      t.after(() => peek.end())
      await checkForgotten(async (gram) =>
        (await peek.query('SELECT block FROM block_grams WHERE field = 0 AND gram = $1 ORDER BY block', [gram])).rows.map((row) =>
          Number(row.block),
        ),
      )
    },
  )
})
