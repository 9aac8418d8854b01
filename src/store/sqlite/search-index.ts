import type { DatabaseSync, StatementSync } from 'node:sqlite'

/**
 * How many books may wait for the search indexes, new ones in the tail that they do not hold yet
 * and deleted ones they still hold, before single writes step (migrations 012 and 025 say why
 * books wait). More waiting makes each book cheaper to take in or out, and each find look through
 * more books directly; at this length the direct look costs a find little (docs/performance.md).
 */
export const SEARCH_INDEX_BATCH = 2000

/**
 * The most books one step moves into the indexes, or out of them, on the thread that answers
 * requests (in-memory databases, and a store as it opens). FTS5 takes tens of microseconds per
 * book: a step of this size is over in a few milliseconds in a small catalogue, where the tens of
 * thousands that imports used to index at once held every other request for as long as a second
 * (docs/performance.md).
 */
export const INDEX_STEP = 500

/**
 * How long a step on the store's upkeep thread aims to hold the store's write turn, in ms. Each
 * book goes to its own place in five sort-key indexes, and the more books a step takes, the more of
 * them share a page, which is then read, changed and written once: at 100,000 books unlike each
 * other, a step of 2,000 took a third of the time per book that one of 500 did. At a million,
 * where few share a page, a step of 2,000 took four times as long as one of 500 (docs/performance.md).
 */
export const UPKEEP_STEP_MS = 40

/**
 * The size of the upkeep thread's next step, from what the last one did and how long it took: as
 * many books as fit in UPKEEP_STEP_MS at the last one's time per book, at least INDEX_STEP and at
 * most a batch.
 */
export function nextStepSize(size: number, { unindexed, moved }: IndexStep, ms: number): number {
  const books = unindexed + moved
  if (books === 0) return size
  return Math.min(SEARCH_INDEX_BATCH, Math.max(INDEX_STEP, Math.round((UPKEEP_STEP_MS * books) / ms)))
}

/**
 * What one step did: the deleted books it took out of the indexes, the new books it moved into
 * them, and whether it found nothing left to do. A step that failed did nothing.
 */
export interface IndexStep {
  unindexed: number
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
  readonly #lastLeaving: StatementSync
  readonly #wordsLeave: StatementSync
  readonly #textLeaves: StatementSync
  readonly #left: StatementSync

  constructor(db: DatabaseSync) {
    // Deleted books leave the indexes (migration 025) by the keys they were indexed by.
    this.#lastLeaving = db.prepare('SELECT max(id) AS last FROM (SELECT id FROM books_leaving_indexes ORDER BY id LIMIT ?)')
    this.#wordsLeave = db.prepare(`INSERT INTO books_words (books_words, rowid, title_words, author_words)
      SELECT 'delete', id, title_words, author_words FROM books_leaving_indexes WHERE id <= ? ORDER BY id`)
    this.#textLeaves = db.prepare(`INSERT INTO books_text (books_text, rowid, title_folded, author_folded)
      SELECT 'delete', id, title_folded, author_folded FROM books_leaving_indexes WHERE id <= ? ORDER BY id`)
    this.#left = db.prepare('DELETE FROM books_leaving_indexes WHERE id <= ?')
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
   * Takes the oldest deleted books, at most `size`, out of the indexes, in the transaction open;
   * once none is left to take out, moves the oldest books of the tail, at most `size`, into them.
   * A restored book may be in both, and must leave before it joins again. A step that fails is
   * undone whole: its books stay where they were, where finds still treat them right, and
   * a later step tries again. A failure that ends the transaction fails its commit.
   */
  run(size = INDEX_STEP): IndexStep {
    this.#begin.run()
    try {
      const leaving = this.#lastLeaving.get(size)!.last as number | null
      if (leaving !== null) {
        const unindexed = this.#unindex(leaving)
        this.#release.run()
        return { unindexed, moved: 0, emptied: false }
      }
      const last = this.#last.get(size)!.last as number | null
      const moved = last === null ? 0 : this.#move(last)
      this.#release.run()
      return { unindexed: 0, moved, emptied: last === null }
    } catch {
      try {
        this.#undo.run()
        this.#release.run()
      } catch {
        // The transaction itself has ended: its commit fails, and says why.
      }
      return { unindexed: 0, moved: 0, emptied: false }
    }
  }

  #unindex(last: number): number {
    this.#wordsLeave.run(last)
    this.#textLeaves.run(last)
    return Number(this.#left.run(last).changes)
  }

  #move(last: number): number {
    this.#words.run(last)
    this.#text.run(last)
    return Number(this.#mark.run(last).changes)
  }
}

/**
 * Moves books from the tail (`indexed IS NULL`, migration 015) into the search and sort-key
 * indexes, and deleted books out of them (migration 025), a bounded step at a time, and keeps
 * count of the books waiting.
 */
export class SqliteSearchIndex {
  readonly #batch: number
  readonly #steps: IndexSteps
  readonly #count: StatementSync
  /**
   * How many books this process believes wait for a step, new ones in the tail and deleted ones
   * leaving the indexes; other processes may have stepped since.
   */
  #waiting = 0
  /** Set while the store catches up, a step at a time: single writes then leave the steps to it. */
  catchingUp = false
  /**
   * Set by a store that has an upkeep thread: a write that finds a step due asks for a catch-up
   * there, instead of stepping in its own transaction on the thread that answers requests.
   */
  elsewhere: (() => void) | undefined

  constructor(db: DatabaseSync, batch = SEARCH_INDEX_BATCH) {
    this.#batch = batch
    this.#steps = new IndexSteps(db)
    this.#count = db.prepare(
      'SELECT (SELECT count(*) FROM books WHERE indexed IS NULL) + (SELECT count(*) FROM books_leaving_indexes) AS waiting',
    )
    this.recount()
  }

  /** Counts again: after a transaction that stored or deleted books was rolled back, they do not wait. */
  recount(): void {
    this.#waiting = this.#count.get()!.waiting as number
  }

  /** True once enough books wait that a step should take some of them. */
  get due(): boolean {
    return this.#waiting >= this.#batch
  }

  /** Called in the transaction that stored `count` new books, which joined the tail. */
  stored(count: number): void {
    this.#waiting += count
  }

  /** Called in the transaction that deleted a book the indexes held, which now leaves them. */
  deleted(): void {
    this.#waiting += 1
  }

  /** Called by a write that stored or deleted a book, in its transaction: a step, when one is due and no catch-up is under way. */
  stepIfDue(): void {
    if (!this.due || this.catchingUp) return
    if (this.elsewhere) this.elsewhere()
    else this.step()
  }

  /** Runs a step in the transaction open, on this connection; answers how many books it took in or out. */
  step(): number {
    return this.took(this.#steps.run())
  }

  /** Counts what a step did, on this connection or another; answers how many books it took in or out. */
  took({ unindexed, moved, emptied }: IndexStep): number {
    this.#waiting = emptied ? 0 : Math.max(0, this.#waiting - unindexed - moved)
    return unindexed + moved
  }

  /**
   * Takes every waiting book in or out, a step at a time, each step committing on its own. The
   * store does this when it opens: what it finds was left by a process that stopped, or by books
   * written into the file directly.
   */
  indexAll(): void {
    while (this.step() > 0);
  }
}
