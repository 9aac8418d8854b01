import type { Principal } from '../auth/principal.ts'
import type { DeleteResult, Repositories, Store, UpdateResult } from '../store/store.ts'
import type { BookChanges, NewBook, StoredBook } from './book.ts'
import type { Change, TrashedBook } from './change.ts'
import { DuplicateFinder, type Duplicate, type ImportBatch } from './duplicates.ts'
import { BookNotFound, InvalidInput, PreconditionFailed } from './errors.ts'

/** What an import stored: the new ids in row order, and the first duplicates it left out. */
export interface ImportedBooks {
  ids: number[]
  duplicates: Duplicate[]
}

/**
 * Something a write records in its own transaction, so that it commits exactly when the write
 * does: the answer a retry with the same `Idempotency-Key` is given, for one.
 */
export type Receipt<T> = (repositories: Repositories, result: T) => Promise<void>

function found(book: StoredBook | undefined): StoredBook {
  if (book === undefined) throw new BookNotFound()
  return book
}

function updated(result: UpdateResult): StoredBook {
  if (result.outcome === 'missing') throw new BookNotFound()
  if (result.outcome === 'stale') throw new PreconditionFailed()
  return result.book
}

function removed(outcome: DeleteResult): void {
  if (outcome === 'missing') throw new BookNotFound()
  if (outcome === 'stale') throw new PreconditionFailed()
}

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
  get(id: number): Promise<StoredBook> {
    // Not async: every read by id passes here, and an async function's state is one more object per request.
    return this.#store.books.get(id).then(found)
  }

  create({ actor }: Principal, book: NewBook, receipt?: Receipt<StoredBook>): Promise<StoredBook> {
    // Not async, as get: without a key, the store's own promise is the answer.
    if (receipt === undefined) return this.#store.books.create(actor, book)
    return this.#store.transaction(async (repositories) => {
      const created = await repositories.books.create(actor, book)
      await receipt(repositories, created)
      return created
    })
  }

  /**
   * Applies `changes` (the members given replace the stored ones), when the book exists and, with
   * `ifRevisions`, still has one of them: otherwise 404, or 412 with nothing changed. No change
   * at all answers the book as it is.
   */
  update({ actor }: Principal, id: number, changes: BookChanges, ifRevisions?: readonly number[]): Promise<StoredBook> {
    if (changes.title === undefined && changes.author === undefined && changes.year === undefined) return this.#unchanged(id, ifRevisions)
    // Not async, as get: the store's promise, checked by a function made once.
    return this.#store.books.update(actor, id, changes, ifRevisions).then(updated)
  }

  async #unchanged(id: number, ifRevisions: readonly number[] | undefined): Promise<StoredBook> {
    const book = await this.get(id)
    if (ifRevisions !== undefined && !ifRevisions.includes(book.revision)) throw new PreconditionFailed()
    return book
  }

  /** Moves the book to the trash, when it exists and, with `ifRevisions`, still has one of them: otherwise 404, or 412. */
  remove({ actor }: Principal, id: number, ifRevisions?: readonly number[]): Promise<void> {
    // Not async, as get: the store's promise, checked by a function made once.
    return this.#store.books.delete(actor, id, ifRevisions).then(removed)
  }

  /** Brings the book back from the trash, with its id; 404 when it is not there. */
  async restore({ actor }: Principal, id: number): Promise<StoredBook> {
    const book = await this.#store.books.restore(actor, id)
    if (book === undefined) throw new BookNotFound()
    return book
  }

  /**
   * Gives the book the values it had after its change `seq`, as an update: 404 when the book is
   * not stored, 400 when `seq` is not one of its changes, 412 as for an update.
   */
  async revert(principal: Principal, id: number, seq: number, ifRevisions?: readonly number[]): Promise<StoredBook> {
    await this.get(id)
    const change = await this.#store.changes.get(seq)
    if (change?.bookId !== id || change.book === null) throw new InvalidInput()
    const { title, author, year } = change.book
    return this.update(principal, id, { title, author, year }, ifRevisions)
  }

  /** Removes the book from the trash for good, with its history; 404 when it is not there. */
  async purge({ actor }: Principal, id: number): Promise<void> {
    if (!(await this.#store.books.purge(actor, id))) throw new BookNotFound()
  }

  /** The book's changes, newest first, before `before` when it is given; 404 for an id neither stored nor in the trash. */
  async history(id: number, before: number | undefined, limit: number): Promise<Change[]> {
    const changes = await this.#store.changes.ofBook(id, before, limit)
    if (changes === undefined) throw new BookNotFound()
    return changes
  }

  /**
   * The changes of every book after `seq`, oldest first, at most `limit`: read on from the last
   * one, they never skip nor repeat a change.
   */
  changesAfter(seq: number, limit: number): Promise<Change[]> {
    return this.#store.changes.after(seq, limit)
  }

  /** The seq of the newest change, 0 before the first. */
  newestChange(): Promise<number> {
    return this.#store.changes.latest()
  }

  /** The trash, latest deletion first, after the deletion `before` when it is given. */
  trash(before: number | undefined, limit: number): Promise<TrashedBook[]> {
    return this.#store.trash.list(before, limit)
  }

  /** Purges up to `limit` books deleted at or before `upTo`, the oldest first; answers how many were found. */
  async purgeExpired(principal: Principal, upTo: number, limit: number): Promise<number> {
    const ids = await this.#store.trash.expired(upTo, limit)
    // Another process may purge or restore one of them first: then it is simply not there.
    await Promise.all(
      ids.map((id) =>
        this.purge(principal, id).catch((err: unknown) => {
          if (!(err instanceof BookNotFound)) throw err
        }),
      ),
    )
    return ids.length
  }

  /**
   * Finds the rows of an import that repeat a stored book or an earlier row, outside any
   * transaction: what a dry run lists. Give it the rows in file order, then end it.
   */
  duplicatesOf(): DuplicateFinder {
    return new DuplicateFinder((books) => this.#store.books.sameAs(books))
  }

  /**
   * Whether an import's transaction may open before its file is read and checked (see
   * Store.storesWhileReading): the route then hands importBooks the file as it is read.
   */
  get storesWhileReading(): boolean {
    return this.#store.storesWhileReading
  }

  /**
   * Stores every book of the batches `read` gives, in order, all or none, with `receipt` in the
   * same transaction; answers their new ids. `read` is iterated once, inside the transaction, and
   * whatever it throws rolls the import back. With `skipDuplicates`, the rows that repeat a
   * stored book or an earlier row are left out, found a thousand rows at a time as they come.
   * The books go to the store as many at a time as it stores best, and one statement is stored
   * while the next is gathered, so that an engine working on another core is kept busy while
   * the file is read. `between` runs between batches, inside the transaction: an import lets
   * other requests through there.
   */
  importBooks(
    { actor }: Principal,
    read: AsyncIterable<ImportBatch>,
    { skipDuplicates }: { skipDuplicates: boolean },
    between: () => Promise<void>,
    receipt?: Receipt<ImportedBooks>,
  ): Promise<ImportedBooks> {
    return this.#store.transaction(async (repositories) => {
      const { books } = repositories
      const ids: number[] = []
      let storing: Promise<number[]> | undefined
      const settle = async () => {
        if (storing === undefined) return
        const stored = await storing
        storing = undefined
        ids.push(...stored)
      }
      const send = async (part: NewBook[]) => {
        await settle()
        storing = books.createMany(actor, part)
        // Awaited by the next settle; until then, a failure must not count as unhandled.
        storing.catch(() => {})
      }
      const duplicates =
        skipDuplicates &&
        new DuplicateFinder(async (wanted) => {
          // Only the books stored before this import's first: its own are earlier rows, which
          // the finder knows by their digests. Identities rise, so the first id is the smallest.
          await settle()
          return books.sameAs(wanted, ids[0])
        })
      const waiting: NewBook[] = []
      const gather = async (part: NewBook[]) => {
        waiting.push(...part)
        while (waiting.length >= books.importRows) await send(waiting.splice(0, books.importRows))
      }
      try {
        for await (const batch of read) {
          await gather(duplicates ? (await duplicates.add(batch)).books : batch.books)
          await between()
        }
        if (duplicates) await gather((await duplicates.end()).books)
        if (waiting.length > 0) await send(waiting)
        await settle()
      } finally {
        // On the way out by an error, the statement in flight ends before the transaction does.
        await storing?.catch(() => {})
      }
      const imported = { ids, duplicates: duplicates ? duplicates.listed : [] }
      await receipt?.(repositories, imported)
      return imported
    })
  }
}
