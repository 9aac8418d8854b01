import type { DatabaseSync, StatementSync } from 'node:sqlite'
import { BLOCK_BITS, blockIds, staleGrams, summaryOf, unseenDeletion } from '../sql/block-grams.ts'

/**
 * Summarises one block of books at a time (migrations 023 and 028): the oldest waiting block
 * below the newest, which new books are still filling. A step reads 1,024 books and writes about
 * a thousand rows, in a transaction of the store's upkeep thread, or of this thread's writes for
 * an in-memory database.
 */
export class SqliteBlockSummary {
  readonly #next: StatementSync
  readonly #books: StatementSync
  readonly #held: StatementSync
  readonly #add: StatementSync
  readonly #remove: StatementSync
  readonly #done: StatementSync
  readonly #unseen: StatementSync
  readonly #markDeleted: StatementSync
  readonly #seen: StatementSync

  constructor(db: DatabaseSync) {
    this.#next = db.prepare(`SELECT block FROM blocks_to_summarise
      WHERE block < (SELECT max(id) >> ${BLOCK_BITS} FROM books) ORDER BY block LIMIT 1`)
    this.#books = db.prepare('SELECT title_folded, author_folded FROM books WHERE id >= ? AND id < ?')
    this.#books.setReturnArrays(true)
    this.#held = db.prepare('SELECT field, gram FROM block_grams WHERE block = ?')
    this.#held.setReturnArrays(true)
    this.#add = db.prepare('INSERT OR IGNORE INTO block_grams (field, gram, block) VALUES (?, ?, ?)')
    this.#remove = db.prepare('DELETE FROM block_grams WHERE field = ? AND gram = ? AND block = ?')
    this.#done = db.prepare('DELETE FROM blocks_to_summarise WHERE block = ?')
    // Through the trash's index of deletions: a look costs the same however many books came since.
    this.#unseen = db.prepare(`SELECT ${unseenDeletion('(SELECT max(deleted_seq) FROM trashed_books)')} AS unseen`)
    this.#markDeleted = db.prepare(`INSERT OR IGNORE INTO blocks_to_summarise
      SELECT DISTINCT id >> ${BLOCK_BITS} FROM trashed_books WHERE ${unseenDeletion('deleted_seq')}`)
    this.#seen = db.prepare('UPDATE block_deletions_seen SET seq = (SELECT max(deleted_seq) FROM trashed_books)')
  }

  /** Whether the trash holds books deleted since the last look: asked first, as `waiting` is. */
  deletionsUnseen(): boolean {
    return this.#unseen.get()?.unseen === 1
  }

  /** Puts the blocks of the books deleted since the last look back on the list. */
  noteDeletions(): void {
    this.#markDeleted.run()
    this.#seen.run()
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
    const held = this.#held.all(block) as unknown as [number, string][]
    for (const [field, gram] of staleGrams(held, { fields, grams })) this.#remove.run(field, gram, block)
    for (let i = 0; i < grams.length; i++) this.#add.run(fields[i]!, grams[i]!, block)
    this.#done.run(block)
    return true
  }
}
