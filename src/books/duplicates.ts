import { hash } from 'node:crypto'
import type { NewBook } from './book.ts'
import { fold } from './folding.ts'

/** Books of an import, in the order of its file, each with the row it came from, counted from 1. */
export interface ImportBatch {
  rows: number[]
  books: NewBook[]
}

/** A row of an import that repeats a stored book (its `id`) or an earlier row of the file (`id` null). */
export interface Duplicate {
  row: number
  id: number | null
}

/** For each of `books`, the smallest id of a stored book that it repeats (see BookRepository.sameAs). */
export type SameAs = (books: NewBook[]) => Promise<(number | undefined)[]>

/** Rows looked up in the store at once: one statement, whose values stay small. */
export const LOOKUP_ROWS = 1000

/** The duplicates an answer lists, at most: as many as the errors it lists. */
export const LISTED_DUPLICATES = 100

/**
 * Finds the rows of an import that repeat a book: one whose title and author, folded as search
 * folds them, and year equal those of a stored book, or of an earlier row that is not itself a
 * duplicate. Stored books are looked up a thousand rows at a time through the store's index of
 * folded titles; the earlier rows are remembered by a digest of their folded members, 22
 * characters each, so that 100,000 rows take a few megabytes whatever their length. Rows go in in file order.
 *
 * When the transaction of an import stores what was kept as it reads, `sameAs` must look only
 * at the books stored before the import's: the digests find its own as earlier rows.
 */
export class DuplicateFinder {
  /** The first LISTED_DUPLICATES duplicates, in row order. */
  readonly listed: Duplicate[] = []
  readonly #sameAs: SameAs
  /** Rows that will be stored, by the digest of what they are compared by. */
  readonly #kept = new Set<string>()
  #pending: ImportBatch = { rows: [], books: [] }

  constructor(sameAs: SameAs) {
    this.#sameAs = sameAs
  }

  /**
   * Takes the next rows of the file, and looks them up once a thousand are waiting: answers the
   * rows decided to be kept since the last call, in file order (none until a lookup runs).
   */
  async add(batch: ImportBatch): Promise<ImportBatch> {
    this.#pending.rows.push(...batch.rows)
    this.#pending.books.push(...batch.books)
    return this.#pending.books.length >= LOOKUP_ROWS ? this.#lookUp() : { rows: [], books: [] }
  }

  /** Looks up the rows still waiting, and answers those kept: call it after the last batch. */
  async end(): Promise<ImportBatch> {
    return this.#pending.books.length > 0 ? this.#lookUp() : { rows: [], books: [] }
  }

  async #lookUp(): Promise<ImportBatch> {
    const { rows, books } = this.#pending
    this.#pending = { rows: [], books: [] }
    const stored = await this.#sameAs(books)
    const kept: ImportBatch = { rows: [], books: [] }
    for (const [i, book] of books.entries()) {
      const id = stored[i]
      if (id !== undefined) {
        this.#found({ row: rows[i]!, id })
        continue
      }
      // NUL is in no title or author, so no two books make the same text.
      const digest = hash('sha256', `${fold(book.title)}\u0000${fold(book.author)}\u0000${book.year}`, 'base64').slice(0, 22)
      if (this.#kept.has(digest)) {
        this.#found({ row: rows[i]!, id: null })
        continue
      }
      this.#kept.add(digest)
      kept.rows.push(rows[i]!)
      kept.books.push(book)
    }
    return kept
  }

  #found(duplicate: Duplicate): void {
    if (this.listed.length < LISTED_DUPLICATES) this.listed.push(duplicate)
  }
}
