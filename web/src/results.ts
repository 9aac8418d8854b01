import type { Book, Page } from 'book-catalogue-client'
import { firstPageUrl, type FindQuery } from './find-query.ts'

/** The most books the service answers at once (docs/api.md). */
export const LARGEST_REQUEST = 1000

/**
 * The books one query finds, in the service's order, read as far as the pages shown need. The
 * service pages by keyset: there is no "page 40", only the `rel="next"` link of each answer,
 * which keeps the `limit` of the first request. So the first request asks for what the page
 * shown needs, and each following page is one more request; a jump further than two such steps
 * (the last page, a page number, "select all") reads again from the start with the largest
 * requests, so that 10,000 books take 10 of them.
 */
export interface Results {
  readonly query: FindQuery
  /** The books read so far; a page is a slice of them. */
  books(): readonly Book[]
  /** Every match: the last `X-Total-Count` and the changes made here since (the books read, when no answer counted them). */
  total(): number
  /** True once every match is read. */
  complete(): boolean
  /** Reads until at least `count` books are held, or every match is. */
  ensure(count: number): Promise<void>
  /** A book added here, shown at `index` until the query is asked again. */
  insert(book: Book, index: number): void
  replace(book: Book): void
  forget(ids: ReadonlySet<number>): void
  /** Abandons the request under way: the person asked for something else. */
  close(): void
}

/** Books in order, with their ids: a book added here comes back from the service in its place, and is kept once. */
class BookList {
  books: Book[] = []
  readonly ids = new Set<number>()

  add(book: Book, index = this.books.length): boolean {
    if (this.ids.has(book.id)) return false
    this.ids.add(book.id)
    this.books.splice(index, 0, book)
    return true
  }
}

/** One page of books: of a query's address, or at the `next` link of a page before. */
export type FindBooks = (url: string, signal: AbortSignal) => Promise<Page<Book>>

export function createResults(findBooks: FindBooks, query: FindQuery, firstLimit: number): Results {
  const controller = new AbortController()
  let step = Math.min(Math.max(firstLimit, 1), LARGEST_REQUEST)
  let held = new BookList()
  /** A reading started again with larger requests, until it holds as much as `held`: the page shown stays meanwhile. */
  let refilling: BookList | undefined
  let next: string | undefined = firstPageUrl(query, step)
  let counted: number | undefined
  /** Books added (+) and deleted (-) here since the service last counted them. */
  let changed = 0
  /** Deleted here: an answer sent before the deletion may still hold them. */
  const forgotten = new Set<number>()
  let reading: Promise<void> | undefined
  const lists = () => (refilling ? [held, refilling] : [held])

  async function readNext(url: string): Promise<void> {
    const page = await findBooks(url, controller.signal)
    const into = refilling ?? held
    for (const book of page.items) if (!forgotten.has(book.id)) into.add(book)
    next = page.next
    if (page.total !== undefined) {
      counted = page.total
      changed = 0
    }
    if (refilling && (refilling.books.length >= held.books.length || next === undefined)) {
      held = refilling
      refilling = undefined
    }
  }

  return {
    query,
    books: () => held.books,
    total: () => (counted === undefined ? held.books.length : counted + changed),
    complete: () => next === undefined && refilling === undefined,
    async ensure(count) {
      while (held.books.length < count && next !== undefined) {
        if (reading) {
          await reading
          continue
        }
        if (step < LARGEST_REQUEST && count - held.books.length > 2 * step) {
          step = LARGEST_REQUEST
          refilling = new BookList()
          next = firstPageUrl(query, step)
        }
        reading = readNext(next).finally(() => {
          reading = undefined
        })
        await reading
      }
    },
    insert(book, index) {
      if (held.add(book, index)) changed += 1
      refilling?.add(book, Math.min(index, refilling.books.length))
    },
    replace(book) {
      for (const list of lists()) list.books = list.books.map((kept) => (kept.id === book.id ? book : kept))
    },
    forget(ids) {
      const before = held.books.length
      for (const id of ids) forgotten.add(id)
      for (const list of lists()) list.books = list.books.filter((book) => !ids.has(book.id))
      changed -= before - held.books.length
    },
    close() {
      controller.abort()
    },
  }
}
