import type { DatabaseSync, StatementSync } from 'node:sqlite'

/**
 * How long the tail of books not yet in the search indexes may grow before single writes index
 * some of it (migration 012 says why there is a tail). Longer tails make each book cheaper to
 * index and each find look through more books directly; at this length the direct look costs a
 * find little (docs/performance.md).
 */
export const SEARCH_INDEX_BATCH = 2000

/**
 * The most books one step moves into the indexes. A step runs on the thread that answers every
 * request, and FTS5 takes tens of microseconds per book: a step of this size is over in a few
 * milliseconds, where the tens of thousands that imports used to index at once held every other
 * request for as long as a second (docs/performance.md).
 */
export const INDEX_STEP = 500

/**
 * Moves books from the tail (`indexed IS NULL`, migration 015) into the search and sort-key
 * indexes, a bounded step at a time. Each step runs inside whatever transaction is open.
 */
export class SqliteSearchIndex {
  readonly #batch: number
  readonly #last: StatementSync
  readonly #words: StatementSync
  readonly #text: StatementSync
  readonly #mark: StatementSync
  readonly #count: StatementSync
  readonly #begin: StatementSync
  readonly #release: StatementSync
  readonly #undo: StatementSync
  /** How long this process believes the tail is; other processes may have shortened it since. */
  #tail = 0

  constructor(db: DatabaseSync, batch = SEARCH_INDEX_BATCH) {
    this.#batch = batch
    // The step's books: the oldest of the tail, up to this id, in the three statements alike.
    this.#last = db.prepare('SELECT max(id) AS last FROM (SELECT id FROM books WHERE indexed IS NULL ORDER BY id LIMIT ?)')
    this.#words = db.prepare(`INSERT INTO books_words (rowid, title_words, author_words)
      SELECT id, title_words, author_words FROM books WHERE indexed IS NULL AND id <= ? ORDER BY id`)
    this.#text = db.prepare(`INSERT INTO books_text (rowid, title_folded, author_folded)
      SELECT id, title_folded, author_folded FROM books WHERE indexed IS NULL AND id <= ? ORDER BY id`)
    // From NULL to 1 keeps each row's size, so SQLite overwrites the row where it lies.
    this.#mark = db.prepare('UPDATE books SET indexed = 1 WHERE indexed IS NULL AND id <= ?')
    this.#count = db.prepare('SELECT count(*) AS tail FROM books WHERE indexed IS NULL')
    // A step's three statements stand or fall together, inside a transaction or on their own.
    this.#begin = db.prepare('SAVEPOINT index_step')
    this.#release = db.prepare('RELEASE index_step')
    this.#undo = db.prepare('ROLLBACK TO index_step')
    this.recount()
  }

  /** Counts the tail again: after a transaction that stored books was rolled back, they are not in it. */
  recount(): void {
    this.#tail = this.#count.get()!.tail as number
  }

  /** True once the tail is long enough that a write should index a step of it. */
  get due(): boolean {
    return this.#tail >= this.#batch
  }

  /** Called in the transaction that stored `count` new books, which joined the tail. */
  stored(count: number): void {
    this.#tail += count
  }

  /**
   * Moves the oldest books of the tail, at most INDEX_STEP, into the indexes, in the transaction
   * open; answers how many it moved. A step that fails is undone whole and answers 0: its books
   * stay in the tail, where finds still find them, and a later step tries again. A failure that
   * ends the transaction fails its commit.
   */
  step(): number {
    this.#begin.run()
    try {
      const last = this.#last.get(INDEX_STEP)!.last as number | null
      let moved = 0
      if (last !== null) {
        this.#words.run(last)
        this.#text.run(last)
        moved = Number(this.#mark.run(last).changes)
      }
      this.#release.run()
      this.#tail = last === null ? 0 : Math.max(0, this.#tail - moved)
      return moved
    } catch {
      try {
        this.#undo.run()
        this.#release.run()
      } catch {
        // The transaction itself has ended: its commit fails, and says why.
      }
      return 0
    }
  }

  /**
   * Indexes the whole tail, a step at a time, each step committing on its own. The store does
   * this when it opens: the tail it finds was left by a process that stopped, or by books written
   * into the file directly.
   */
  indexAll(): void {
    while (this.step() > 0);
  }
}
