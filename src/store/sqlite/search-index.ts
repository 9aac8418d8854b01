import type { DatabaseSync, StatementSync } from 'node:sqlite'

/**
 * How long the tail of books not yet in the search indexes may grow before the store indexes it
 * (migration 012 says why there is a tail). Longer tails make each book cheaper to index and
 * each find look through more books directly: 2,000 books cost a find well under a millisecond.
 */
export const SEARCH_INDEX_BATCH = 2000

/** The most books one statement indexes, so that an unusually long tail is taken a bounded step at a time. */
const MOST_AT_ONCE = 20_000

/**
 * How many times longer the tail may grow while a transaction stores books in bulk (an import):
 * each book then costs less to index, and the transaction shortens the tail again before it
 * commits. A 100,000-book import ran at 52,000 to 57,000 books a second with steps of one batch,
 * 57,000 to 59,000 with these.
 */
const BULK = 10

/** Moves a store's search indexes forward over the tail of new books, in bulk. */
export class SqliteSearchIndex {
  readonly #batch: number
  readonly #advance: StatementSync
  /** What this process last saw of `indexed_up_to`; others may have moved it since. */
  #indexedUpTo = 0
  /** The highest id this process has stored. */
  #highest = 0

  constructor(db: DatabaseSync, batch = SEARCH_INDEX_BATCH) {
    this.#batch = batch
    // The trigger of migration 012 indexes the books that the new value passes, in this statement.
    this.#advance = db.prepare(`UPDATE search_index_state
      SET indexed_up_to = coalesce(
        (SELECT max(id) FROM (SELECT id FROM books WHERE id > indexed_up_to ORDER BY id LIMIT ?)),
        indexed_up_to)
      RETURNING indexed_up_to`)
  }

  /**
   * Called in the transaction that stored books up to this id, in one statement (`bulk` when it
   * stored many): indexes the tail in that transaction once it is long enough.
   */
  stored(id: number, bulk = false): void {
    this.#highest = Math.max(this.#highest, id)
    if (id - this.#indexedUpTo >= this.#batch * (bulk ? BULK : 1)) this.#tryStep()
  }

  /** Called before a transaction commits: it leaves the tail no longer than single writes do. */
  settle(): void {
    if (this.#highest - this.#indexedUpTo >= this.#batch) this.#tryStep()
  }

  #tryStep(): void {
    try {
      this.#indexedUpTo = this.#step(MOST_AT_ONCE)
    } catch {
      // The books are stored, and found in the tail; SQLite undid the failed step whole, and the
      // next write tries again. A failure that ends the transaction fails its commit.
    }
  }

  /**
   * Indexes the whole tail, a bounded step at a time, each step committing on its own. The store
   * does this when it opens: the tail it finds was left by a process that stopped, or by books
   * written into the file directly.
   */
  indexAll(): void {
    for (;;) {
      const before = this.#indexedUpTo
      this.#indexedUpTo = this.#step(MOST_AT_ONCE)
      if (this.#indexedUpTo === before) return
    }
  }

  #step(most: number): number {
    return (this.#advance.get(most) as { indexed_up_to: number }).indexed_up_to
  }
}
