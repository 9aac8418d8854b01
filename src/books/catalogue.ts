import type { Principal } from '../auth/principal.ts'
import type { Repositories, Store } from '../store/store.ts'
import type { BookChanges, NewBook, StoredBook } from './book.ts'
import { BookNotFound, PreconditionFailed } from './errors.ts'

/**
 * Something a write records in its own transaction, so that it commits exactly when the write
 * does: the answer a retry with the same `Idempotency-Key` is given, for one.
 */
export type Receipt<T> = (repositories: Repositories, result: T) => Promise<void>

/**
 * The one way books change. Every write takes the principal that asks for it, and runs as one
 * atomic step of the store: a repository's write, which the engines group with others into one
 * commit, or a transaction when it does more than one thing (records a receipt, stores an
 * import's batches). Nothing else writes books.
 */
export class Catalogue {
  readonly #store: Store

  constructor(store: Store) {
    this.#store = store
  }

  /** The book with that id, as stored, with its revision. */
  async get(id: number): Promise<StoredBook> {
    const book = await this.#store.books.get(id)
    if (book === undefined) throw new BookNotFound()
    return book
  }

  async create(_actor: Principal, book: NewBook, receipt?: Receipt<StoredBook>): Promise<StoredBook> {
    if (receipt === undefined) return this.#store.books.create(book)
    return this.#store.transaction(async (repositories) => {
      const created = await repositories.books.create(book)
      await receipt(repositories, created)
      return created
    })
  }

  /**
   * Applies `changes` (the members given replace the stored ones), when the book exists and, with
   * `ifRevisions`, still has one of them: otherwise 404, or 412 with nothing changed. No change
   * at all answers the book as it is.
   */
  async update(_actor: Principal, id: number, changes: BookChanges, ifRevisions?: readonly number[]): Promise<StoredBook> {
    if (changes.title === undefined && changes.author === undefined && changes.year === undefined) {
      const book = await this.get(id)
      if (ifRevisions !== undefined && !ifRevisions.includes(book.revision)) throw new PreconditionFailed()
      return book
    }
    const result = await this.#store.books.update(id, changes, ifRevisions)
    if (result.outcome === 'missing') throw new BookNotFound()
    if (result.outcome === 'stale') throw new PreconditionFailed()
    return result.book
  }

  async remove(_actor: Principal, id: number): Promise<void> {
    if (!(await this.#store.books.delete(id))) throw new BookNotFound()
  }

  /**
   * Stores every book of `batches`, in order, all or none, with `receipt` in the same transaction;
   * answers their new ids. `between` runs between batches, inside the transaction: an import
   * lets other requests through there.
   */
  importBooks(
    _actor: Principal,
    batches: AsyncIterable<NewBook[]>,
    between: () => Promise<void>,
    receipt?: Receipt<number[]>,
  ): Promise<number[]> {
    return this.#store.transaction(async (repositories) => {
      const ids: number[] = []
      for await (const batch of batches) {
        ids.push(...(await repositories.books.createMany(batch)))
        await between()
      }
      await receipt?.(repositories, ids)
      return ids
    })
  }
}
