/**
 * A generated catalogue for the benchmarks that need many books: the same books on every run
 * (titles, series, author lists, accents, years), written straight into the database with their
 * search columns, the service's indexes and triggers in place (on SQLite, the search indexes then
 * take them in bulk, as the service would).
 */
import { closeSync, copyFileSync, fsyncSync, openSync } from 'node:fs'
import { DatabaseSync } from 'node:sqlite'
import { faker } from '@faker-js/faker'
import pg from 'pg'
import { bookColumns, INSERT_BOOK_COLUMNS } from '../../src/store/postgres/book-writes.ts'
import { SqliteSearchIndex } from '../../src/store/sqlite/search-index.ts'
import type { NewBook } from '../../src/books/book.ts'

export const SEED = 20_241_123
const BATCH = 5000

export function* generateBooks(count: number): Generator<NewBook> {
  faker.seed(SEED)
  for (let n = 0; n < count; n++) {
    const kind = n % 4
    const title =
      kind === 0
        ? faker.book.title()
        : kind === 1
          ? `${faker.book.title()} (${faker.book.series()}, #${1 + (n % 9)})`
          : kind === 2
            ? `The ${faker.word.adjective()} ${faker.word.noun()}`
            : `${faker.word.noun()} of ${faker.location.city()}`
    const author = n % 5 === 0 ? `${faker.person.fullName()}, ${faker.person.fullName()}` : faker.person.fullName()
    yield { title: title.slice(0, 500), author: author.slice(0, 500), year: faker.number.int({ min: 1500, max: 2025 }) }
  }
}

/** Every BATCH books of the catalogue, keeping one in a thousand as material for queries. */
async function inBatches(count: number, write: (books: NewBook[]) => Promise<void> | void): Promise<NewBook[]> {
  const kept: NewBook[] = []
  let batch: NewBook[] = []
  let n = 0
  for (const book of generateBooks(count)) {
    if (n++ % 1000 === 0) kept.push(book)
    batch.push(book)
    if (batch.length === BATCH) {
      await write(batch)
      batch = []
    }
  }
  if (batch.length > 0) await write(batch)
  return kept
}

/** The books kept as material for queries, without writing any: for a catalogue seeded before. */
export function keptBooks(count: number): NewBook[] {
  const kept: NewBook[] = []
  let n = 0
  for (const book of generateBooks(count)) if (n++ % 1000 === 0) kept.push(book)
  return kept
}

/**
 * Copies a kept SQLite catalogue for a run, through to the disk: the system would otherwise write
 * the copy's hundreds of megabytes out while the run measures, and its first figures with them.
 */
export function copyCatalogue(from: string, to: string): void {
  copyFileSync(from, to)
  const fd = openSync(to, 'r+')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

/** Writes `count` books into the SQLite file at `path`, whose schema the service created. */
export function seedSqlite(path: string, count: number): Promise<NewBook[]> {
  const db = new DatabaseSync(path)
  const insert = db.prepare(`INSERT INTO books (title, author, year, title_folded, author_folded, title_words, author_words)
    VALUES (?, ?, ?, ?, ?, ?, ?)`)
  return inBatches(count, (books) => {
    const [titles, authors, years, tf, af, tw, aw] = bookColumns(books)
    db.exec('BEGIN')
    for (let i = 0; i < books.length; i++) insert.run(titles[i]!, authors[i]!, years[i]!, tf[i]!, af[i]!, tw[i]!, aw[i]!)
    db.exec('COMMIT')
  })
    .then((kept) => {
      new SqliteSearchIndex(db).indexAll()
      return kept
    })
    .finally(() => db.close())
}

/** Writes `count` books into the PostgreSQL database at `url`, whose schema the service created. */
export async function seedPostgres(url: string, count: number): Promise<NewBook[]> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await inBatches(count, async (books) => {
      await client.query(INSERT_BOOK_COLUMNS, bookColumns(books))
    })
  } finally {
    await client.query('VACUUM ANALYZE books').catch(() => undefined)
    await client.end()
  }
}
