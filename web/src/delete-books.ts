import { ApiError, type Api, type Book } from './api.ts'

/** Deletes at once, well within a browser's six connections to one host and the service's cap per client. */
const AT_ONCE = 4

export interface Deletion {
  /** The books that are gone, including those someone else had deleted already. */
  deleted: Book[]
  /** Why the deletion stopped before the end; the books not deleted are the caller's to offer again. */
  failure: unknown
}

/**
 * Deletes several books, one `DELETE /book/{id}` each, a few at a time. The first refusal (the
 * network, the store) stops it: what is not yet deleted is left as it was, not asked again and
 * again. `progress` hears how many are done.
 */
export async function deleteBooks(
  deleteBook: Api['deleteBook'],
  books: readonly Book[],
  progress: (done: number) => void,
): Promise<Deletion> {
  const deleted: Book[] = []
  let failure: unknown
  let next = 0
  async function worker() {
    while (failure === undefined && next < books.length) {
      const book = books[next++]!
      try {
        await deleteBook(book.id)
        deleted.push(book)
      } catch (err) {
        if (err instanceof ApiError && err.status === 404) deleted.push(book)
        else failure ??= err
      }
      progress(deleted.length)
    }
  }
  await Promise.all(Array.from({ length: Math.min(AT_ONCE, books.length) }, worker))
  return { deleted, failure }
}
