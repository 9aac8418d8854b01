import type { DatabaseSync, StatementSync } from 'node:sqlite'
import { BLOCK_BITS, blockIds, summaryOf } from '../sql/block-grams.ts'

/**
 * Summarises one block of books at a time (migration 023): the oldest waiting block below the
 * newest, which new books are still filling. A step reads 1,024 books and writes about a
 * thousand rows, in a transaction of the store's upkeep thread, or of this thread's writes for an
 * in-memory database.
 */
export class SqliteBlockSummary {
  readonly #next: StatementSync
  readonly #books: StatementSync
  readonly #add: StatementSync
  readonly #done: StatementSync

  constructor(db: DatabaseSync) {
    this.#next = db.prepare(`SELECT block FROM blocks_to_summarise
      WHERE block < (SELECT max(id) >> ${BLOCK_BITS} FROM books) ORDER BY block LIMIT 1`)
    this.#books = db.prepare('SELECT title_folded, author_folded FROM books WHERE id >= ? AND id < ?')
    this.#books.setReturnArrays(true)
    this.#add = db.prepare('INSERT OR IGNORE INTO block_grams (field, gram, block) VALUES (?, ?, ?)')
    this.#done = db.prepare('DELETE FROM blocks_to_summarise WHERE block = ?')
  }

  /** Whether a block waits for its summary: asked first, so that a look finding none takes no write lock. */
  waiting(): boolean {
    return this.#next.get() !== undefined
  }

  /** Summarises the next block waiting, if there is one; answers whether there was. */
  step(): boolean {
    const block = this.#next.get()?.block as number | undefined
    if (block === undefined) return false
    // The typings know only object rows.
    const books = this.#books.all(...blockIds(block)) as unknown as [string, string][]
    const { fields, grams } = summaryOf(books)
    for (let i = 0; i < grams.length; i++) this.#add.run(fields[i]!, grams[i]!, block)
    this.#done.run(block)
    return true
  }
}
