import { DatabaseSync } from 'node:sqlite'
import { searchKeys } from '../../src/books/folding.ts'
import { SqliteSearchIndex } from '../../src/store/sqlite/search-index.ts'
import { sampleBook } from './service.ts'

/**
 * Adds books straight into a migrated SQLite file, far faster than through the interface.
 * The service must not be running on the file meanwhile.
 */
export function seedSqlite(path: string, count: number): void {
  const db = new DatabaseSync(path)
  try {
    const start = (db.prepare('SELECT count(*) AS n FROM books').get() as { n: number }).n
    // With the search columns the service writes, so that the books can be found.
    const insert = db.prepare(`INSERT INTO books (title, author, year, title_folded, author_folded, title_words, author_words)
      VALUES (?, ?, ?, ?, ?, ?, ?)`)
    db.exec('BEGIN')
    for (let n = start; n < start + count; n++) {
      const book = sampleBook(n)
      const keys = searchKeys(book)
      insert.run(book.title, book.author, book.year, keys.titleFolded, keys.authorFolded, keys.titleWords, keys.authorWords)
    }
    db.exec('COMMIT')
    // Into the search indexes here: a service would otherwise do it as it starts, for longer than it may take to listen.
    new SqliteSearchIndex(db).indexAll()
  } finally {
    db.close()
  }
}
