import type { Book } from 'book-catalogue-client'

/**
 * The books the person selected, in the order they were selected. They stay selected across
 * pages, sorts and searches, so that a list can be gathered from several searches; the bar
 * above the table always says how many there are.
 */
export interface Selection {
  has: (id: number) => boolean
  size: () => number
  books: () => Book[]
  /** Selects or deselects each of `books`. */
  set: (books: readonly Book[], selected: boolean) => void
  /** Keeps a selected book's values current after an edit. */
  replace: (book: Book) => void
  forget: (ids: ReadonlySet<number>) => void
  clear: () => void
}

export function createSelection(changed: () => void): Selection {
  const selected = new Map<number, Book>()
  return {
    has: (id) => selected.has(id),
    size: () => selected.size,
    books: () => [...selected.values()],
    set(books, on) {
      for (const book of books) {
        if (on) selected.set(book.id, book)
        else selected.delete(book.id)
      }
      changed()
    },
    replace(book) {
      if (selected.has(book.id)) selected.set(book.id, book)
    },
    forget(ids) {
      for (const id of ids) selected.delete(id)
      changed()
    },
    clear() {
      selected.clear()
      changed()
    },
  }
}
