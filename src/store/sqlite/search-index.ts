import type { DatabaseSync, StatementSync } from 'node:sqlite'

/**
 * How long the tail of books not yet in the search indexes may grow before single writes index
 * some of it (migration 012 says why there is a tail). Longer tails make each book cheaper to
 * index and each find look through more books directly; at this length the direct look costs a
 * find little (docs/performance.md).
 */
export const SEARCH_INDEX_BATCH = 2000

/**
 * The most books one step moves into the indexes. FTS5 takes tens of microseconds per book: a
 * step of this size is over in a few milliseconds in a small catalogue, where the tens of
 * thousands that imports used to index at once held every other request for as long as a second
 * (docs/performance.md). In-memory databases step on the thread that answers requests.
 */
export const INDEX_STEP = 500

/** What one step did: the books it moved, and whether it found the tail empty. A step that failed moved none. */
export interface IndexStep {
  moved: number
  emptied: boolean
}

/**
 * One step's statements, on a connection that may write the file: the store's own, or that of the
 * store's upkeep thread, which catches up after an import (see UpkeepThread).
 */
export class IndexSteps {
  readonly #last: StatementSync
  readonly #words: StatementSync
  readonly #text: StatementSync
  readonly #mark: StatementSync
  readonly #begin: StatementSync
  readonly #release: StatementSync
  readonly #undo: StatementSync

  constructor(db: DatabaseSync) {
    // The step's books: the oldest of the tail, up to this id, in the three statements alike.
    this.#last = db.prepare('SELECT max(id) AS last FROM (SELECT id FROM books WHERE indexed IS NULL ORDER BY id LIMIT ?)')
    this.#words = db.prepare(`INSERT INTO books_words (rowid, title_words, author_words)
      SELECT id, title_words, author_words FROM books WHERE indexed IS NULL AND id <= ? ORDER BY id`)
    this.#text = db.prepare(`INSERT INTO books_text (rowid, title_folded, author_folded)
      SELECT id, title_folded, author_folded FROM books WHERE indexed IS NULL AND id <= ? ORDER BY id`)
    // From NULL to 1 keeps each row's size, so SQLite overwrites the row where it lies.
    this.#mark = db.prepare('UPDATE books SET indexed = 1 WHERE indexed IS NULL AND id <= ?')
    // A step's three statements stand or fall together, inside a transaction or on their own.
    this.#begin = db.prepare('SAVEPOINT index_step')
    this.#release = db.prepare('RELEASE index_step')
    this.#undo = db.prepare('ROLLBACK TO index_step')
  }

  /**
   * Moves the oldest books of the tail, at most INDEX_STEP, into the indexes, in the transaction
   * open. A step that fails is undone whole: its books stay in the tail, where finds still find
   * them, and a later step tries again. A failure that ends the transaction fails its commit.
   */
  run(): IndexStep {
    this.#begin.run()
    try {
      const last = this.#last.get(INDEX_STEP)!.last as number | null
      const moved = last === null ? 0 : this.#move(last)
      this.#release.run()
      return { moved, emptied: last === null }
    } catch {
      try {
        this.#undo.run()
        this.#release.run()
      } catch {
        // The transaction itself has ended: its commit fails, and says why.
      }
      return { moved: 0, emptied: false }
    }
  }

  #move(last: number): number {
    this.#words.run(last)
    this.#text.run(last)
    return Number(this.#mark.run(last).changes)
  }
}

/**
 * Moves books from the tail (`indexed IS NULL`, migration 015) into the search and sort-key
 * indexes, a bounded step at a time, and keeps count of the tail.
 */
export class SqliteSearchIndex {
  readonly #batch: number
  readonly #steps: IndexSteps
  readonly #count: StatementSync
  /** How long this process believes the tail is; other processes may have shortened it since. */
  #tail = 0
  /** Set while the store catches up, a step at a time: single writes then leave the tail to it. */
  catchingUp = false
  /**
   * Set by a store that has an upkeep thread: a write that finds a step due asks for a catch-up
   * there, instead of stepping in its own transaction on the thread that answers requests.
   */
  elsewhere: (() => void) | undefined

  constructor(db: DatabaseSync, batch = SEARCH_INDEX_BATCH) {
    this.#batch = batch
    this.#steps = new IndexSteps(db)
    this.#count = db.prepare('SELECT count(*) AS tail FROM books WHERE indexed IS NULL')
    this.recount()
  }

  /** Counts the tail again: after a transaction that stored books was rolled back, they are not in it. */
  recount(): void {
    this.#tail = this.#count.get()!.tail as number
  }

  /** True once the tail is long enough that a step should index some of it. */
  get due(): boolean {
    return this.#tail >= this.#batch
  }

  /** Called in the transaction that stored `count` new books, which joined the tail. */
  stored(count: number): void {
    this.#tail += count
  }

  /** Called by a write that stored a book, in its transaction: a step, when one is due and no catch-up is under way. */
  stepIfDue(): void {
    if (!this.due || this.catchingUp) return
    if (this.elsewhere) this.elsewhere()
    else this.step()
  }

  /** Runs a step in the transaction open, on this connection; answers how many books it moved. */
  step(): number {
    return this.took(this.#steps.run())
  }

  /** Counts what a step moved, on this connection or another; answers how many books that was. */
  took({ moved, emptied }: IndexStep): number {
    this.#tail = emptied ? 0 : Math.max(0, this.#tail - moved)
    return moved
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
