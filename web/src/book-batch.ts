import { ApiError, type Book } from 'book-catalogue-client'

/** Requests at once, well within a browser's six connections to one host and the service's cap per client. */
const AT_ONCE = 4

export interface Batch {
  /** The books done, including those someone else had done already (a 404: deleted, or restored, meanwhile). */
  done: Book[]
  /** Why the batch stopped before the end; the books not done are the caller's to offer again. */
  failure: unknown
}

/**
 * Does the same to several books, one request each (`DELETE /book/{id}`, `POST /book/{id}/restore`),
 * a few at a time. The first refusal (the network, the store) stops it: what is not yet done is
 * left as it was, not asked again and again. `progress` hears how many are done.
 */
export async function actOnBooks(
  act: (id: number) => Promise<unknown>,
  books: readonly Book[],
  progress: (done: number) => void,
): Promise<Batch> {
  const done: Book[] = []
  let failure: unknown
  let next = 0
  async function worker() {
    while (failure === undefined && next < books.length) {
      const book = books[next++]!
      try {
        await act(book.id)
        done.push(book)
      } catch (err) {
        if (err instanceof ApiError && err.status === 404) done.push(book)
        else failure ??= err
      }
      progress(done.length)
    }
  }
  await Promise.all(Array.from({ length: Math.min(AT_ONCE, books.length) }, worker))
  return { done, failure }
}
